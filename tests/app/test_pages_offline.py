"""Hindsight unreachable: every page still renders, names the configured URL in the banner, says what
it cannot do, and shows no traceback."""

import os
from pathlib import Path

import pytest

from components.safe_text import md
from dashboard.finance.kind import FINANCE
from dashboard.processes import free_port
from dashboard.support.kind import SUPPORT
from tests.conftest import APP
from tests.helpers import DEMO_CASES, QUEUE_OPEN, open_page, texts

HERE = Path(APP).parent
KIND_PAGES = [kind.page for kind in (FINANCE, SUPPORT)] + [page.script for page in SUPPORT.more_pages]
# Every page the navigation lists: the shared ones, and each built-in kind's, which live in the kind's package.
PAGES = sorted(f"views/{p.name}" for p in (HERE / "views").glob("*.py") if p.name != "__init__.py") + [
    os.path.relpath(page, HERE) for page in KIND_PAGES
]
BANNER = (
    "Hindsight at {url} is unreachable: recalls and traces cannot load. Queues, decisions and the audit log "
    "still work: a decision is saved in the review store and delivered when Hindsight is back."
)
# What each page itself says (or still does) without a server, beside the banner.
OWN_MESSAGE = {
    "home.py": "Hindsight at {url} (embedded, started by this project) is not reachable.",
    "migration.py": "Hindsight at {url} could not be read.",
    "overview.py": "Coverage unavailable: Hindsight is not reachable.",
    "tickets.py": (
        "Evidence is unavailable: the recall from Hindsight at {url} failed. You can still record a decision; it is "
        "saved in the review store and delivered when Hindsight is back."
    ),  # the first open ticket, decidable
    "traces.py": "Run a query above, or open a trace from a recall on another page.",
    "audit.py": "No decisions recorded yet.",
    "incidents.py": "0 case(s) with incidents (0 incident(s)).",
    "exceptions.py": None,  # its queue still loads from the file: checked below
    "glossary.py": "The technical words some pages show, each in plain words.",  # it reads no server
}


@pytest.fixture
def offline_url(point_app, tmp_path) -> str:
    port = free_port()  # nothing listens there
    point_app({"RECALL_REVIEW_DATA_DIR": str(tmp_path), "RECALL_REVIEW_API_PORT": str(port)})
    return f"http://127.0.0.1:{port}"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: Path(page).name)
def test_page_renders_without_hindsight(offline_url, page):
    view = Path(page).name
    at = open_page(page, state=QUEUE_OPEN if view == "exceptions.py" else None)  # fails on an uncaught exception
    banners = [w.value for w in at.warning if "unreachable" in w.value]
    assert banners == [BANNER.format(url=md(offline_url))], banners  # the URL escaped for markdown
    shown = texts(at)
    assert "Traceback" not in shown and 'File "' not in shown
    message = OWN_MESSAGE[view]  # a new page says here what it shows without a server
    if message is not None:
        assert message.format(url=md(offline_url)) in shown, shown  # a URL in an alert is escaped for markdown
    if view == "exceptions.py":
        assert list(at.dataframe(key="exception_queue").value["case"]) == [c.id for c in DEMO_CASES]
    if view == "overview.py":
        assert at.button(key="overview_recall_all").disabled
