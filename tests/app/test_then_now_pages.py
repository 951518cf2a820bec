"""The then-vs-now pages through AppTest on the real server: then vs now on a case and a ticket, the labelled
recompute when the audit log is off, and the Incidents page."""

import uuid

import streamlit as st

from dashboard.agents.runner import run_exception, run_ticket
from dashboard.cli.seed import finance_records, seed_bank, support_records
from dashboard.finance.decisions import exception_decision, precedent_record
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.queue_files import load_rows
from dashboard.settings import load_settings
from dashboard.store.agent_runs import AgentRunStore
from dashboard.support.models import Ticket
from tests.conftest import PROVEN, seeded
from tests.helpers import open_page, record_cards, texts


def _banks(hindsight, audit: bool):
    fin, sup = f"fin-{uuid.uuid4().hex[:8]}", f"sup-{uuid.uuid4().hex[:8]}"
    seed_bank(hindsight.gateway, fin, finance_records(), sign=seeded)  # as `python -m dashboard seed` writes them
    seed_bank(hindsight.gateway, sup, support_records(), sign=seeded)
    if audit:
        hindsight.gateway.enable_audit_log(fin)
        hindsight.gateway.enable_audit_log(sup)
    return fin, sup


def test_case_and_ticket_show_what_the_agent_recalled_then_and_the_incidents_page_lists_the_leak(hindsight, point_app):
    fin, sup = _banks(hindsight, audit=True)
    outbox = point_app(hindsight.env(finance=fin, support=sup))
    store = AgentRunStore(outbox.engine)
    settings = load_settings()
    case = next(c for c in load_rows(settings.exceptions_file, ExceptionCase) if c.id == "E-1002")
    ticket = next(t for t in load_rows(settings.tickets_file, Ticket) if t.id == "T-2004")
    run_exception(hindsight.gateway, store, fin, case, "reviewed", PROVEN)  # signatures checked with the app's key
    run_ticket(hindsight.gateway, store, sup, ticket, "naive", retain=False, origin=PROVEN)

    at = open_page("../finance/pages/exceptions.py", timeout=90, case="E-1002")
    text = texts(at)
    assert "What the agent recalled then, and what recall returns now" in text
    assert "as Hindsight's audit log recorded it" in text and "Agent's recommendation: reject" in text
    assert "Since then: 0 appeared" in text
    lines = [line for t in at.text for line in t.value.splitlines()]
    pri02 = [line for line in lines if line.startswith("PREC-V02-PRI-02: ")]  # then (each call) and now: who wrote it
    assert len(pri02) >= 2 and all(line.endswith("; origin: the demo seed") for line in pri02), pri02

    # the reviewer overrides: the case's own decision is what changed since the agent's recall, never evidence
    _, rec = assess(
        two_stage_recall(
            hindsight.gateway.recall, fin, CaseKey.of(case), case.recall_query(), own_document="decision-E-1002"
        ),
        PROVEN,
    )
    decision = exception_decision(
        case,
        rec,
        reviewer="Dana",
        authenticated=False,
        action="override",
        outcome="escalate",
        reason_code="NEEDS_APPROVER",
    )
    outbox.submit(fin, decision, precedent_record(case, decision, rec), hindsight.gateway.retain)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = open_page("../finance/pages/exceptions.py", timeout=90, case="E-1002")
    since = next(t.value for t in at.text if t.value.startswith("Since then:"))
    # (broader records may churn too: a new document changes the ranking of the any_strict pass)
    appeared = since.split(" appeared (")[1].split(")")[0].split(", ")
    assert "decision-E-1002" in appeared, since
    line = "decision-E-1002: your decision (not evidence); origin: this dashboard: Dana's decision (new since then)"
    assert line in texts(at)  # one wrapped line per record
    cause = next(t.value for t in at.text if t.value.startswith("decision-E-1002 appeared:"))  # its cause, plain text
    assert cause.startswith("decision-E-1002 appeared: retained after the recall. Retained on ")

    at = open_page("../support/pages/tickets.py", timeout=90, ticket="T-2004")
    text = texts(at)
    assert "What the support agent (naive) recalled" in text and "the whole bank (no filter)" in text  # plain words
    assert ": another customer's" in text or ": no provable owner" in text
    assert "audit entry" not in text  # no audit ids on the case page
    lines = [line for t in at.text for line in t.value.splitlines()]
    ann = [line for line in lines if line.startswith("SUP-L-001: ")]  # Ann Lee's record, then and now
    assert ann and all("; origin: the demo seed" in line for line in ann), ann

    at = open_page("views/incidents.py", timeout=90)
    table = next(d.value for d in at.dataframe if "kind" in d.value.columns)  # display-only: no key in AppTest
    leak = table[table["kind"] == "another customer's records reached the answer"]
    assert len(leak) == 1 and leak.iloc[0]["case"] == "/tickets?ticket=T-2004" and leak.iloc[0]["records"]
    at.session_state["incidents_table"] = {"selection": {"rows": [int(leak.index[0])], "columns": [], "cells": []}}
    at.run()
    assert not at.exception, at.exception
    text = texts(at)
    assert "bank_wide: any on no tags (bank-wide); audit entry " in text and "audit entry none" not in text


def test_with_the_audit_log_off_the_case_shows_a_labelled_recompute(hindsight, point_app):
    fin, sup = _banks(hindsight, audit=False)
    point_app(hindsight.env(finance=fin, support=sup))
    at = open_page("../finance/pages/exceptions.py", timeout=90, case="E-1001")
    text = texts(at)
    assert (
        "Hindsight keeps no log of the agents' searches here (its audit log is off): showing today's recompute, not what the agent saw."
        in text
    )
    assert "Now (today's recompute)" in text
    at = open_page("views/incidents.py", timeout=90)
    assert "The audit log is off for a configured bank" in texts(at)


def test_an_incident_banner_names_whose_run_it_was_and_whether_the_page_is_affected(hindsight, point_app):
    """The naive agent leaked another customer's records into its answer on T-2004; the ticket's page, which uses only
    Ann Lee's records, says the incident came from that agent's run and that what it shows is not affected."""
    fin, sup = _banks(hindsight, audit=True)
    outbox = point_app(hindsight.env(finance=fin, support=sup))
    store = AgentRunStore(outbox.engine)
    ticket = next(t for t in load_rows(load_settings().tickets_file, Ticket) if t.id == "T-2004")
    naive = run_ticket(hindsight.gateway, store, sup, ticket, "naive", retain=False, origin=PROVEN)

    open_page("views/incidents.py", timeout=90)  # the check keeps the ticket's incident kinds for its page
    at = open_page("../support/pages/tickets.py", timeout=90, ticket="T-2004")
    said = [w.value.replace("\\", "") for w in at.warning if "Incident in " in w.value]
    assert said, texts(at)
    leak = next(s for s in said if "another customer's records reached the answer" in s)
    assert leak.startswith(
        "Incident in a run of the deliberately naive support agent, which the demo runs to show what goes wrong "
        f"(run {naive.run_id[:8]}, "
    )
    assert "What this page shows is not affected: none of its records (" in leak
    used = {c[0] for c in record_cards(at) if c[1] == "used"}
    assert used == {"SUP-L-001", "SUP-L-002"}  # Ann Lee's, by their first sentence
    assert not [
        e.value for e in at.error if "Incident in " in e.value
    ]  # an affected page says it in red; this one is not
