"""What the Overview counts, counted by the review store's database on both engines: the standing decisions by day,
outcome, reason and vendor (Outbox.standing_counts), and a queue's flags (QueueFlags), cases no longer queued left
out, kept between runs and brought up to date by what another instance writes or deletes; the migration that copies
older decisions' report columns out of their JSON."""

from datetime import UTC, date, datetime

import sqlalchemy as sa
from alembic import command

from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.casework import Casework
from dashboard.review.flag_counts import FinanceCounts
from dashboard.store.db import alembic_config, upgrade
from dashboard.store.decision import Hold, ReviewerDecision
from dashboard.store.schema import case_flags, decisions
from dashboard.store.standing import StandingCount


def _decide(
    outbox: Outbox,
    case_id: str,
    *,
    overridden: bool,
    day: int,
    reason: str | None = None,
    tags: tuple[str, ...] = ("vendor:V01",),
    hold: Hold | None = None,
) -> int:
    decision = ReviewerDecision(
        case_id=case_id,
        case_kind="exception",
        reviewer="Dana",
        authenticated=False,
        outcome="reject" if overridden else "approve",
        overridden=overridden,
        reason_code=reason,
        decided_at=datetime(2026, 11, day, 9, tzinfo=UTC),
        report_by="vendor",
    )
    return outbox.record(
        "fin", decision, MemoryRecord(document_id=f"decision-{case_id}", content="c", tags=list(tags)), hold=hold
    )


def test_the_standing_decisions_are_counted_by_day_outcome_reason_and_vendor(review_engine):
    outbox = Outbox(review_engine)
    _decide(outbox, "E-1", overridden=False, day=1)
    _decide(
        outbox, "E-1", overridden=True, day=2, reason="PRICE_AGREED", tags=("kind:decision", "vendor:V07", "vendor:V09")
    )
    _decide(outbox, "E-2", overridden=False, day=2)
    _decide(outbox, "E-3", overridden=True, day=2, reason="OTHER", tags=())  # no vendor tag: the queue names it
    _decide(
        outbox, "E-4", overridden=True, day=3, hold=Hold(role="reviewer", amount=1.0, limit=0.5, scope="s")
    )  # not a decision yet
    assert outbox.standing_counts("fin", "exception") == (
        StandingCount(date(2026, 11, 2), False, None, None, None, 1),
        StandingCount(date(2026, 11, 2), True, "OTHER", None, "E-3", 1),
        StandingCount(date(2026, 11, 2), True, "PRICE_AGREED", "V07", None, 1),
    )
    assert outbox.standing_counts("fin", "ticket") == () and outbox.standing_counts("other", "exception") == ()
    for ticket in ("T-1", "T-2"):  # ticket overrides have no vendor: counted together, not one row per ticket
        outbox.record(
            "fin",
            ReviewerDecision(
                case_id=ticket,
                case_kind="ticket",
                reviewer="Ada",
                authenticated=False,
                outcome="approve",
                overridden=True,
                action="override",
                decided_at=datetime(2026, 11, 2, tzinfo=UTC),
            ),
            MemoryRecord(document_id=f"interaction-{ticket}", content="c", tags=[]),
        )
    assert outbox.standing_counts("fin", "ticket") == (StandingCount(date(2026, 11, 2), True, None, None, None, 2),)
    _decide(outbox, "E-2", overridden=True, day=4, reason="OTHER")  # the log moved: read again
    assert StandingCount(date(2026, 11, 4), True, "OTHER", "V01", None, 1) in outbox.standing_counts("fin", "exception")


def test_a_queues_incidents_are_counted_per_case_and_kind_leaving_out_cases_no_longer_queued(review_engine):
    upgrade(review_engine)
    casework = Casework(review_engine)
    casework.put_many_flags(
        "sup",
        "ticket",
        {
            "T-1": {
                "incidents": ["other_customer", "other_customer", "crowded_out"]
            },  # one case, counted once per kind
            "T-2": {"incidents": []},
            "T-3": {"recall": {"path": "tagged"}},  # never checked for incidents
            "T-OLD": {"incidents": ["other_customer"]},  # no longer queued
        },
    )
    flags = casework.queue_flags("sup", "ticket", ["T-1", "T-2", "T-3", "T-4"])
    assert flags.extra == ["T-OLD"] and flags.incidents_checked_anywhere
    assert flags.incidents() == (2, 1, (("crowded_out", 1), ("other_customer", 1)))
    nothing = casework.queue_flags("sup", "exception", ["E-1"])
    assert (
        nothing.unmeasured,
        nothing.incidents_checked_anywhere,
        nothing.incidents(),
        nothing.finance().recalled,
    ) == (["E-1"], False, (0, 0, ()), 0)


def _recall(action: str, exact: int, lost: int | None, relevant: int) -> dict:
    return {"recall": {"action": action, "exact": exact, "crowd_out_lost": lost, "relevant": relevant}}


def _change_seq(engine, case_id: str) -> int:
    with engine.connect() as conn:
        return conn.execute(sa.select(case_flags.c.change_seq).where(case_flags.c.case_id == case_id)).scalar_one()


def test_the_kept_counts_follow_what_another_instance_writes_and_deletes(review_engine):
    upgrade(review_engine)
    reader, writer = Casework(review_engine), Casework(review_engine)  # two instances sharing one store
    queue = ["E-1", "E-2", "E-3"]
    writer.put_many_flags(
        "fin", "exception", {"E-1": _recall("approve", 2, 0, 2), "E-2": _recall("reject", 1, None, 0)}
    )
    first = reader.queue_flags("fin", "exception", queue)
    assert first.finance() == FinanceCounts(2, 1, 0, 0, 1, (("approve", 1), ("reject", 1))) and first.unmeasured == [
        "E-3"
    ]
    assert reader.queue_flags("fin", "exception", queue) is first  # nothing written, the same ids: the same answer
    assert reader.queue_flags("fin", "exception", list(queue)) is not first  # other ids (equal or not): counted again
    written = _change_seq(review_engine, "E-2")

    writer.put_many_flags("fin", "exception", {"E-2": _recall("reject", 1, 3, 1), "E-3": _recall("approve", 4, 0, 4)})
    assert _change_seq(review_engine, "E-2") > written  # the database numbered the rewrite
    then = reader.queue_flags("fin", "exception", queue)
    assert then.finance() == FinanceCounts(3, 3, 1, 3, 0, (("approve", 2), ("reject", 1)))
    assert then.missed(5) == [("E-2", 1, 3, "reject")] and then.unmeasured == []

    writer.put_many_flags(
        "fin", "exception", {"E-1": {"incidents": ["crowded_out"]}}
    )  # another key: the recall's stays
    checked = reader.queue_flags("fin", "exception", queue)
    assert checked.incidents() == (1, 1, (("crowded_out", 1),)) and checked.finance() == then.finance()

    with review_engine.begin() as conn:  # deleted by hand: the counts are read again
        conn.execute(case_flags.delete().where(case_flags.c.case_id == "E-2"))
    gone = reader.queue_flags("fin", "exception", queue)
    assert (
        gone.finance() == FinanceCounts(2, 2, 0, 0, 0, (("approve", 2),))
        and gone.missed(5) == []
        and gone.unmeasured == ["E-2"]
    )
    assert reader.queue_flags("fin", "exception", ["E-3"]).finance().recalled == 1  # E-1, no longer queued, left out


def test_the_report_columns_of_decisions_written_before_them_are_filled_from_their_json(review_engine):
    upgrade(review_engine)
    config = alembic_config(review_engine)
    command.downgrade(config, "0009_decision_log_version")
    decision = ReviewerDecision(
        case_id="E-9",
        case_kind="exception",
        reviewer="Dana",
        authenticated=False,
        outcome="reject",
        overridden=True,
        reason_code="PRICE_AGREED",
        decided_at=datetime(2026, 10, 30, 23, tzinfo=UTC),
    )
    record = MemoryRecord(document_id="decision-E-9", content="c", tags=["kind:decision", "vendor:V05"])
    columns = (
        "bank_id",
        "case_kind",
        "case_id",
        "revision",
        "document_id",
        "reviewer",
        "created_at",
        "state",
        "attempts",
        "next_attempt_at",
    )
    old = sa.table(
        "review_decisions", *map(sa.column, columns), sa.column("decision", sa.JSON), sa.column("record", sa.JSON)
    )
    now = datetime(2026, 10, 31, tzinfo=UTC)
    with review_engine.begin() as conn:
        conn.execute(
            old.insert().values(
                bank_id="fin",
                case_kind="exception",
                case_id="E-9",
                revision=1,
                document_id="decision-E-9",
                reviewer="Dana",
                decision=decision.model_dump(mode="json"),
                record=record.model_dump(mode="json"),
                created_at=now,
                state="delivered",
                attempts=1,
                next_attempt_at=now,
            )
        )
    command.upgrade(config, "head")
    with review_engine.connect() as conn:
        row = conn.execute(
            sa.select(decisions.c.decided_on, decisions.c.overridden, decisions.c.reason_code, decisions.c.report_group)
        ).one()
    assert tuple(row) == (date(2026, 10, 30), True, "PRICE_AGREED", "V05")
