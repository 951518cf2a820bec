"""Hindsight unreachable: every page still renders, says what is wrong, and shows no traceback."""

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import APP, free_port

VIEWS = sorted(p.name for p in (Path(APP).parent / "views").glob("*.py"))


@pytest.fixture
def offline_app(point_app, tmp_path) -> AppTest:
    point_app({"RECALL_REVIEW_DATA_DIR": str(tmp_path), "RECALL_REVIEW_API_PORT": str(free_port())})
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception, at.exception
    assert any("unreachable" in w.value for w in at.warning)
    return at


def test_every_page_is_listed():
    assert {"home.py", "exceptions.py", "tickets.py", "migration.py", "traces.py", "audit.py"} <= set(VIEWS)


@pytest.mark.parametrize("view", VIEWS)
def test_page_renders_without_hindsight(offline_app, view):
    at = offline_app.switch_page(f"views/{view}").run()
    assert not at.exception, at.exception
    shown = " ".join(e.value for e in [*at.error, *at.warning, *at.info])
    if view not in ("audit.py",):  # the audit log needs no server
        assert "127.0.0.1" in shown or "unreachable" in shown or "Run a query" in shown, (view, shown)
