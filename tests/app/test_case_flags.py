"""Per-case flags on the real server, on both review-store engines: written when a case is recalled (the
Exceptions page's queue load, a ticket opened, the incident check), and shown by a NEW app session after a
restart without any recall (Hindsight unreachable); the demo seed writes them for every case."""

import streamlit as st

from dashboard.agents.findings import find_incidents, store_incident_kinds
from dashboard.agents.runner import run_exception, run_ticket
from dashboard.app import background
from dashboard.delivery.outbox import Outbox
from dashboard.finance import flags as finance_flags
from dashboard.finance import queue as exception_queue
from dashboard.finance.decisions import document_id_for
from dashboard.finance.recall import DEFAULT_K, CaseKey, two_stage_recall
from dashboard.hindsight.write_facts import asker
from dashboard.processes import free_port
from dashboard.review.casework import Casework
from dashboard.settings import Settings
from dashboard.store.agent_runs import AgentRunStore
from dashboard.store.db import make_engine
from dashboard.support import flags as ticket_flags
from dashboard.support.recall import recall_for_ticket
from tests.helpers import DEMO_CASES as CASES
from tests.helpers import DEMO_TICKETS as TICKETS
from tests.helpers import QUEUE_OPEN, TICKET_QUEUE_OPEN, demo_case, demo_ticket, open_page


def _restart_without_hindsight(monkeypatch) -> None:
    """A new app process: empty caches, and nothing listens where Hindsight was, so no recall can happen."""
    monkeypatch.setenv("RECALL_REVIEW_API_PORT", str(free_port()))
    st.cache_resource.clear()
    st.cache_data.clear()


def test_flags_written_as_cases_are_recalled_show_in_the_queues_of_a_new_session(
    hindsight, point_app, demo_banks, review_store_url, tmp_path, monkeypatch
):
    gw, fin, sup = hindsight.gateway, demo_banks.finance, demo_banks.support
    engine = make_engine(review_store_url, tmp_path / "store")
    point_app(hindsight.env(finance=fin, support=sup, prefetch=True), Outbox(engine))
    store = Casework(engine)
    assert store.flags(fin, "exception") == {}

    open_page("../finance/pages/exceptions.py", timeout=180)  # the case first, then the queue in the background
    background.background().drain(timeout=180)  # each result the background recalls computes writes its flags
    stored = {cid: finance_flags.stored(f) for cid, f in store.flags(fin, "exception").items()}
    assert set(stored) == {c.id for c in CASES}
    case = demo_case("E-1002")  # V02 price variance: V01's twelve crowd a single pass
    expected = finance_flags.finance_flags(  # the bank's server asked about bursts, as the case page asks it
        two_stage_recall(
            gw.recall, fin, CaseKey.of(case), case.recall_query(), k=DEFAULT_K, own_document=document_id_for(case.id)
        ),
        None,
        asker(gw, fin),
    )
    assert stored["E-1002"] == expected and expected.crowd_out_lost and expected.exact >= 1

    ticket = demo_ticket("T-2004")  # a customer with only legacy history
    open_page("../support/pages/tickets.py", timeout=120, ticket="T-2004")
    tickets_stored = store.flags(sup, "ticket")
    assert set(tickets_stored) == {"T-2004"}  # only the ticket that was recalled
    recall = recall_for_ticket(gw.recall, sup, ticket.customer, ticket.issue)
    assert (
        ticket_flags.stored(tickets_stored["T-2004"]) == ticket_flags.ticket_flags(recall) and recall.path == "legacy"
    )

    _restart_without_hindsight(monkeypatch)
    at = open_page("../finance/pages/exceptions.py", timeout=120, state=QUEUE_OPEN)
    queue = at.dataframe(key="exception_queue").value.set_index("case")
    row = queue.loc["E-1002"]
    assert row["exact precedents"] == expected.exact
    assert row["agent recommends"] == f"{expected.action} ({expected.confidence:.0%})"
    assert row[exception_queue.PLAIN_SEARCH_MISSES] == f"{expected.crowd_out_lost} exact precedent(s)"
    assert queue["agent recommends"].ne("").all() and queue["incident"].eq("").all()  # incidents never checked: blank

    at = open_page("../support/pages/tickets.py", timeout=120, state=TICKET_QUEUE_OPEN)
    tickets = at.dataframe(key="ticket_queue").value.set_index("ticket")
    assert tickets.loc["T-2004", "history used"] == f"legacy ({len(recall.legacy_admitted)} admitted)"
    assert (tickets.drop(index="T-2004")["history used"] == "").all()  # not measured yet: blank


def test_the_demo_seed_measures_every_case_and_the_incidents(hindsight, demo_banks, tmp_path, review_store_url):
    from dashboard.cli.seed import seed_flags

    settings = Settings(
        **{
            **hindsight.settings.model_dump(),
            "finance_bank": demo_banks.finance,
            "support_bank": demo_banks.support,
            "data_dir": tmp_path,
            "database_url": review_store_url,
        }
    )
    outbox = Outbox(make_engine(settings.store_url, settings.data_dir))
    runs = AgentRunStore(outbox.engine)
    gw = hindsight.gateway
    naive_case = run_exception(gw, runs, demo_banks.finance, demo_case("E-1002"), "naive")  # a crowd-out
    run_exception(gw, runs, demo_banks.finance, demo_case("E-1001"), "reviewed")
    run_ticket(gw, runs, demo_banks.support, demo_ticket("T-2004"), "naive", retain=False)  # another customer's records

    counts = seed_flags(gw, settings, log=lambda _: None)
    assert counts["exceptions"] == len(CASES) and counts["tickets"] == len(TICKETS)
    store = Casework(outbox.engine)
    finance = store.flags(demo_banks.finance, "exception")
    assert all(finance_flags.stored(finance[c.id]).crowd_out_lost is not None for c in CASES)  # every case checked
    expected = find_incidents(
        gw, runs, outbox, runs.runs(bank_id=demo_banks.finance) + runs.runs(bank_id=demo_banks.support)
    )
    kinds = {(i.case_kind, i.case_id): set() for i in expected}
    for i in expected:
        kinds[(i.case_kind, i.case_id)].add(i.kind)
    assert "crowded_out" in kinds[("exception", naive_case.case_id)] and "other_customer" in kinds[("ticket", "T-2004")]
    assert set(finance["E-1002"]["incidents"]) == kinds[("exception", "E-1002")]
    assert finance["E-1001"]["incidents"] == sorted(kinds.get(("exception", "E-1001"), set()))
    assert "incidents" not in finance["E-1003"]  # no agent run: never checked
    tickets = store.flags(demo_banks.support, "ticket")
    assert set(tickets) == {t.id for t in TICKETS} and "other_customer" in tickets["T-2004"]["incidents"]
    assert all(ticket_flags.stored(f) is not None for f in tickets.values())

    assert runs.tally([demo_banks.finance, demo_banks.support]) == (3, 0)  # the demo banks' audit log is off here
    store_incident_kinds(store, [], [])  # nothing to say: nothing written, nothing lost
    assert store.flags(demo_banks.support, "ticket")["T-2004"]["incidents"] == tickets["T-2004"]["incidents"]
