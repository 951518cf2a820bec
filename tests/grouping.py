"""How the suite is split between workers (scripts/test: -n 2 --dist loadgroup): one test file per worker, as
--dist loadfile would, except that every file with a test on the extracting server goes to one worker, so the
other never starts that server or seeds its demo (~100 s). A plugin of its own, with no project imports, so
tests/basics/test_suite_grouping.py can run it in a small pytest session of its own (`--noconftest -p tests.grouping`).

The longest group first. pytest-xdist hands out the groups by their number of tests, most first, and a file's number
of tests says little of its time: 215 checks of one file take 3 s, a browser file of one test a minute. So the one-test
browser files (30-50 s each) went out last, and one worker could still be in one while the other had nothing left: the
run lasts as long as its slower worker. Here the groups go out by their measured seconds (tests/file_seconds.json),
longest first, so what is left at the end is short files and the two workers end within seconds of each other. A file
not measured yet is counted as its number of tests times an estimate (a browser test's more). To measure them again:
`RECALL_REVIEW_FILE_SECONDS=tests/file_seconds.json bash scripts/test` writes each file's seconds at the end."""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from pathlib import Path

import pytest

EXTRACTING_FIXTURES = {"live", "hindsight_llm"}
MEASURED = Path(__file__).resolve().with_name("file_seconds.json")
RECORD_TO = "RECALL_REVIEW_FILE_SECONDS"  # a path: write each file's measured seconds there at the end of the run
UNMEASURED_S = {"browser": 30.0, "other": 3.0}  # a file not in MEASURED: seconds per test


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    extracting = {item.path for item in items if EXTRACTING_FIXTURES & set(getattr(item, "fixturenames", ()))}
    for item in items:
        item.add_marker(pytest.mark.xdist_group("extracting" if item.path in extracting else str(item.path)))


def file_of(nodeid: str) -> str:
    """A node id's test file as named from the repository's root ("tests/app/test_x.py"), whatever the directory the
    run started in and whatever group suffix xdist added."""
    path = nodeid.split("::", 1)[0].split("@", 1)[0]
    return path[path.rindex("tests/") :] if "tests/" in path else path


def expected_seconds(nodeids: list[str], measured: dict[str, float]) -> float:
    """A group's expected seconds: each of its files as measured, else its number of tests times an estimate."""
    tests: dict[str, int] = {}
    for nodeid in nodeids:
        tests[file_of(nodeid)] = tests.get(file_of(nodeid), 0) + 1
    return sum(
        measured.get(name, n * UNMEASURED_S["browser" if "/e2e/" in name else "other"]) for name, n in tests.items()
    )


def longest_first(workqueue: dict[str, dict[str, bool]], measured: dict[str, float]) -> OrderedDict:
    """The groups of xdist's work queue (group -> its tests), those expected to take longest first."""
    return OrderedDict(sorted(workqueue.items(), key=lambda group: -expected_seconds(list(group[1]), measured)))


@pytest.hookimpl(optionalhook=True, tryfirst=True)  # pytest-xdist's hook: unknown without it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class LongestGroupFirst(LoadGroupScheduling):
        """--dist loadgroup, its work queue in order of each group's expected seconds instead of its number of tests."""

        ordered = False

        def _assign_work_unit(self, node):
            if not self.ordered:  # the first assignment: schedule() has just filled the whole queue
                measured = json.loads(MEASURED.read_text()) if MEASURED.exists() else {}
                self.workqueue = longest_first(self.workqueue, measured)
                self.ordered = True
            super()._assign_work_unit(node)

    return LongestGroupFirst(config, log)


_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get(RECORD_TO):
        _seconds[file_of(report.nodeid)] = _seconds.get(file_of(report.nodeid), 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    """With RECALL_REVIEW_FILE_SECONDS set: each file's seconds (setup, call and teardown of its tests), written by the
    controller (it hears every worker's reports) or by a run without workers."""
    path = os.environ.get(RECORD_TO)
    if path and _seconds and not hasattr(session.config, "workerinput"):
        Path(path).write_text(json.dumps({name: round(s, 1) for name, s in sorted(_seconds.items())}, indent=1) + "\n")
