"""The suite runs one test file per worker (scripts/test: --dist loadgroup and tests/grouping.py), so a file's
module fixtures and the extracting server are set up once. pytest 9.2 broke this silently with pytest-xdist 3.8
(every test became its own work unit, and both workers started the extracting server): this catches it."""

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_suite_groups_with_the_grouping_plugin(pytestconfig):
    assert pytestconfig.pluginmanager.has_plugin("tests.grouping")  # registered by tests/conftest.py


def test_the_tests_of_one_file_run_on_one_worker(tmp_path):
    # The grouping plugin alone (not the suite's conftest and its imports): the same hook, in a session of seconds.
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-p",
        "tests.grouping",
        "-n",
        "2",
        "--dist",
        "loadgroup",
        str(REPO / "tests" / "probes" / "one_file.py"),
    ]
    done = subprocess.run(
        argv,
        cwd=REPO,
        env={**os.environ, "RECALL_REVIEW_PROBE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:]
    workers = {note.name: note.read_text() for note in tmp_path.iterdir()}
    assert sorted(workers) == [str(n) for n in range(6)]
    assert len(set(workers.values())) == 1 and set(workers.values()) <= {"gw0", "gw1"}, workers


def test_the_groups_go_out_longest_first_by_measured_seconds():
    from tests.grouping import expected_seconds, longest_first

    queue = {
        "tests/app/test_many.py": {f"tests/app/test_many.py::t{i}": False for i in range(200)},
        "tests/e2e/test_one.py": {"tests/e2e/test_one.py::t": False},
        "tests/app/test_new.py": {"tests/app/test_new.py::t1": False, "tests/app/test_new.py::t2": False},
    }
    measured = {"tests/app/test_many.py": 10.0, "tests/e2e/test_one.py": 60.0}
    assert list(longest_first(queue, measured)) == [
        "tests/e2e/test_one.py",
        "tests/app/test_many.py",
        "tests/app/test_new.py",
    ]
    # not measured: its tests times the estimate (a browser file's more)
    assert expected_seconds(["/ci/clone/tests/e2e/test_x.py::a@e2e"], {}) == 30.0
