"""Four-eyes curation of a document: on the real server in both modes, through an outage, on both store engines,
and through the `curate` command."""

from __future__ import annotations

import json
import uuid
from collections import Counter

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

from dashboard.delivery.outbox import Outbox
from dashboard.delivery.worker import DeliveryWorker
from dashboard.hindsight.documents import group
from dashboard.hindsight.errors import HindsightRequestRejected
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.curation import Curation
from dashboard.store.db import metadata
from dashboard.store.errors import CurationInputError, NotAllowed, Refused
from tests.helpers import run_command
from tests.outage import Outage

QUERY = "Vendor V90 price variance on brackets"
PLANTED = MemoryRecord(
    document_id="precedent-V90-1",
    content="Vendor V90 price variance on brackets was approved. The supplier contract allowed a five percent uplift. "
    "Reviewer Ann Kim signed it off in March.",
    tags=["vendor:V90", "type:price_variance", "kind:decision"],
)
OTHER = MemoryRecord(
    document_id="precedent-V90-2",
    content="Vendor V90 price variance on bolts was rejected. No contract covered it.",
    tags=["vendor:V90", "type:price_variance", "kind:decision"],
)


def planted_bank(live) -> str:
    bank = f"cur-{uuid.uuid4().hex[:10]}"
    live.gateway.ensure_bank(bank)
    live.gateway.retain(bank, [PLANTED, OTHER])
    live.settle(bank)
    return bank


def recalled(gateway, bank: str) -> set[str]:
    grouped = group(gateway.recall(bank, QUERY, tags=["vendor:V90"], tags_match="any_strict"))
    return {d.document_id for d in grouped.documents} | {
        f"observation of {s}" for o in grouped.observations for s in o.source_documents
    }


def test_a_lead_approves_a_proposal_the_document_leaves_recall_and_a_revert_brings_it_back(live, tmp_path):
    bank = planted_bank(live)
    facts = live.gateway.list_memories(bank, document_id=PLANTED.document_id)["total"]
    assert facts >= (2 if live.mode == "extracting" else 1)  # with an LLM, a document is several facts: all must go
    assert PLANTED.document_id in recalled(live.gateway, bank)
    curation = Curation(tmp_path / "store.sqlite3", live.gateway.set_document_state)

    proposal = curation.propose(
        bank, PLANTED.document_id, role="reviewer", proposer="Dana", label="outdated", reason="supplier contract ended"
    )
    with pytest.raises(Refused, match="another lead must approve it"):
        curation.approve(proposal.id, role="lead", lead=" dana ")
    with pytest.raises(NotAllowed, match="needs lead"):
        curation.approve(proposal.id, role="reviewer", lead="Kim")
    approval, report = curation.approve(proposal.id, role="lead", lead="Lee")
    assert (approval.state, report.delivered) == ("delivered", 1)

    now = recalled(live.gateway, bank)
    assert PLANTED.document_id not in now and f"observation of {PLANTED.document_id}" not in now
    assert OTHER.document_id in now
    retired = live.gateway.list_memories(bank, document_id=PLANTED.document_id, state="invalidated")["items"]
    assert len(retired) == facts
    assert all(
        m["invalidation_reason"] == "outdated: supplier contract ended (proposed by Dana, approved by Lee)"
        for m in retired
    )
    status = curation.status(bank, PLANTED.document_id)
    assert (
        status.sentence
        == f"invalidated by Lee on {approval.created_at:%Y-%m-%d}: supplier contract ended (outdated, proposed by Dana)"
    )

    revert = curation.propose(
        bank, PLANTED.document_id, role="reviewer", proposer="Lee", change="revert", reason="contract renewed"
    )
    with pytest.raises(Refused, match="four eyes"):
        curation.approve(revert.id, role="lead", lead="Lee")
    back, _ = curation.approve(revert.id, role="lead", lead="Kim")
    assert back.state == "delivered"
    assert PLANTED.document_id in recalled(live.gateway, bank)
    assert live.gateway.list_memories(bank, document_id=PLANTED.document_id)["total"] == facts

    log = [(e.actor, e.action, e.change, e.before, e.after) for e in reversed(curation.history(bank))]
    assert log == [
        ("Dana", "propose", "invalidate", "valid", "invalidation proposed"),
        ("Lee", "approve", "invalidate", "invalidation proposed", "invalidated"),
        ("Lee", "propose", "revert", "invalidated", "revert proposed"),
        ("Kim", "approve", "revert", "revert proposed", "valid"),
    ]


def test_an_approval_made_while_hindsight_is_unreachable_is_delivered_later_exactly_once(hindsight, tmp_path):
    bank = planted_bank(hindsight)
    store = tmp_path / "store.sqlite3"
    sent = Counter()
    with Outage(hindsight.settings.base_url) as path:
        gateway = HindsightGateway(path.url)

        def counting(bank_id, document_id, state, reason=None):
            changed = gateway.set_document_state(bank_id, document_id, state, reason)  # raises while out of reach
            sent[(document_id, state)] += 1
            return changed

        curation = Curation(store, counting)
        proposal = curation.propose(
            bank, PLANTED.document_id, role="reviewer", proposer="Dana", label="wrong", reason="not our contract"
        )
        path.down()
        approval, report = curation.approve(proposal.id, role="lead", lead="Lee")
        assert approval.state == "pending" and "unreachable" in report.error
        assert curation.status(bank, PLANTED.document_id).status == "invalidated"  # recorded, not yet in memory
        assert PLANTED.document_id in recalled(hindsight.gateway, bank)

        path.up()
        curation.retry_now()
        worker = DeliveryWorker(Outbox(store), gateway.retain, also=[(curation, counting)])
        assert worker.run_once().delivered == 1
        assert worker.run_once().delivered == 0
        gateway.close()
    assert sent == {(PLANTED.document_id, "invalidated"): 1}
    assert curation.get(approval.id).state == "delivered"
    assert PLANTED.document_id not in recalled(hindsight.gateway, bank)


def test_a_refused_curation_is_parked_and_an_undone_one_is_never_sent(tmp_path):
    sent = []

    def refusing(bank_id, document_id, state, reason=None):
        sent.append((document_id, state))
        if document_id == "doc-refused":
            raise HindsightRequestRejected("Hindsight refused the request: Invalid memory_id")

    curation = Curation(tmp_path / "store.sqlite3")  # no curate: the worker delivers
    refused = curation.propose(
        "b", "doc-refused", role="reviewer", proposer="Dana", label="duplicate", reason="same as doc-1"
    )
    parked, _ = curation.approve(refused.id, role="lead", lead="Lee")
    first = curation.propose("b", "doc-2", role="reviewer", proposer="Dana", label="wrong", reason="misfiled")
    invalidation, _ = curation.approve(first.id, role="lead", lead="Lee")
    undo = curation.propose("b", "doc-2", role="reviewer", proposer="Kim", change="revert", reason="it was right")
    revert, _ = curation.approve(undo.id, role="lead", lead="Lee")

    report = curation.deliver_due(refusing)
    assert (report.delivered, report.failed, report.superseded) == (1, 1, 1)
    assert curation.get(parked.id).state == "failed" and "Invalid memory_id" in curation.get(parked.id).last_error
    assert curation.get(invalidation.id).state == "superseded"  # undone before it was sent: memory stays valid
    assert sent == [("doc-refused", "invalidated"), ("doc-2", "valid")]


def test_inputs_are_refused_naming_the_field_and_nothing_is_recorded(tmp_path):
    curation = Curation(tmp_path / "store.sqlite3")
    cases = [
        (dict(reason="  ", label="wrong"), "reason: required"),
        (dict(reason="x" * 501, label="wrong"), "reason: 501 characters; the limit is 500"),
        (dict(reason="ok", label="stale"), "label: one of wrong, outdated, another_customer, duplicate"),
        (dict(reason="ok", label="wrong", proposer=""), "proposer: required"),
    ]
    for kwargs, message in cases:
        with pytest.raises(CurationInputError, match=message):
            curation.propose("b", "doc-1", role="reviewer", **{"proposer": "Dana", **kwargs})
    with pytest.raises(NotAllowed, match="propose curation needs reviewer"):
        curation.propose("b", "doc-1", role="viewer", proposer="Vic", reason="ok", label="wrong")
    with pytest.raises(Refused, match="doc-1 is valid: a proposal to revert needs it invalidated"):
        curation.propose("b", "doc-1", role="reviewer", proposer="Dana", reason="ok", change="revert")
    proposal = curation.propose("b", "doc-1", role="reviewer", proposer="Dana", reason="ok", label="wrong")
    with pytest.raises(Refused, match="is invalidation proposed"):
        curation.propose("b", "doc-1", role="reviewer", proposer="Kim", reason="again", label="duplicate")
    curation.reject(proposal.id, role="lead", lead="Lee")
    with pytest.raises(Refused, match="already approved or rejected"):
        curation.approve(proposal.id, role="lead", lead="Kim")
    assert [(e.action, e.after) for e in curation.history()] == [
        ("reject", "valid"),
        ("propose", "invalidation proposed"),
    ]


def test_the_curation_log_migrates_and_counts_in_sql_on_both_engines(review_engine):
    curation = Curation(review_engine)
    assert "review_curation" in sa.inspect(review_engine).get_table_names()
    with review_engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert [d for d in diff if "review_curation" in repr(d)] == []
    for doc in ("d1", "d2", "d3"):
        curation.propose("b", doc, role="reviewer", proposer="Dana", reason="wrong one", label="wrong")
    first, second, third = reversed(curation.history())
    curation.approve(first.id, role="lead", lead="Lee")
    curation.approve(second.id, role="lead", lead="Lee")
    curation.reject(third.id, role="lead", lead="Lee")
    revert = curation.propose("b", "d1", role="reviewer", proposer="Kim", change="revert", reason="was right")
    curation.approve(revert.id, role="lead", lead="Lee")
    assert curation.counts() == {"proposals": 4, "approvals": 3, "rejections": 1, "reverts": 1}
    assert curation.pending_count() == 3  # no curate given: the worker delivers
    assert set(curation.statuses("b", ["d1", "d2", "d3", "d4"])) == {"d1", "d2", "d3"}


def test_the_curate_command(monkeypatch, capsys, hindsight, bank_id):
    hindsight.gateway.retain(bank_id, [PLANTED])
    code, out, err = run_command(
        monkeypatch, capsys, hindsight, bank_id, "curate", "propose", "--document", PLANTED.document_id, "--by", "Dana"
    )
    assert code == 2 and "--label: required by propose" in err
    code, out, err = run_command(
        monkeypatch,
        capsys,
        hindsight,
        bank_id,
        "curate",
        "propose",
        "--document",
        PLANTED.document_id,
        "--label",
        "wrong",
        "--reason",
        "x" * 600,
        "--by",
        "Dana",
    )
    assert code == 2 and "--reason: 600 characters; the limit is 500" in err
    code, out, err = run_command(
        monkeypatch,
        capsys,
        hindsight,
        bank_id,
        "curate",
        "propose",
        "--document",
        "PRECEDENT-TYPO",
        "--label",
        "wrong",
        "--reason",
        "r",
        "--by",
        "Dana",
    )
    assert code == 2 and f"--document: 'PRECEDENT-TYPO' is not a document of bank {bank_id}" in err
    code, out, _ = run_command(
        monkeypatch,
        capsys,
        hindsight,
        bank_id,
        "curate",
        "propose",
        "--document",
        PLANTED.document_id,
        "--label",
        "wrong",
        "--reason",
        "another vendor's contract",
        "--by",
        "Dana",
        "--json",
    )
    proposal = json.loads(out)["event"]
    assert code == 0 and proposal["action"] == "propose"
    code, _, err = run_command(
        monkeypatch, capsys, hindsight, bank_id, "curate", "approve", "--proposal", str(proposal["id"]), "--by", "Dana"
    )
    assert code == 1 and "four eyes" in err
    code, out, _ = run_command(
        monkeypatch,
        capsys,
        hindsight,
        bank_id,
        "curate",
        "approve",
        "--proposal",
        str(proposal["id"]),
        "--by",
        "Lee",
        "--json",
    )
    answer = json.loads(out)
    assert code == 0 and (answer["status"], answer["event"]["state"]) == ("invalidated", "delivered")
    assert answer["sentence"].startswith("invalidated by Lee on ")
    assert hindsight.gateway.list_memories(bank_id, document_id=PLANTED.document_id)["total"] == 0
