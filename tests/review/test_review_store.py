"""The review store on SQLite and PostgreSQL: revisions and conflicts, leased delivery, per-row failures."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from dashboard.delivery.outbox import Outbox
from dashboard.delivery.worker import DeliveryWorker
from dashboard.hindsight.errors import HindsightRequestRejected, HindsightUnavailable
from dashboard.hindsight.wire import MemoryRecord
from dashboard.store.decision import EvidenceItem, EvidenceSnapshot
from dashboard.store.errors import RevisionConflict
from tests.helpers import plain_decision


def _memory(case_id="E-1", text="approved") -> MemoryRecord:
    return MemoryRecord(document_id=f"decision-{case_id}", content=text, tags=["vendor:V01"])


def test_a_decision_on_a_stale_revision_is_a_conflict_not_an_overwrite(review_engine):
    outbox = Outbox(review_engine)
    assert outbox.current_revision("fin", "exception", "E-1") == 0
    # Two reviewers load the undecided case (revision 0); Dana submits first.
    dana, _ = outbox.submit("fin", plain_decision(reviewer="Dana"), _memory(text="dana"), None, base_revision=0)
    with pytest.raises(RevisionConflict) as conflict:
        outbox.submit(
            "fin", plain_decision(outcome="reject", reviewer="Sam"), _memory(text="sam"), None, base_revision=0
        )
    assert conflict.value.theirs.id == dana.id and conflict.value.theirs.decision.reviewer == "Dana"
    assert [e.decision.reviewer for e in outbox.history("exception", "E-1")] == ["Dana"]
    # Sam saw Dana's decision and chose "replace": a new revision on top of hers.
    sam, _ = outbox.submit(
        "fin", plain_decision(outcome="reject", reviewer="Sam"), _memory(text="sam"), None, base_revision=1
    )
    assert (sam.revision, sam.decision.reviewer) == (2, "Sam")
    assert [e.revision for e in outbox.history("exception", "E-1")] == [2, 1]  # append-only
    # Another bank's case of the same id has revisions of its own.
    assert outbox.current_revision("other", "exception", "E-1") == 0


def test_racing_reviewers_on_one_revision_land_exactly_one_and_each_gets_its_own_row(review_engine):
    outboxes = [Outbox(review_engine) for _ in range(2)]
    results: dict[str, object] = {}
    barrier = threading.Barrier(8)

    def decide(i: int) -> None:
        barrier.wait()
        try:
            results[f"r{i}"] = outboxes[i % 2].submit(
                "fin", plain_decision(reviewer=f"R{i}"), _memory(text=f"r{i}"), None, base_revision=0
            )[0]
        except RevisionConflict as exc:
            results[f"r{i}"] = exc

    threads = [threading.Thread(target=decide, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    landed = [r for r in results.values() if not isinstance(r, RevisionConflict)]
    assert len(landed) == 1 and len(results) == 8
    (winner,) = landed
    assert winner.decision.reviewer == outboxes[0].latest("exception", "E-1").decision.reviewer
    assert all(c.theirs.id == winner.id for c in results.values() if isinstance(c, RevisionConflict))


def test_the_evidence_snapshot_is_kept_with_the_decision(review_engine):
    outbox = Outbox(review_engine)
    snapshot = EvidenceSnapshot(
        available=True, items=[EvidenceItem(id="m-1", text_sha256="ab" * 32, relevant=True)], recommendation="approve"
    )
    stored, _ = outbox.submit("fin", plain_decision(), _memory(), None, evidence=snapshot)
    assert outbox.get(stored.id).evidence == snapshot


def test_outage_backs_off_every_row_and_a_rejection_parks_only_its_row(review_engine):
    clock = [datetime(2026, 11, 29, 12, tzinfo=UTC)]
    outbox = Outbox(review_engine, clock=lambda: clock[0])
    sent: list[str] = []
    down = [True]

    def retain(bank, records):
        if down[0]:
            raise HindsightUnavailable("connection refused")
        if records[0].content == "bad":
            raise HindsightRequestRejected("Hindsight refused the request: items.0.content: too long")
        sent.extend(r.document_id for r in records)

    ids = [
        outbox.record("fin", plain_decision(f"E-{i}"), _memory(f"E-{i}", "bad" if i == 0 else "ok")) for i in range(21)
    ]
    report = outbox.deliver_due(retain)
    assert (report.delivered, report.still_pending, report.error) == (0, 21, "connection refused")
    assert {e.attempts for e in outbox.history()} == {1}
    assert outbox.deliver_due(retain).delivered == 0  # every row backs off, not only the first

    down[0] = False
    clock[0] += timedelta(seconds=1.5)
    report = outbox.deliver_due(retain)
    assert (report.delivered, report.failed, report.still_pending) == (20, 1, 0)
    parked = outbox.get(ids[0])
    assert parked.state == "failed" and "too long" in parked.last_error and outbox.failed_count() == 1
    assert len(sent) == 20 and "decision-E-0" not in sent

    # A lead discards it; a discarded row is never sent and cannot be retried.
    assert outbox.discard_failed(ids[0]) and outbox.get(ids[0]).state == "discarded"
    assert not outbox.retry_failed(ids[0])
    assert outbox.deliver_due(retain).delivered == 0


def test_a_lead_retries_a_parked_row_after_the_cause_is_fixed(review_engine):
    outbox = Outbox(review_engine)
    rejecting = [True]

    def retain(bank, records):
        if rejecting[0]:
            raise HindsightRequestRejected("Hindsight refused the request: bank is read-only")

    stored, report = outbox.submit("fin", plain_decision(), _memory(), retain)
    assert report.failed == 1 and outbox.get(stored.id).state == "failed"
    assert not outbox.discard_failed(stored.id + 1000)
    rejecting[0] = False
    assert outbox.retry_failed(stored.id)
    assert outbox.deliver_due(retain).delivered == 1 and outbox.get(stored.id).state == "delivered"


def test_two_workers_on_one_store_send_each_row_once(review_engine):
    sent = Counter()
    lock = threading.Lock()

    def slow_retain(bank, records):
        threading.Event().wait(0.01)
        with lock:
            sent.update(r.document_id for r in records)

    first = Outbox(review_engine)
    for i in range(60):
        first.record("fin", plain_decision(f"E-{i}"), _memory(f"E-{i}"))
    workers = [DeliveryWorker(Outbox(review_engine), slow_retain, idle_s=0.05) for _ in range(2)]
    for w in workers:
        w.start()
    try:
        deadline = datetime.now(UTC) + timedelta(seconds=60)
        while first.pending_count() and datetime.now(UTC) < deadline:
            threading.Event().wait(0.1)
    finally:
        for w in workers:
            w.stop()
    assert len(sent) == 60 and set(sent.values()) == {1}
    assert sum(w.delivered for w in workers) == 60
    assert {e.state for e in first.history()} == {"delivered"}


def test_a_crashed_workers_lease_expires_and_the_row_is_delivered_by_another(review_engine):
    clock = [datetime(2026, 11, 29, 12, tzinfo=UTC)]
    outbox = Outbox(review_engine, clock=lambda: clock[0])
    outbox.record("fin", plain_decision(), _memory())
    assert len(outbox._claim("crashed-worker", clock[0], 10, None)) == 1  # claimed, then the process died
    sent = []
    assert outbox.deliver_due(lambda bank, records: sent.extend(records)).delivered == 0  # leased: skipped
    clock[0] += timedelta(minutes=5)
    assert outbox.deliver_due(lambda bank, records: sent.extend(records)).delivered == 1 and len(sent) == 1


def test_claims_lease_comments_and_case_flags_are_shared_through_the_store(review_engine):
    from dashboard.review.casework import Casework
    from dashboard.store.db import upgrade

    upgrade(review_engine)
    clock = [datetime(2026, 11, 29, 12, tzinfo=UTC)]
    dana, sam = Casework(review_engine, clock=lambda: clock[0]), Casework(review_engine, clock=lambda: clock[0])
    assert dana.claim("fin", "exception", "E-1", "Dana", lease_s=60).holder == "Dana"
    assert sam.claim("fin", "exception", "E-1", "Sam", lease_s=60).holder == "Dana"  # hers until the lease runs out
    clock[0] += timedelta(seconds=61)
    assert sam.holder_of("fin", "exception", "E-1") is None
    assert sam.claim("fin", "exception", "E-1", "Sam").holder == "Sam"
    assert not dana.release("fin", "exception", "E-1", "Dana") and sam.release("fin", "exception", "E-1", "Sam")

    dana.comment("fin", "exception", "E-1", "Dana", "Vendor says the price was agreed.")
    sam.comment("fin", "exception", "E-1", "Sam", "Contract amendment attached.")
    assert [c.author for c in sam.comments("fin", "exception", "E-1")] == ["Dana", "Sam"]

    dana.put_flags("fin", "exception", "E-1", {"crowded_out": True, "lost": 2})
    sam.put_flags("fin", "exception", "E-1", {"crowded_out": False, "lost": 0})  # recomputed: replaces
    assert Casework(review_engine).flags("fin", "exception") == {"E-1": {"crowded_out": False, "lost": 0}}
    # different keys from different writers merge (each key replaced whole, nested values not merged)
    dana.put_many_flags(
        "fin", "exception", {"E-1": {"recall": {"exact": 2, "ids": ["a", "b"]}}, "E-2": {"recall": {"exact": 0}}}
    )
    sam.put_flags("fin", "exception", "E-1", {"incidents": ["crowded_out"]})
    dana.put_flags("fin", "exception", "E-1", {"recall": {"ids": ["c"]}})
    assert Casework(review_engine).flags("fin", "exception") == {
        "E-1": {"crowded_out": False, "lost": 0, "recall": {"ids": ["c"]}, "incidents": ["crowded_out"]},
        "E-2": {"recall": {"exact": 0}},
    }
    assert Casework(review_engine).flags("fin", "ticket") == {}
