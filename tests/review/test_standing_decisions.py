"""The standing decisions (one row per case: its newest decision not held), kept by the database's triggers on both
engines of the review store: after every kind of write the log sees (one decision or many in one statement, a state
changed by delivery, an approval or by hand, rows deleted), the table equals what the whole log says, and the
migration that adds it fills it from the log it finds."""

import random
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import command

from dashboard.delivery.outbox import Outbox
from dashboard.hindsight.wire import MemoryRecord
from dashboard.store.db import alembic_config, upgrade
from dashboard.store.decision import Hold, ReviewerDecision
from dashboard.store.schema import HELD, approvals, decisions, standing_decisions
from dashboard.store.standing import DecisionState, StandingDecisions

STATES = ("pending", "delivered", "superseded", "failed", "discarded", *HELD)
HOLD = Hold(role="ap_clerk", amount=90_000, limit=10_000, scope="vendor V01")


def _decision(case_id: str, n: int) -> tuple[ReviewerDecision, MemoryRecord]:
    kind = "ticket" if case_id.startswith("T") else "exception"
    decision = ReviewerDecision(
        case_id=case_id,
        case_kind=kind,
        reviewer="Dana",
        authenticated=False,
        outcome=("approve", "reject", "escalate")[n % 3],
        overridden=n % 2 == 0,
        reason_code="OTHER" if n % 2 == 0 else None,
        note="n" if n % 2 == 0 else "",
        action="override" if kind == "ticket" else None,
        report_by="vendor" if kind == "exception" else None,
        decided_at=datetime(2026, 11, 1 + n % 28, tzinfo=UTC),
    )
    memory = MemoryRecord(
        document_id=f"decision-{case_id}",
        content=f"decision {n}",
        tags=[f"vendor:V{n % 3}"],
        metadata={"agent_confidence": f"{n % 10 / 10:.2f}"},
    )
    return decision, memory


def _by_the_log(engine: sa.Engine) -> dict[tuple, tuple]:
    """(bank, kind, case) -> its newest decision not held, as the standing table has it, read from the whole log."""
    newest: dict[tuple, tuple] = {}
    with engine.connect() as conn:
        for row in conn.execute(sa.select(decisions).where(decisions.c.state.not_in(HELD)).order_by(decisions.c.id)):
            newest[(row.bank_id, row.case_kind, row.case_id)] = (
                row.id,
                row.state,
                row.decision["outcome"],
                row.decision.get("action"),
                row.decided_on,
                row.overridden,
                row.reason_code,
                row.report_group,
                row.record["metadata"].get("agent_confidence"),
            )
    return newest


def _standing(engine: sa.Engine) -> dict[tuple, tuple]:
    with engine.connect() as conn:
        rows = conn.execute(sa.select(standing_decisions))
        return {
            (r.bank_id, r.case_kind, r.case_id): (
                r.decision_id,
                r.state,
                r.outcome,
                r.action,
                r.decided_on,
                r.overridden,
                r.reason_code,
                r.report_group,
                r.agent_confidence,
            )
            for r in rows
        }


def _states_by_the_log(engine: sa.Engine, case_kind: str) -> dict[str, DecisionState]:
    return {
        case: DecisionState(state, outcome, action)
        for (bank, kind, case), (_id, state, outcome, action, *_rest) in _by_the_log(engine).items()
        if (bank, kind) == ("fin", case_kind)
    }


def _insert_many(engine: sa.Engine, outbox: Outbox, rng: random.Random, cases: list[str], n: int) -> None:
    """Several decisions in one statement, a case more than once, some held: as an import or a COPY writes them."""
    rows, revisions = [], {}
    for _ in range(rng.randint(2, 6)):
        case_id = rng.choice(cases)
        decision, memory = _decision(case_id, n + len(rows))
        key = (decision.case_kind, case_id)
        revisions[key] = revisions.get(key) or outbox.current_revision("fin", decision.case_kind, case_id)
        revisions[key] += 1
        rows.append(
            dict(
                bank_id="fin",
                case_kind=decision.case_kind,
                case_id=case_id,
                revision=revisions[key],
                document_id=memory.document_id,
                reviewer="Dana",
                decision=decision.model_dump(mode="json"),
                record=memory.model_dump(mode="json"),
                created_at=decision.decided_at,
                decided_on=decision.decided_at.date(),
                overridden=decision.overridden,
                reason_code=decision.reason_code,
                report_group=memory.tags[0][7:] if decision.report_by else None,
                state=rng.choice(STATES),
                attempts=0,
                next_attempt_at=decision.decided_at,
            )
        )
    with engine.begin() as conn:
        conn.execute(decisions.insert().values(rows))  # one INSERT ... VALUES (...), (...): one statement


def _delete(engine: sa.Engine, ids: list[int]) -> None:
    with engine.begin() as conn:
        conn.execute(approvals.delete().where(approvals.c.decision_id.in_(ids)))
        conn.execute(decisions.delete().where(decisions.c.id.in_(ids)))


def test_the_standing_table_equals_the_logs_newest_decision_per_case_after_every_kind_of_write(review_engine):
    outbox = Outbox(review_engine)
    page = StandingDecisions(review_engine)  # a queue page's reader, kept across the steps: reads only what changed
    rng = random.Random(21)
    cases = ["E-1", "E-2", "E-3", "T-1"]
    for n in range(120):
        with review_engine.connect() as conn:
            ids = list(conn.execute(sa.select(decisions.c.id)).scalars())
        step = rng.choice(
            ["record", "record", "many", "state", "states", "lease", "delete", "deletes"] if ids else ["record"]
        )
        if step == "record":
            held = rng.choice([None, "hold", "blind"])
            outbox.record(
                "fin", *_decision(rng.choice(cases), n), hold=HOLD if held == "hold" else None, blind=held == "blind"
            )
        elif step == "many":
            _insert_many(review_engine, outbox, rng, cases, n)
        elif step in ("state", "states"):  # delivery, a confirmation, a return, a lead's supersede, or by hand
            chosen = rng.sample(ids, min(len(ids), 1 if step == "state" else 4))
            with review_engine.begin() as conn:
                conn.execute(decisions.update().where(decisions.c.id.in_(chosen)).values(state=rng.choice(STATES)))
        elif step == "lease":  # a claim: no state changes, nothing stands differently
            with review_engine.begin() as conn:
                conn.execute(
                    decisions.update()
                    .where(decisions.c.id.in_(rng.sample(ids, min(len(ids), 3))))
                    .values(lease_owner="w")
                )
        else:
            _delete(review_engine, rng.sample(ids, min(len(ids), 1 if step == "delete" else 3)))
        assert _standing(review_engine) == _by_the_log(review_engine), f"after step {n} ({step})"
        for kind in ("exception", "ticket"):
            assert dict(page.states("fin", kind)) == _states_by_the_log(review_engine, kind), f"after step {n} ({step})"
    assert (
        len(_standing(review_engine)) >= 2
    )  # the sequence left cases standing, not an empty table compared with an empty log


def test_a_confirmation_that_lands_late_leaves_the_newer_decision_standing(review_engine):
    outbox = Outbox(review_engine)
    held = outbox.record("fin", *_decision("E-1", 1), hold=HOLD)
    newer = outbox.record("fin", *_decision("E-1", 2))
    assert _standing(review_engine)[("fin", "exception", "E-1")][0] == newer
    with review_engine.begin() as conn:  # the approver confirms the older, held decision
        conn.execute(decisions.update().where(decisions.c.id == held).values(state="pending"))
    assert _standing(review_engine)[("fin", "exception", "E-1")][:2] == (newer, "pending")
    _delete(review_engine, [newer])  # gone by hand: the confirmed one stands
    assert _standing(review_engine)[("fin", "exception", "E-1")][:2] == (held, "pending")
    _delete(review_engine, [held])
    assert _standing(review_engine) == {}


def test_the_migration_fills_the_table_from_the_log_it_finds(review_engine):
    outbox = Outbox(review_engine)
    for n, case_id in enumerate(["E-1", "E-1", "E-2", "T-1", "E-3"]):
        outbox.record("fin", *_decision(case_id, n), hold=HOLD if case_id == "E-3" else None)
    config = alembic_config(review_engine)
    command.downgrade(config, "0011_case_flags_jsonb")
    command.upgrade(config, "head")
    upgrade(review_engine)  # idempotent
    assert set(_standing(review_engine)) == {
        ("fin", "exception", "E-1"),
        ("fin", "exception", "E-2"),
        ("fin", "ticket", "T-1"),
    }
    assert _standing(review_engine) == _by_the_log(review_engine)


def test_after_a_decision_a_queue_reads_only_the_rows_changed_since(review_engine):
    outbox = Outbox(review_engine)
    for n in range(30):
        outbox.record("fin", *_decision(f"E-{n}", n))
    page = StandingDecisions(review_engine)
    before = page.states("fin", "exception")
    selects: list[str] = []
    sa.event.listen(
        review_engine,
        "before_cursor_execute",
        lambda conn, cursor, statement, *args: (
            selects.append(statement) if statement.lstrip().startswith("SELECT") else None
        ),
    )
    with review_engine.begin() as conn:  # a delivery elsewhere: a state changed
        conn.execute(decisions.update().where(decisions.c.case_id == "E-3").values(state="delivered"))
    outbox.record("fin", *_decision("E-7", 32))  # and a decision: reject becomes escalate

    after = page.states("fin", "exception")

    assert {case for case in after if after[case] != before[case]} == {"E-3", "E-7"} and len(after) == 30
    assert after == _states_by_the_log(review_engine, "exception")
    rows = [s for s in selects if "review_standing_decisions" in s and "count" not in s]
    assert len(rows) == 1 and "change_seq >" in rows[0]  # the changed rows, not the table
    selects.clear()
    assert page.states("fin", "exception") is after and not any(
        "review_standing_decisions" in s for s in selects
    )  # nothing moved
    with (
        review_engine.begin() as conn
    ):  # a case's decisions deleted by hand: it leaves, and the whole table is read again
        conn.execute(decisions.delete().where(decisions.c.case_id == "E-9"))
    assert "E-9" not in page.states("fin", "exception") and len(page.states("fin", "exception")) == 29
