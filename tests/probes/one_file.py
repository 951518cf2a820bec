"""Run by tests/basics/test_suite_grouping.py under `-n 2 --dist loadgroup`: each test notes the worker it ran on."""

import os
from pathlib import Path

import pytest


@pytest.mark.parametrize("n", range(6))
def test_notes_its_worker(n):
    Path(os.environ["RECALL_REVIEW_PROBE_DIR"], str(n)).write_text(os.environ.get("PYTEST_XDIST_WORKER", "none"))
