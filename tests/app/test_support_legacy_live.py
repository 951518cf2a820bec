"""A support lead's view of legacy history on the Tickets page, against the real server and demo data:
the legacy records a tagged recall left out, the one-customer migration, the full list of records found
but not used, and the actions on one record (flag, tag for this customer) with their role checks."""

from datetime import UTC, datetime

import pytest
import streamlit as st

from dashboard.cli.seed import stored_documents
from dashboard.review.casework import Casework
from dashboard.support.decisions import interaction_record, ticket_decision
from dashboard.support.recall import recall_for_ticket
from dashboard.support.record_flags import RECORD_KIND
from tests.helpers import demo_ticket, open_page, record_cards, texts

ANN_LEGACY = {"SUP-L-001", "SUP-L-002"}  # the ownership rule admits exactly these two for Ann Lee


def _point(point_app, hindsight, banks):
    outbox = point_app(hindsight.env(support=banks.support, finance=banks.finance))
    return banks.support, outbox


@pytest.fixture
def support_env(hindsight, demo_banks_read_only, point_app):
    """The app on the session's shared demo banks, for a test that writes nothing to memory."""
    return _point(point_app, hindsight, demo_banks_read_only)


@pytest.fixture
def own_support_env(hindsight, demo_banks, point_app):
    """The app on demo banks of the test's own, for a test that retains or tags."""
    return _point(point_app, hindsight, demo_banks)


def _approve(hindsight, bank: str, ticket_id: str) -> None:
    """T-2004's drafted response approved and retained, as the Tickets page retains it (tagged for Ann Lee)."""
    ticket = demo_ticket(ticket_id)
    when = datetime(2026, 11, 13, 10, 0, tzinfo=UTC)
    decision = ticket_decision(ticket, action="approve", reviewer="Rita", authenticated=False, decided_at=when)
    hindsight.gateway.retain(bank, [interaction_record(ticket, decision)])


def _ticket(ticket_id: str):
    return open_page("../support/pages/tickets.py", ticket=ticket_id)


def _left_out(at) -> dict[str, str]:
    """The customer's legacy records the tagged recall left out, each read in full: id -> can be migrated or not."""
    return {ref: status for ref, status, _why in record_cards(at) if status.endswith("be migrated")}


def _used(at) -> list[str]:
    """The records used for the ticket, in page order."""
    return [ref for ref, status, _why in record_cards(at) if status == "used"]


def _button(at, label: str):
    return next(b for b in at.button if b.label == label)


def _tags(hindsight, bank: str) -> dict[str, list[str]]:
    return {doc: list(tags) for doc, (_text, tags, _metadata) in stored_documents(hindsight.gateway, bank).items()}


def test_t2012_after_t2004_is_approved_shows_the_legacy_records_left_out_and_migrates_them(hindsight, own_support_env):
    bank, _outbox = own_support_env
    before = recall_for_ticket(hindsight.gateway.recall, bank, "Ann Lee", demo_ticket("T-2012").issue)
    assert before.path == "legacy" and {e.document_id for e in before.legacy_admitted} == ANN_LEGACY
    _approve(hindsight, bank, "T-2004")

    at = _ticket("T-2012")
    assert any("Used this customer's tagged history" in s.value for s in at.success)
    sentence = "2 legacy records of this customer were not consulted because a tagged record exists: migrate them."
    assert sentence in [w.value for w in at.warning], texts(at)
    assert _left_out(at) == dict.fromkeys(ANN_LEGACY, "can be migrated")
    assert _used(at) == ["ticket-T-2004"]

    _button(at, "Migrate this customer's legacy records").click().run()  # not confirmed: nothing written
    assert any("Tick 'I have checked these records' first." in e.value for e in at.error)
    assert all(_tags(hindsight, bank)[doc] == [] for doc in ANN_LEGACY)

    at.checkbox(key="legacy_T-2012_migrate_confirm").check()
    _button(at, "Migrate this customer's legacy records").click().run()
    assert not at.exception, at.exception
    assert any("Tagged 2 record(s) in place" in s.value for s in at.success), texts(at)
    assert "Tagged: SUP-L-001, SUP-L-002" in texts(at)
    tags = _tags(hindsight, bank)
    assert all(tags[doc] == ["customer:ann-lee"] for doc in ANN_LEGACY)
    assert tags["SUP-L-005"] == [] and tags["SUP-L-012"] == []  # another verdict, another customer: untouched

    # the page recalled again: the tagged path now brings the migrated records, nothing is left out
    assert set(_used(at)) == ANN_LEGACY | {"ticket-T-2004"}
    assert not any("not consulted" in w.value for w in at.warning)
    after = recall_for_ticket(hindsight.gateway.recall, bank, "Ann Lee", demo_ticket("T-2012").issue)
    assert after.path == "tagged" and {e.document_id for e in after.tagged} == ANN_LEGACY | {"ticket-T-2004"}


def test_t2003_shows_sup_l_012_as_left_out(hindsight, support_env):
    at = _ticket("T-2003")
    assert "1 legacy record of this customer was not consulted because a tagged record exists: migrate them." in [
        w.value for w in at.warning
    ]
    assert list(_left_out(at)) == ["SUP-L-012"]


def test_every_rejected_candidate_is_listed_with_its_reason(hindsight, support_env):
    bank, _outbox = support_env
    at = _ticket("T-2004")
    recall = recall_for_ticket(hindsight.gateway.recall, bank, "Ann Lee", demo_ticket("T-2004").issue)
    assert sorted(_used(at)) == sorted(e.document_id for e in recall.legacy_admitted)  # (ranking ties may reorder)
    assert len(recall.legacy_rejected) > 10  # more than a grid's default ten visible rows: every one is a card
    rejected = {ref: why for ref, status, why in record_cards(at) if status.startswith("not used")}
    assert rejected == {e.document_id: e.reason for e in recall.legacy_rejected}  # each one, with its reason in full
    assert f"Records found but not used ({len(recall.legacy_rejected)})" in [s.value for s in at.subheader]


def test_tag_for_this_customer_refuses_another_customers_record_and_tags_an_owned_one(hindsight, own_support_env):
    bank, _outbox = own_support_env
    at = _ticket("T-2004")
    at.selectbox(key="legacy_T-2004_record").set_value("SUP-L-003").run()  # Ann Leeds's, found for Ann Lee
    assert "SUP-L-003: found, not used" in texts(at)
    _button(at, "Tag for this customer").click().run()
    assert not at.exception, at.exception
    assert any(e.value == "Not done:" for e in at.error)
    assert "Not tagged: it belongs to Ann Leeds, not Ann Lee" in texts(at)
    assert _tags(hindsight, bank)["SUP-L-003"] == []

    at.selectbox(key="legacy_T-2004_record").set_value("SUP-L-005").run()  # marker not at the start
    _button(at, "Tag for this customer").click().run()
    assert "Not tagged: the migration rule cannot prove its owner: marker not at the start" in texts(at)

    at.selectbox(key="legacy_T-2004_record").set_value("SUP-L-001").run()  # Ann Lee's, admitted
    _button(at, "Tag for this customer").click().run()
    assert not at.exception, at.exception
    assert any("Tagged 1 record(s) in place" in s.value for s in at.success), texts(at)
    tags = _tags(hindsight, bank)
    assert tags["SUP-L-001"] == ["customer:ann-lee"] and tags["SUP-L-002"] == []


def test_a_flag_on_a_record_is_stored_and_shown(hindsight, support_env):
    bank, outbox = support_env
    at = _ticket("T-2004")
    at.selectbox(key="legacy_T-2004_record").set_value("SUP-L-006").run()
    _button(at, "Flag for review").click().run()
    assert "name: a name is required to flag a record" in texts(at)

    at.text_input(key="legacy_T-2004_record_author").input("Lee Lead")
    at.text_area(key="legacy_T-2004_record_note").input("A summary of Ann Lee's contacts: migrate by hand?")
    _button(at, "Flag for review").click().run()
    assert not at.exception, at.exception
    assert any("Flagged SUP-L-006 for review." in s.value for s in at.success)
    stored = Casework(outbox.engine).comments(bank, RECORD_KIND, "SUP-L-006")
    assert [(c.author, c.body) for c in stored] == [
        ("Lee Lead", "Flagged for review on ticket T-2004: A summary of Ann Lee's contacts: migrate by hand?")
    ]
    assert "Flag by Lee Lead" in texts(at)


def test_a_reviewer_cannot_migrate_or_tag_even_from_a_lead_s_stale_page(hindsight, own_support_env, monkeypatch):
    bank, _outbox = own_support_env
    _approve(hindsight, bank, "T-2004")
    monkeypatch.setenv("RECALL_REVIEW_ROLE", "reviewer")
    at = _ticket("T-2012")
    assert "A lead can migrate them: they are then tagged for this customer and used by the next recall." in texts(at)
    assert not any(b.label == "Migrate this customer's legacy records" for b in at.button)
    assert _button(at, "Tag for this customer").disabled
    assert _button(at, "Flag for review").disabled is False  # flagging is a reviewer's comment

    # A page drawn for a lead, clicked after the role became reviewer: nothing is written (the run that
    # handles the click draws the button disabled, so Streamlit drops the click; access.require guards the write).
    monkeypatch.setenv("RECALL_REVIEW_ROLE", "lead")
    st.cache_resource.clear()
    at.run()
    at.selectbox(key="legacy_T-2012_record").set_value("SUP-L-001").run()
    at.checkbox(key="legacy_T-2012_migrate_confirm").check()
    tag = _button(at, "Tag for this customer")
    assert not tag.disabled
    monkeypatch.setenv("RECALL_REVIEW_ROLE", "reviewer")
    st.cache_resource.clear()
    tag.click().run()
    assert not at.exception, at.exception
    assert not any("Tagged" in x.value for x in at.success) and _button(at, "Tag for this customer").disabled
    assert _tags(hindsight, bank)["SUP-L-001"] == [] and _tags(hindsight, bank)["SUP-L-002"] == []
