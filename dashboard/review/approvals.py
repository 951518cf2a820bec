"""Four-eyes release: a decision above its reviewer's approval limit waits for a second approver. No Streamlit.

The outbox records such a decision `awaiting_approval` with its "proposed" step; delivery never claims it
and no reader counts it as a human decision. A second approver (someone else, whose limit covers the amount)
confirms it, and the row becomes `pending` (delivered like any decision), or rejects it, and the row becomes
`returned` (the case is back in the queue). Each step is appended to `review_approvals`: who, in which role,
when, what, with the amount and their limit. The decision service (decisions.py) checks roles and limits.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Engine

from dashboard.access.limits import ApprovalLimits, in_words
from dashboard.access.roles import allowed
from dashboard.delivery.outbox import StoredDecision, stored_decision
from dashboard.settings import Role
from dashboard.store.db import as_utc
from dashboard.store.delivery_queue import leased_to
from dashboard.store.identity import Actor, as_person, same_person
from dashboard.store.kept import KeptUntilTheLogChanges
from dashboard.store.schema import APPROVAL_HELD, AWAITING, PENDING, RETURNED, approvals, decisions

CONFIRMED, REJECTED = "confirmed", "rejected"
CHUNK = 500  # rows read whole by id at a time (a bounded IN list)


class Step(BaseModel):
    step: str  # proposed | confirmed | rejected
    actor: str
    person_id: str | None = None
    role: str
    amount: float
    limit: float | None
    scope: str
    note: str
    at: datetime


class HeldDecision(BaseModel):
    """A decision held for a second approval (or returned by one), with its steps, oldest first."""

    stored: StoredDecision
    steps: list[Step]

    @property
    def proposed(self) -> Step:
        return self.steps[0]

    @property
    def settled(self) -> Step | None:
        return self.steps[-1] if len(self.steps) > 1 else None

    @property
    def awaiting(self) -> bool:
        return self.stored.state == AWAITING

    @property
    def status(self) -> str:
        """As the queues show it."""
        return "awaiting second approval" if self.awaiting else "returned"

    def limit_words(self) -> str:
        """The amount against the proposer's limit, in plain words."""
        p = self.proposed
        return f"{p.actor}'s limit as {p.role} is {p.limit:,.2f}; this invoice is {p.amount:,.2f}, above it."

    def summary(self) -> str:
        """Who decided what, and (once settled) who rejected it, in plain words."""
        d, p = self.stored.decision, self.proposed
        text = f"{d.reviewer} decided {d.outcome} on {p.amount:,.2f} at {p.at:%Y-%m-%d %H:%M} UTC"
        if self.settled is not None:
            text += f"; {self.settled.actor} {self.settled.step} it at {self.settled.at:%Y-%m-%d %H:%M} UTC"
        return text + "."


def second_approver_problem(held: HeldDecision, approver: Actor, role: Role, limits: ApprovalLimits) -> str | None:
    """Why `approver` may not confirm or reject this held decision, for a person; None when they may."""
    if not held.awaiting:
        return f"{held.stored.case_id} has no decision awaiting a second approval."
    if not allowed(role, "decide"):
        return f"Your role ({role}) may not decide cases."
    if same_person(approver, held.stored.decision.person):
        return f"{held.stored.decision.reviewer} proposed this decision; the second approver must be someone else."
    limit = limits.limit_for(approver, role)
    if not limit.covers(held.proposed.amount):
        return f"{in_words(approver, limit, held.proposed.amount)} The second approver's limit must cover it."
    return None


class Approvals:
    """The held decisions of the review store and their steps."""

    def __init__(self, engine: Engine, clock=lambda: datetime.now(UTC)):
        self.engine, self.clock = engine, clock
        self._held = KeptUntilTheLogChanges(
            engine
        )  # (bank, kind) -> its held decisions; the steps move the version too
        self._last_held: dict[
            tuple[str, str], dict[str, HeldDecision]
        ] = {}  # the last read of each, to read again what changed

    def held(self, bank_id: str, case_kind: str, case_id: str | None = None) -> Mapping[str, HeldDecision]:
        """case id -> its held decision, for the cases (or the one case) whose newest decision is awaiting
        approval or returned. A queue page asks for every case on every run: that answer is kept until the log
        changes (KeptUntilTheLogChanges)."""
        if case_id is not None:
            return self._read_held(bank_id, case_kind, case_id)
        return self._held.get((bank_id, case_kind), lambda: self._held_now(bank_id, case_kind))

    @staticmethod
    def _standing_held(bank_id: str, case_kind: str, case_id: str | None = None) -> sa.ColumnElement:
        """The held rows (indexed by state: few) no revision of their case came after."""
        mine = sa.and_(decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind)
        if case_id is not None:
            mine = sa.and_(mine, decisions.c.case_id == case_id)
        newer = decisions.alias("newer")
        superseded = sa.exists().where(
            newer.c.bank_id == decisions.c.bank_id,
            newer.c.case_kind == decisions.c.case_kind,
            newer.c.case_id == decisions.c.case_id,
            newer.c.revision > decisions.c.revision,
        )
        return sa.and_(mine, decisions.c.state.in_(APPROVAL_HELD), ~superseded)

    def _read_held(self, bank_id: str, case_kind: str, case_id: str | None = None) -> dict[str, HeldDecision]:
        return {
            h.stored.case_id: h
            for h in self._with_steps(sa.select(decisions).where(self._standing_held(bank_id, case_kind, case_id)))
        }

    def _held_now(self, bank_id: str, case_kind: str) -> dict[str, HeldDecision]:
        """The held decisions after the log moved: which rows are held is read by id, state and number of steps, and
        only the rows not held as they were before are read whole (at 10,000 held rows, building them all took ~0.2 s
        of each page run after a decision)."""
        d, a = decisions.c, approvals.c
        query = (
            sa.select(d.case_id, d.id, d.state, sa.func.count(a.id))
            .select_from(decisions.outerjoin(approvals, a.decision_id == d.id))
            .where(self._standing_held(bank_id, case_kind))
            .group_by(d.case_id, d.id, d.state)
        )
        with self.engine.connect() as conn:
            now = {case_id: (row_id, state, steps) for case_id, row_id, state, steps in conn.execute(query)}
        before = self._last_held.get((bank_id, case_kind), {})
        held = {c: h for c, h in before.items() if now.get(c) == (h.stored.id, h.stored.state, len(h.steps))}
        fresh = [row_id for c, (row_id, *_) in now.items() if c not in held]
        for start in range(0, len(fresh), CHUNK):
            held |= {
                h.stored.case_id: h
                for h in self._with_steps(sa.select(decisions).where(d.id.in_(fresh[start : start + CHUNK])))
            }
        self._last_held[(bank_id, case_kind)] = held
        return held

    def waiting(self, limit: int | None = None) -> list[HeldDecision]:
        """The decisions awaiting a second approval, in every bank, oldest first (all, or the `limit` oldest)."""
        return self._with_steps(sa.select(decisions).where(decisions.c.state == AWAITING).limit(limit))

    def waiting_count(self) -> int:
        """How many decisions await a second approval, in every bank (the Overview)."""
        with self.engine.connect() as conn:
            return int(conn.execute(sa.select(sa.func.count()).where(decisions.c.state == AWAITING)).scalar_one())

    def trail(self, bank_id: str, case_kind: str, case_id: str) -> list[HeldDecision]:
        """Every decision on the case that went through a second approval, with all its steps, oldest first."""
        return self._with_steps(
            sa.select(decisions).where(
                decisions.c.bank_id == bank_id,
                decisions.c.case_kind == case_kind,
                decisions.c.case_id == case_id,
                decisions.c.id.in_(sa.select(approvals.c.decision_id)),
            )
        )

    def log(self) -> list[dict]:
        """Every step of every second approval, newest first, with its case (the Audit log page)."""
        query = (
            sa.select(
                approvals.c.decision_id,
                decisions.c.bank_id,
                decisions.c.case_id,
                approvals.c.step,
                approvals.c.actor,
                approvals.c.role,
                approvals.c.amount,
                approvals.c["limit"],
                approvals.c.note,
                approvals.c.at,
            )
            .join(decisions, decisions.c.id == approvals.c.decision_id)
            .order_by(approvals.c.id.desc())
        )
        with self.engine.connect() as conn:
            return [{**row._mapping, "at": as_utc(row.at)} for row in conn.execute(query)]

    def _with_steps(self, query) -> list[HeldDecision]:
        with self.engine.connect() as conn:
            rows = [stored_decision(r) for r in conn.execute(query.order_by(decisions.c.id))]
            steps = (
                conn.execute(
                    sa.select(approvals)
                    .where(approvals.c.decision_id.in_([r.id for r in rows]))
                    .order_by(approvals.c.id)
                ).all()
                if rows
                else []
            )
        by_row: dict[int, list[Step]] = {}
        for s in steps:
            by_row.setdefault(s.decision_id, []).append(Step.model_validate({**s._mapping, "at": as_utc(s.at)}))
        return [HeldDecision(stored=r, steps=by_row[r.id]) for r in rows]

    def settle(
        self,
        held: HeldDecision,
        approver: Actor,
        role: Role,
        limit: float | None,
        *,
        confirm: bool,
        note: str = "",
        writer: str | None = None,
    ) -> bool:
        """Confirm (the row becomes pending, due now, leased to `writer`: see outbox.leased_to) or reject (returned),
        with its step, in one transaction. False when someone settled it first: only one second approval lands."""
        now, approver = self.clock(), as_person(approver)
        with self.engine.begin() as conn:
            changed = conn.execute(
                decisions.update()
                .where(decisions.c.id == held.stored.id, decisions.c.state == AWAITING)
                .values(
                    state=PENDING if confirm else RETURNED,
                    next_attempt_at=now,
                    **(leased_to(writer, now) if confirm else {}),
                )
            ).rowcount
            if changed != 1:
                return False
            conn.execute(
                approvals.insert().values(
                    decision_id=held.stored.id,
                    step=CONFIRMED if confirm else REJECTED,
                    actor=approver.name,
                    person_id=approver.id,
                    role=role,
                    amount=held.proposed.amount,
                    limit=limit,
                    scope=held.proposed.scope,
                    note=note,
                    at=now,
                )
            )
        return True
