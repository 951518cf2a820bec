"""A review team in a real browser: deciding while Hindsight is down, a hostile reviewer name seen by
another viewer, a trace link to a bank this dashboard is not configured for, and roles enforced.

Each test starts its own app process (a warmed fork; the `app` fixture is shared with other files), on a
free loopback port, and stops it by its process group."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import sqlalchemy as sa
from playwright.sync_api import Browser, Page, expect

from dashboard.processes import free_port
from dashboard.store.db import make_engine
from tests.e2e.conftest import click_button, serve_app, settled
from tests.warm_app import start_warmed

pytestmark = pytest.mark.browser
HOSTILE_NAME = "![x](http://127.0.0.1:9/p.png) <b>x</b> [y](javascript:alert(1))"


@contextmanager
def serve(**env_overrides: str) -> Iterator[tuple[str, Path]]:
    """A fresh app process (cold caches, its own review store); yields (url, data_dir)."""
    data_dir = Path(tempfile.mkdtemp(prefix="recall-review-team-e2e-"))  # its own review store
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RECALL_REVIEW_", "HINDSIGHT_"))}
    env.update(env_overrides)
    try:
        with serve_app(env, data_dir, start=start_warmed) as url:
            yield url, data_dir
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)


def hindsight_down() -> dict[str, str]:
    """A Hindsight that is not running: nothing listens on this loopback port."""
    return {"HINDSIGHT_API_URL": f"http://127.0.0.1:{free_port()}"}


def _stored(data_dir: Path) -> list[dict]:
    engine = make_engine(None, data_dir)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT case_id, reviewer, state, evidence FROM review_decisions ORDER BY id"))
            return [dict(row._mapping) for row in rows]
    finally:
        engine.dispose()


def _decide(page: Page, url: str, case: str, reviewer: str) -> None:
    page.goto(f"{url}/exceptions?case={case}")
    expect(page.get_by_text("Evidence is unavailable")).to_be_visible()
    page.locator('input[aria-label="Reviewer name"]').fill(reviewer)
    page.locator('input[aria-label="Reviewer name"]').press("Tab")
    settled(page)
    click_button(page, "Record decision")
    expect(
        page.get_by_text(
            re.compile(r"recorded: \w+ \(decision #\d+\); it is saved to the agents' memory when Hindsight answers")
        )
    ).to_be_visible()


def test_with_hindsight_down_and_an_empty_cache_a_finance_decision_is_recorded(page: Page, shots):
    with serve(**hindsight_down()) as (url, data_dir):
        _decide(page, url, "E-1002", "Dana Offline")
        expect(page.get_by_text("is unreachable: recalls and traces cannot load")).to_be_visible()  # the banner
        expect(page.get_by_text("1 decision(s) saved and waiting for delivery")).to_be_visible()
        shots(page, "team-decide-offline")
        (row,) = _stored(data_dir)
        assert (row["case_id"], row["reviewer"], row["state"]) == ("E-1002", "Dana Offline", "pending")
        assert '"available": false' in str(row["evidence"]).replace("False", "false").replace("'", '"')


def test_a_hostile_reviewer_name_is_literal_text_for_another_viewer(browser: Browser, page: Page):
    with serve(**hindsight_down()) as (url, _data_dir):
        _decide(page, url, "E-1003", HOSTILE_NAME)
        other = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        requested: list[str] = []
        other.on("request", lambda request: requested.append(request.url))
        other.goto(f"{url}/exceptions?case=E-1003")
        decided = other.get_by_test_id("stAlert").filter(has_text="Decided:")
        expect(decided).to_contain_text(HOSTILE_NAME)  # exactly as typed
        settled(other)
        assert decided.locator("img").count() == 0 and decided.locator("b").count() == 0
        assert other.locator("a[href^='javascript']").count() == 0
        assert not [u for u in requested if "127.0.0.1:9/" in u], requested
        other.context.close()


def test_a_trace_link_to_an_unconfigured_bank_shows_nothing_of_it(page: Page):
    with serve(**hindsight_down()) as (url, _data_dir):
        page.goto(f"{url}/traces?bank=hr-private-salaries&q=salary&max_tokens=4096")
        expect(page.get_by_text("names a bank this dashboard is not configured for")).to_be_visible()
        settled(page)
        body = page.inner_text("body")
        assert "hr-private-salaries" not in body and "salary" not in body
        assert page.get_by_role("button", name="Run this recall with a trace").count() == 0


def test_a_viewer_cannot_decide(page: Page):
    with serve(RECALL_REVIEW_ROLE="viewer", **hindsight_down()) as (url, data_dir):
        page.goto(f"{url}/exceptions?case=E-1002")
        expect(page.get_by_text("Your role (viewer) can read this case but not decide it.")).to_be_visible()
        expect(
            page.get_by_text("Sign-in is off (one-person mode, served on this machine only): everyone acts as viewer")
        ).to_be_visible()
        assert page.get_by_role("button", name="Record decision").count() == 0
        page.keyboard.press("a")  # the accept shortcut records nothing either
        settled(page)
        assert _stored(data_dir) == []


def test_a_reviewer_cannot_apply_the_migration(hindsight, page: Page):
    hindsight.gateway.ensure_bank("team-e2e-sup")
    with serve(RECALL_REVIEW_ROLE="reviewer", **hindsight.env(finance="team-e2e-fin", support="team-e2e-sup")) as (
        url,
        _d,
    ):
        page.goto(f"{url}/migration")
        expect(page.get_by_text("migrating needs the lead role")).to_be_visible()
        assert page.get_by_role("button", name="Apply migration").count() == 0
