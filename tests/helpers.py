"""Helpers shared by several test files that are not fixtures (those live in conftest.py): starting the
app in AppTest and reading its text, the demo queues, exception cases, and decisions recorded the way
the pages record them."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime
from types import SimpleNamespace

from streamlit.testing.v1 import AppTest

from dashboard import demo_data
from dashboard.delivery.outbox import Outbox
from dashboard.finance import decisions as finance_decisions
from dashboard.finance.decisions import exception_decision, precedent_record
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.hindsight.wire import MemoryRecord
from dashboard.queue_files import load_rows
from dashboard.review.decisions import Proposal
from dashboard.store.decision import ReviewerDecision
from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.models import Ticket
from tests.conftest import APP


def auth_section(provider) -> dict:
    """The [auth] section for AppTest (`at.secrets["auth"] = ...`) against the session's real provider (`oidc`): the
    app reads its issuer from it. AppTest's `at.user` then stands for the session cookie (`id_claims`)."""
    return {
        "redirect_uri": "http://127.0.0.1:8501/oauth2callback",
        "cookie_secret": "test",
        "client_id": "recall-review",
        "client_secret": "y",
        "server_metadata_url": provider.metadata_url,
    }


def id_claims(
    provider, name: str, *, sub: str | None = None, email: str | None = None, groups: list[str] = (), **changed
) -> dict:
    """What a session holds after signing in at `provider` (the ID token's claims, as st.user gives them)."""
    now = int(time.time())
    return {
        "is_logged_in": True,
        "iss": provider.issuer,
        "aud": "recall-review",
        "sub": sub or f"sub-{name.lower()[:20]}",
        "name": name,
        "email": email,
        "groups": list(groups),
        "iat": now,
        "exp": now + 3600,
        **changed,
    }


DEMO_CASES = load_rows(demo_data.EXCEPTIONS, ExceptionCase)
DEMO_TICKETS = load_rows(demo_data.TICKETS, Ticket)


def demo_case(case_id: str) -> ExceptionCase:
    return next(c for c in DEMO_CASES if c.id == case_id)


def demo_ticket(ticket_id: str) -> Ticket:
    return next(t for t in DEMO_TICKETS if t.id == ticket_id)


QUEUE_PANEL = "exception_queue_open"  # the Exceptions page's queue panel: open, its table and bulk approval are drawn
QUEUE_OPEN = {QUEUE_PANEL: True}
TICKET_QUEUE_OPEN = {"ticket_queue_open": True}  # the Tickets page's queue panel, open
RECALL_DETAILS_OPEN = {
    "recall_details_open": True
}  # the Exceptions page's "How this was recalled", open (drawn only then)


def open_page(
    page: str | None = None, timeout: float = 60, *, state: dict | None = None, **query_params: str
) -> AppTest:
    """The app in AppTest, switched to `page` (a file page such as "views/overview.py"), with no exception.
    `state`: session state set before the page's first run (e.g. a panel open: AppTest cannot click an expander)."""
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    assert not at.exception, at.exception
    if page is not None:
        at.switch_page(page)
        for key, value in (state or {}).items():
            at.session_state[key] = value
        for name, value in query_params.items():
            at.query_params[name] = value
        at.run()
        assert not at.exception, at.exception
    return at


def texts(at: AppTest) -> str:
    """Every text-like element the page shows, one per line."""
    kinds = (
        at.title,
        at.header,
        at.subheader,
        at.caption,
        at.text,
        at.markdown,
        at.success,
        at.info,
        at.warning,
        at.error,
    )
    return "\n".join(str(e.value) for kind in kinds for e in kind)


def record_cards(at: AppTest) -> list[tuple[str, str, str]]:
    """The record cards of a ticket's page, in page order: (id, status, why). A card's first text is
    "<id>\n<status>", then come "Tags: ..." (evidence) and "Why: ..."."""
    values = [t.value for t in at.text]
    cards = []
    for i, value in enumerate(values[:-1]):
        lines = value.split("\n")
        if len(lines) == 2 and values[i + 1].startswith(("Tags: ", "Why: ")):
            why = next(v for v in values[i + 1 :] if v.startswith("Why: "))
            cards.append((lines[0], lines[1], why.removeprefix("Why: ")))
    return cards


def exception_case(
    case_id: str, vendor: str, etype: str = "price_variance", description: str = "Brackets billed above the PO price."
) -> ExceptionCase:
    return ExceptionCase(
        id=case_id,
        vendor_code=vendor,
        vendor_name=f"Vendor {vendor}",
        exception_type=etype,
        invoice="INV-1",
        po="PO-1",
        invoice_amount=110.0,
        po_amount=100.0,
        description=description,
        opened_on=date(2026, 1, 5),
    )


def record_exception_decision(
    outbox: Outbox,
    bank: str,
    case: ExceptionCase,
    rec: Recommendation,
    *,
    override: bool = False,
    when: datetime | None = None,
    reason: str = "PRICE_AGREED",
    reviewer: str = "Dana",
) -> int:
    """Record (not deliver) a reviewer's decision on `case` as the Exceptions page does; returns its audit id."""
    when = when or datetime.now(UTC)
    decision = exception_decision(
        case,
        rec,
        reviewer=reviewer,
        authenticated=False,
        action="override" if override else "accept_recommendation",
        outcome=("approve" if rec.action != "approve" else "reject") if override else None,
        reason_code=reason if override else None,
        note="n",
        now=lambda: when,
    )
    return outbox.record(bank, decision, precedent_record(case, decision, rec))


def record_ticket_decision(
    outbox: Outbox, bank: str, ticket: Ticket, *, reviewer: str = "Ada", when: datetime | None = None
) -> int:
    """Record (not deliver) an approval of the ticket's drafted response as the Tickets page does."""
    decision = ticket_decision(
        ticket, action="approve", reviewer=reviewer, authenticated=False, decided_at=when or datetime.now(UTC)
    )
    return outbox.record(bank, decision, interaction_record(ticket, decision))


def run_cli(hindsight, *args: str, **banks: str) -> subprocess.CompletedProcess:
    """`python -m dashboard ARGS` in a subprocess pointed at the test server (and the given banks)."""
    env = {**os.environ, **hindsight.env(**banks)}
    env.pop("HINDSIGHT_API_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "dashboard", *args], capture_output=True, text=True, env=env, timeout=120, check=False
    )


def bank_ids(gateway) -> list[str]:
    """Every bank the server holds (GET /v1/default/banks): the A/B tests check their clones are gone."""
    with urllib.request.urlopen(f"{gateway.base_url}/v1/default/banks", timeout=10) as resp:
        return [bank["bank_id"] for bank in json.loads(resp.read()).get("banks", [])]


def run_command(
    monkeypatch,
    capsys,
    hindsight,
    finance_bank: str,
    *argv: str,
    env: dict[str, str] | None = None,
    bench: bool = False,
) -> tuple[int, str, str]:
    """`python -m dashboard *argv` (`python -m benches *argv` with `bench`) in this process, pointed at the test
    server and `finance_bank` (plus `env`): (exit code, stdout, stderr)."""
    if bench:
        from benches.registry import main
    else:
        from dashboard.cli import main

    for key, value in {**hindsight.env(finance=finance_bank), **(env or {})}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def numbered_decision(i: int) -> tuple[ReviewerDecision, MemoryRecord]:
    """Decision number `i` (case E-000i, a reject override) and the memory it is retained as."""
    decision = ReviewerDecision(
        case_id=f"E-{i:04d}",
        case_kind="exception",
        reviewer="Dana Reviewer",
        authenticated=False,
        outcome="reject",
        overridden=True,
        reason_code="OTHER",
        decided_at=datetime.now(UTC),
    )
    memory = MemoryRecord(
        document_id=f"decision-E-{i:04d}",
        content=f"Vendor V{i:02d} price variance on case E-{i:04d}. Decision: reject.",
        tags=[f"vendor:V{i:02d}", "type:price_variance", "kind:decision"],
    )
    return decision, memory


def select_row(at: AppTest, table_key: str, column: str, value: str) -> AppTest:
    """Select the row of the AppTest table `table_key` whose `column` is `value`, and run."""
    frame = at.dataframe(key=table_key).value
    row = int(frame.index[frame[column] == value][0])
    at.session_state[table_key] = {"selection": {"rows": [row], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    return at


def exception_proposal(
    case: ExceptionCase, rec: Recommendation, reviewer: str, outcome: str | None = None, note: str = ""
) -> Proposal:
    """A reviewer's decision on `case` as the Exceptions page proposes it: the recommendation approved, or (another
    `outcome`) overridden with a reason code."""
    action = "accept_recommendation" if outcome in (None, rec.action) else "override"
    decision = exception_decision(
        case,
        rec,
        reviewer=reviewer,
        authenticated=False,
        action=action,
        outcome=outcome,
        reason_code="CONTRACT_AMENDMENT" if action == "override" else None,
        note=note,
    )
    return finance_decisions.exception_proposal(case, decision, rec, None, base_revision=0)


def someone_waits_in_flight(monkeypatch) -> threading.Event:
    """The recall cache's in-flight marks, watched: the returned event is set once anyone waits on one (a page
    or a reader waiting for a computation already on the wire), so a test can hold the computation until then."""
    from dashboard.app import recall_cache

    waits = threading.Event()

    class Watched(threading.Event):
        def wait(self, timeout=None):
            waits.set()
            return super().wait(timeout)

    monkeypatch.setattr(recall_cache, "threading", SimpleNamespace(Lock=threading.Lock, Event=Watched))
    return waits


def plain_decision(case_id: str = "E-1", outcome: str = "approve", reviewer: str = "Dana") -> ReviewerDecision:
    """An exception decision with nothing but its outcome (anything but approve overrides the agent): what a test of
    the store writes and reads back."""
    return ReviewerDecision(
        case_id=case_id,
        case_kind="exception",
        reviewer=reviewer,
        authenticated=False,
        outcome=outcome,
        overridden=outcome != "approve",
        decided_at=datetime.now(UTC),
    )


def recalled_proposal(
    hindsight, bank: str, case: ExceptionCase, reviewer: str, outcome: str | None = None, note: str = ""
) -> Proposal:
    """A reviewer's decision on `case` as its page proposes it, on the recommendation a real recall of `bank` gives."""
    from dashboard.finance.policy import assess
    from dashboard.finance.recall import CaseKey, two_stage_recall
    from tests.conftest import PROVEN  # the suite's deployment key: what the page checks a record's origin with

    _, rec = assess(
        two_stage_recall(
            hindsight.gateway.recall,
            bank,
            CaseKey.of(case),
            case.recall_query(),
            own_document=finance_decisions.document_id_for(case.id),
        ),
        PROVEN,
    )
    return exception_proposal(case, rec, reviewer, outcome, note)


def scratch_databases(port: int, prefix: str) -> list[str]:
    """The PostgreSQL databases named `prefix*` on the test server's port (what a bench made and must drop)."""
    import psycopg

    from dashboard.hindsight.embedded import PG_PASSWORD, PG_USER

    with psycopg.connect(f"postgresql://{PG_USER}:{PG_PASSWORD}@127.0.0.1:{port}/postgres") as conn:
        return [
            name for (name,) in conn.execute("SELECT datname FROM pg_database WHERE datname LIKE %s", (f"{prefix}%",))
        ]


def service_on(store, retain=None, **options):
    """A decision service on a scratch review store: a directory (a SQLite file in it), or an engine (`options`: the
    decision_service's, e.g. limits, second_review_share)."""
    from pathlib import Path

    from dashboard.review.decisions import decision_service

    return decision_service(Outbox(store / "store.sqlite3" if isinstance(store, Path) else store), retain, **options)


def built_in_overview(cases, tickets, **section_inputs) -> dict:
    """Everything the Overview's metrics take of the two built-in kinds (a finance and a support queue), as the page
    arranges it (app/overview_inputs.py)."""
    from dashboard.app.overview_inputs import queues_of, sections
    from dashboard.finance.kind import FINANCE
    from dashboard.support.kind import SUPPORT

    return {
        **queues_of([FINANCE, SUPPORT], {FINANCE.name: cases, SUPPORT.name: tickets}),
        **sections(cases, tickets, **section_inputs),
    }


def run_coroutine(coroutine):
    """asyncio.run on a thread of its own: a worker that ran a browser test has Playwright's loop running in this one."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


def start_on_every_interface(env: dict[str, str]) -> subprocess.CompletedProcess:
    """`streamlit run dashboard/app/streamlit_app.py` on 0.0.0.0, as a person would start it; a start that served
    would be killed by the timeout and fail the test that expects a refusal."""
    from dashboard.cli.app_server import REPO

    app = "dashboard/app/streamlit_app.py"
    flags = ["--server.headless", "true", "--server.address", "0.0.0.0", "--server.port", "0"]
    return subprocess.run(
        [sys.executable, "-m", "streamlit", "run", app, *flags],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
