"""Two dashboard instances on one PostgreSQL review store and one Hindsight: a decision made on one is in the
other's evidence at its next case open, not when a cache entry expires (review.freshness)."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from dashboard import demo_data
from tests.conftest import review_database
from tests.e2e.conftest import VIEWPORT, click_button, heading, serve_app, settled
from tests.warm_app import start_warmed

pytestmark = pytest.mark.browser
SIBLING = "E-1902"  # a second V02 price variance: E-1002's decision is its exact precedent


@pytest.fixture
def queue_file(tmp_path: Path) -> Path:
    """The demo queue plus a second Acme Fasteners price variance."""
    rows = demo_data.EXCEPTIONS.read_text().splitlines()
    e1002 = next(r for r in rows if r.startswith("E-1002,"))
    path = tmp_path / "exceptions.csv"
    path.write_text("\n".join([*rows, e1002.replace("E-1002,", f"{SIBLING},", 1).replace("INV-9101", "INV-9901")]) + "\n")
    return path


def test_a_decision_on_one_instance_is_in_the_others_evidence_at_its_next_case_open(hindsight, demo_banks, queue_file, browser: Browser):
    with review_database(hindsight.settings) as store_url:
        env = {k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"}
        env.update(hindsight.env(finance=demo_banks.finance, support=demo_banks.support))
        env.update(RECALL_REVIEW_DATABASE_URL=store_url, RECALL_REVIEW_EXCEPTIONS_FILE=str(queue_file))
        dirs = [Path(tempfile.mkdtemp(prefix="recall-review-instance-")) for _ in range(2)]
        try:
            with serve_app(env, dirs[0], start=start_warmed) as first_url, serve_app(env, dirs[1], start=start_warmed) as second_url:
                first, second = (browser.new_context(viewport=VIEWPORT).new_page() for _ in range(2))
                evidence = second.locator(".st-key-case_evidence")
                second.goto(f"{second_url}/exceptions?case={SIBLING}")  # instance 2 recalls (and caches) the sibling
                expect(evidence).to_contain_text("Exact: this vendor AND this type (2)")
                settled(second)

                first.goto(f"{first_url}/exceptions?case=E-1002")  # instance 1 decides E-1002
                expect(heading(first, "E-1002:")).to_be_visible()
                first.locator('input[aria-label="Reviewer name"]').fill("Ivy Instance")
                first.locator('input[aria-label="Reviewer name"]').press("Tab")
                settled(first)
                click_button(first, "Record decision")
                expect(first.get_by_text(re.compile(r"E-1002 recorded: \w+ \(decision #\d+\), saved to the agents' memory"))).to_be_visible()

                second.goto(f"{second_url}/exceptions?case=E-1001")  # away, and back: the next open of the sibling
                expect(heading(second, "E-1001:")).to_be_visible()
                second.goto(f"{second_url}/exceptions?case={SIBLING}")
                expect(evidence).to_contain_text("Exact: this vendor AND this type (3)")
                expect(evidence).to_contain_text("decision-E-1002")
                expect(evidence).to_contain_text("by reviewer Ivy Instance")
        finally:
            for data_dir in dirs:
                shutil.rmtree(data_dir, ignore_errors=True)
