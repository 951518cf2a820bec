"""The code review's findings, each with a test that fails without its fix: arecall checks its input,
migration errors reach the page and the CLI as plain messages, apply reads the bank twice, ticket
decisions raise real errors, the Tickets page reads the decision log once per run."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from streamlit.testing.v1 import AppTest

from dashboard.cli.registry import main as cli_main
from dashboard.cli.seed import seed_bank, support_records
from dashboard.hindsight.errors import HindsightRequestRejected
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import tag_value
from dashboard.reporting.overview import p95
from dashboard.reporting.recall_log import RecallLog
from dashboard.review.outbox import Outbox
from dashboard.support import migration
from dashboard.support.decisions import TicketDecisionError, interaction_record, ticket_decision
from dashboard.support.models import Ticket
from dashboard.support.recall import TicketRecall
from tests.conftest import APP
from tests.test_identity import AUTH
from tests.test_migration import CUSTOMERS, RELIABLE

BAD_RECALLS = [
    ({"query": "   "}, "query: needs at least one letter or digit"),
    ({"query": "?!"}, "query: needs at least one letter or digit"),
    ({"query": "charged twice", "tags": ["customer:ann-lee\x00"]}, "tags[1]"),
    ({"query": "charged twice", "tags": ["customer:ann-lee", ""]}, "tags[2]"),
]


# -- arecall makes the same checks as recall ---------------------------------------------------------
@pytest.mark.parametrize(("kwargs", "message"), BAD_RECALLS)
def test_arecall_refuses_bad_input_before_sending(kwargs, message):
    # Nothing listens on port 9: only a check made before sending can answer "rejected" rather than "unreachable".
    gw = HindsightGateway("http://127.0.0.1:9", timeout=2)
    try:
        [result] = gw.recall_many([lambda: gw.arecall("bank", **kwargs)])
    finally:
        gw.close()
    assert isinstance(result, HindsightRequestRejected) and message in str(result)


@pytest.mark.parametrize(("kwargs", "message"), BAD_RECALLS)
def test_arecall_refuses_bad_input_on_the_real_server_as_recall_does(hindsight, bank_id, kwargs, message):
    gw = hindsight.gateway
    [through_arecall] = gw.recall_many([lambda: gw.arecall(bank_id, **kwargs)])
    with pytest.raises(HindsightRequestRejected) as through_recall:
        gw.recall(bank_id, **kwargs)
    assert str(through_arecall) == str(through_recall.value) and message in str(through_arecall)
    [fine] = gw.recall_many([lambda: gw.arecall(bank_id, "  charged twice  ", tags=["customer:ann-lee"])])
    assert fine.results == []  # a good request still goes through (the bank is empty)


# -- migration ------------------------------------------------------------------------------------------
class _FilterIgnoringGateway:
    """Test double of a server whose untagged-documents filter lets a tagged document through."""

    def list_documents(self, bank_id, *, untagged=False, limit=100, offset=0):
        items = [{"id": "SUP-L-001", "tags": []}, {"id": "SUP-T-001", "tags": ["customer:ann-lee"]}]
        return {"items": items[offset : offset + limit], "total": len(items)}

    def document(self, bank_id, document_id):
        raise AssertionError("the listing alone must stop the migration")

    def retain(self, bank_id, records):
        raise AssertionError("nothing may be written")

    def close(self):
        pass


def test_a_filter_that_lets_tagged_documents_through_is_a_migration_error():
    with pytest.raises(migration.MigrationError, match="SUP-T-001"):
        migration.plan(_FilterIgnoringGateway(), "support", CUSTOMERS)
    with pytest.raises(migration.MigrationError):
        migration.apply(_FilterIgnoringGateway(), "support", CUSTOMERS)


def test_cli_reports_a_migration_error_with_exit_1_and_a_message(monkeypatch, capsys):
    from dashboard.cli import commands
    from dashboard.settings import Settings

    monkeypatch.setattr(commands, "open_gateway", lambda: (Settings(), _FilterIgnoringGateway()))
    for mode in ("--dry-run", "--apply"):
        assert cli_main(["migrate", mode, "--bank", "support"]) == 1  # returned: no exception escaped
        err = capsys.readouterr().err
        assert err.startswith("error: migration of support stopped: ") and "SUP-T-001" in err and "Traceback" not in err


def test_migration_page_shows_a_migration_error_as_a_plain_message(hindsight, bank_id, point_app, monkeypatch):
    point_app(hindsight.env(support=bank_id))

    def refuse(*_args, **_kwargs):
        raise migration.MigrationError("the filter no longer means 'untagged' [x](javascript:alert(1))")

    monkeypatch.setattr(migration, "plan", refuse)
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/migration.py").run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["The migration cannot go on:"]
    assert "the filter no longer means 'untagged' [x](javascript:alert(1))" in [t.value for t in at.text]


def test_apply_reads_the_bank_once_to_plan_and_once_to_measure(hindsight, bank_id):
    seed_bank(hindsight.gateway, bank_id, support_records())
    calls = []

    class Spy:  # the real gateway, with its list_documents calls written down
        def __getattr__(self, name):
            return getattr(hindsight.gateway, name)

        def list_documents(self, bank, **kwargs):
            calls.append(kwargs)
            return hindsight.gateway.list_documents(bank, **kwargs)

    report = migration.apply(Spy(), bank_id, CUSTOMERS)
    assert sorted(report.converted) == sorted(RELIABLE)
    scans = [c for c in calls if c.get("limit", 100) > 1]
    assert len(scans) == 2 and all(c["untagged"] for c in scans)  # before, after
    assert len(calls) == 4  # plus one document count (limit=1) each time
    assert (report.before.total, report.before.untagged, report.after.untagged) == (18, 13, 4)


# -- support decisions ----------------------------------------------------------------------------------
TICKET = Ticket(id="T-1", customer="Ann Lee", issue="charged twice", drafted_response="Refunded.", opened_on="2026-05-01")
NOW = datetime(2026, 5, 2, tzinfo=UTC)


def test_ticket_decision_turns_a_validation_error_into_a_field_error():
    with pytest.raises(TicketDecisionError) as long_name:
        ticket_decision(TICKET, action="approve", reviewer="R" * 121, authenticated=True, decided_at=NOW)
    assert long_name.value.field == "reviewer" and "120" in str(long_name.value)
    with pytest.raises(TicketDecisionError) as long_response:
        ticket_decision(TICKET, action="edit_and_approve", reviewer="Rita", authenticated=False, decided_at=NOW, response="x" * 8001)
    assert long_response.value.field == "response"


@pytest.mark.parametrize("customer", ["Ann contacted support. Lee", "!!!"])
def test_a_record_the_ownership_rule_could_not_read_back_is_a_field_error(customer):
    ticket = TICKET.model_copy(update={"customer": customer})
    decision = ticket_decision(ticket, action="approve", reviewer="Rita", authenticated=False, decided_at=NOW)
    with pytest.raises(TicketDecisionError) as refused:
        interaction_record(ticket, decision)
    assert refused.value.field == "customer"


def test_an_approved_ticket_record_is_owned_by_its_customer():
    decision = ticket_decision(TICKET, action="approve", reviewer="Rita", authenticated=False, decided_at=NOW)
    record = interaction_record(TICKET, decision)
    assert record.tags == ["customer:ann-lee"] and record.content.startswith("Customer Ann Lee contacted support.")


# -- the Tickets page ------------------------------------------------------------------------------------
def _tickets_page(user: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if user is not None:
        at.secrets["auth"], at.user = AUTH, user
    at.run()
    at.switch_page("views/tickets.py").run()
    at.session_state["ticket_queue"] = {"selection": {"rows": [3], "columns": [], "cells": []}}  # T-2004
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture
def support_app(hindsight, bank_id, point_app):
    seed_bank(hindsight.gateway, bank_id, support_records())
    return point_app(hindsight.env(support=bank_id, finance=bank_id + "-fin"))


def test_tickets_page_shows_a_validation_error_as_plain_text(support_app):
    # A signed-in name is not typed into the 120-character field: a longer one fails the decision's validation.
    at = _tickets_page({"is_logged_in": True, "name": "R" * 121 + " [x](javascript:alert(1))"})
    next(b for b in at.button if b.label == "Record decision").click().run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error] == ["Not recorded:"]
    assert any(t.value.startswith("reviewer: ") and "120" in t.value for t in at.text)
    assert support_app.history() == []


def test_tickets_page_reads_the_decision_log_once_per_run(support_app, monkeypatch):
    at = _tickets_page()
    reads = []
    monkeypatch.setattr(Outbox, "history", lambda self, *a, **kw: reads.append(a) or [])
    monkeypatch.setattr(Outbox, "latest", lambda self, *a: reads.append(("latest", *a)))
    at.run()
    assert not at.exception, at.exception
    assert len(at.dataframe[0].value) == 12 and reads == [("ticket",)]


# -- the libraries adopted -------------------------------------------------------------------------------
def test_tag_value_reads_the_first_tag_with_exactly_that_prefix():
    tags = ["vendorx:V9", "type:price_variance", "vendor:V06", "vendor:V07"]
    assert tag_value(tags, "vendor") == "V06" and tag_value(tags, "type") == "price_variance"
    assert tag_value(tags, "kind") is None and tag_value([], "vendor") is None


def test_p95_interpolates_between_samples():
    assert p95([7.0]) == 7.0
    assert p95(list(range(1, 101))) == pytest.approx(95.05)
    assert p95([10.0, 20.0]) == pytest.approx(19.5)


def test_recall_log_keeps_the_most_recently_used_results_per_kind():
    log = RecallLog(results=2)
    recalls = {c: TicketRecall(customer=c, tag="customer:x", path="none") for c in ("A", "B", "C")}
    log.add_ticket("bank", "issue", recalls["A"])
    log.add_ticket("bank", "issue", recalls["B"])
    assert log.ticket_result("bank", "A", "issue") is recalls["A"]  # A is now the most recently used
    log.add_ticket("bank", "issue", recalls["C"])
    assert log.ticket_result("bank", "B", "issue") is None
    assert log.ticket_result("bank", "A", "issue") is recalls["A"] and log.ticket_result("bank", "C", "issue") is recalls["C"]

