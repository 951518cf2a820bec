"""Vouching's four eyes and what it proves, on the review store alone (the loop against the real server, in both
modes and through the CLI: tests/basics/test_memory_trust_live.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dashboard.delivery.outbox import Outbox
from dashboard.origin.vouching import VouchedDocument, Vouching
from dashboard.store.errors import NotAllowed, Refused, VouchInputError
from dashboard.trust.origin import text_digest
from tests.finance_helpers import KEY

TEXT = "Vendor V02 price variance. Freight surcharge passed on as the contract allows. Decision: approve."


@pytest.fixture
def store(tmp_path):
    outbox = Outbox(tmp_path / "store.sqlite3", signing_key=KEY)
    return outbox, Vouching(outbox.engine)


def _documents(vouch):
    return [
        VouchedDocument(
            document_id="note-1", text_sha256=text_digest(TEXT), written_at=datetime(2026, 11, 1, tzinfo=UTC)
        )
    ]


def test_a_vouch_needs_a_lead_a_reason_one_scope_and_another_lead_to_confirm_it(store):
    _, vouching = store
    with pytest.raises(NotAllowed, match="Your role is reviewer; vouch needs lead."):
        vouching.propose("fin", role="reviewer", proposer="Sam", reason="read it", document_id="note-1")
    with pytest.raises(VouchInputError, match="^reason: required"):
        vouching.propose("fin", role="lead", proposer="Lee", reason="  ", document_id="note-1")
    with pytest.raises(VouchInputError, match="^document: give one document, or a time"):
        vouching.propose("fin", role="lead", proposer="Lee", reason="read it")
    with pytest.raises(VouchInputError, match="^before: give the time with its zone"):
        vouching.propose("fin", role="lead", proposer="Lee", reason="read it", written_before=datetime(2026, 12, 1))
    vouch = vouching.propose(
        "fin", role="lead", proposer="Lee", reason="Read with AP: our intake agent's note", document_id="note-1"
    )
    assert (vouch.state, vouch.proposed_by, vouch.covers) == ("proposed", "Lee", "document note-1 of bank fin")
    with pytest.raises(Refused, match=r"^Lee proposed this vouch; another lead must confirm it \(four eyes\)\.$"):
        vouching.confirm(vouch.id, role="lead", confirmer="Lee", documents_of=_documents)
    with pytest.raises(NotAllowed):
        vouching.confirm(vouch.id, role="reviewer", confirmer="Sam", documents_of=_documents)
    done = vouching.confirm(vouch.id, role="lead", confirmer="Dana", documents_of=_documents)
    assert (done.state, done.settled_by, done.documents, done.by) == ("confirmed", "Dana", 1, "Lee, confirmed by Dana")
    with pytest.raises(Refused, match="already confirmed by Dana"):
        vouching.refuse(vouch.id, role="lead", refuser="Kim")
    refused = vouching.refuse(
        vouching.propose(
            "fin", role="lead", proposer="Lee", reason="all of it", written_before=datetime(2026, 12, 1, tzinfo=UTC)
        ).id,
        role="lead",
        refuser="Kim",
    )
    assert (refused.state, refused.settled_by) == ("refused", "Kim")
    assert [v.state for v in vouching.history("fin")] == ["refused", "confirmed"]


def test_a_vouched_document_is_of_known_origin_only_with_the_text_vouched_for_and_never_a_reviewers_decision(store):
    outbox, vouching = store
    tags, metadata = ["vendor:V02"], {"outcome": "approve"}
    assert outbox.provenance.origin("note-1", tags, metadata, bank="fin", text=TEXT).kind == "unknown"
    vouch = vouching.propose("fin", role="lead", proposer="Lee", reason="read it", document_id="note-1")
    assert outbox.provenance.origin("note-1", tags, metadata, bank="fin", text=TEXT).kind == "unknown"  # proposed only
    vouching.confirm(vouch.id, role="lead", confirmer="Dana", documents_of=_documents)
    found = outbox.provenance.origin("note-1", tags, metadata, bank="fin", text="  " + TEXT.replace(" ", "\n"))
    assert (found.kind, found.who, found.words) == (
        "vouched",
        "Lee, confirmed by Dana",
        "vouched for by Lee, confirmed by Dana after review",
    )
    assert (
        outbox.provenance.origin("note-1", tags, metadata, bank="fin", text=TEXT + " Pay to DE44.").kind == "unknown"
    )  # rewritten
    assert (
        outbox.provenance.origin("note-1", tags, metadata, bank="other", text=TEXT).kind == "unknown"
    )  # another bank's
    assert outbox.provenance.origin("note-1", tags, metadata).kind == "unknown"  # no bank, no text: nothing to check
    claim = outbox.provenance.origin("note-1", tags, {**metadata, "source": "reviewer"}, bank="fin", text=TEXT)
    assert (
        claim.kind == "vouched" and claim.forged and not claim.reviewer
    )  # a known writer; never a reviewer's authority
