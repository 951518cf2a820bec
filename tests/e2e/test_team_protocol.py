"""bench-team's protocol client drives the real app through Streamlit's agent API (`/_stcore/agent/interact`) as the
keys do in the browser: two reviewers walk the demo queue at once, every key lands (moves, or says why it could not),
and the review store holds exactly the accepts the answered pages confirmed, each by its reviewer on its case."""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor

import pytest

from benches.team import ACCEPT_EVERY, _agent_reviewer, _cell, _check_decisions
from dashboard import demo_data
from dashboard.finance import queue as exception_queue
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import load_rows

KEYS = 2 * ACCEPT_EVERY  # two accepts each


@pytest.fixture
def app_env() -> dict[str, str]:
    return {"STREAMLIT_SERVER_ENABLE_AGENT_API": "true"}


def test_two_reviewers_through_the_agent_api_land_every_key_and_the_store_holds_each_confirmed_accept(app):
    order = [c.id for c in exception_queue.select(load_rows(demo_data.EXCEPTIONS, ExceptionCase), {})]
    reviewer = functools.partial(_agent_reviewer, app.url)
    with ThreadPoolExecutor(1) as thread:  # a loop of its own: the browser tests' Playwright runs one in this thread
        presses = thread.submit(asyncio.run, _cell(reviewer, order, order[-1], 2, KEYS, None, shared=True)).result()
    assert len(presses) == 2 * KEYS
    assert [p for p in presses if p.seconds is None] == []  # no key lost
    accepts = [p for p in presses if p.key == "A"]
    assert (
        len(accepts) == 4
        and {p.how for p in accepts} <= {"moved", "refused"}
        and any(p.how == "moved" for p in accepts)
    )
    assert all(p.how == "moved" and p.after != p.case for p in presses if p.key == "J")
    decided, verdict = _check_decisions(app.data_dir, app.finance_bank, presses)
    assert verdict.startswith("the ") and "MISMATCH" not in verdict, verdict
    assert sorted(decided) == sorted({p.case for p in accepts if p.how == "moved"})
