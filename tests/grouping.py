"""How the suite is split between workers (scripts/test: -n 2 --dist loadgroup): one test file per worker, as
--dist loadfile would, except that every file with a test on the extracting server goes to one worker, so the
other never starts that server or seeds its demo (~100 s). A plugin of its own, with no project imports, so
tests/basics/test_suite_grouping.py can run it in a small pytest session of its own (`--noconftest -p tests.grouping`)."""

from __future__ import annotations

import pytest

EXTRACTING_FIXTURES = {"live", "hindsight_llm"}


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    extracting = {item.path for item in items if EXTRACTING_FIXTURES & set(getattr(item, "fixturenames", ()))}
    for item in items:
        item.add_marker(pytest.mark.xdist_group("extracting" if item.path in extracting else str(item.path)))
