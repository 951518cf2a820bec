"""Blind second review: a share of cases, chosen by a stable hash of the case id, is decided twice. No Streamlit.

The first decision on a selected case is recorded `awaiting_second` (not delivered, not a human decision
anywhere). A different reviewer decides it again without seeing it. The same outcome releases the first decision
(`pending`, delivered as usual); another outcome holds it `awaiting_lead`, and a lead (neither of the two) decides:
the lead's decision is a new decisions row, delivered; the first becomes `superseded`. The second reviewer's and
the lead's decisions are steps in `review_second_reviews`, so our audit keeps all three. The decision service
(decisions.py) checks roles and who may take each step.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Connection, Engine

from dashboard.access.roles import allowed
from dashboard.delivery.outbox import StoredDecision, stored_decision
from dashboard.settings import Role
from dashboard.store.db import as_utc
from dashboard.store.decision import ReviewerDecision
from dashboard.store.delivery_queue import leased_to
from dashboard.store.identity import Actor, same_person
from dashboard.store.schema import (
    AWAITING_LEAD,
    AWAITING_SECOND,
    PENDING,
    SECOND_HELD,
    SUPERSEDED,
    decisions,
    second_reviews,
)

FIRST, SECOND, LEAD = "first", "second", "lead"


def selected(case_id: str, share: float) -> bool:
    """Whether the case gets a blind second review: sha256 of its id read as a fraction of [0, 1), below `share`.
    The same answer in every process and on every machine (Python's hash() is salted per process)."""
    fraction = int.from_bytes(hashlib.sha256(case_id.encode()).digest()[:8], "big") / 2**64
    return fraction < share


class ReviewStep(BaseModel):
    step: str  # first | second | lead
    actor: str
    person_id: str | None = None
    role: str
    outcome: str
    decision: ReviewerDecision
    lead_decision_id: int | None = None
    at: datetime


class BlindCase(BaseModel):
    """A first decision under blind second review, with the steps taken on it, oldest first."""

    first: StoredDecision
    steps: list[ReviewStep]

    @property
    def case_id(self) -> str:
        return self.first.case_id

    @property
    def awaiting_second(self) -> bool:
        return self.first.state == AWAITING_SECOND

    @property
    def awaiting_lead(self) -> bool:
        return self.first.state == AWAITING_LEAD

    @property
    def second(self) -> ReviewStep | None:
        return next((s for s in self.steps if s.step == SECOND), None)

    @property
    def status(self) -> str:
        return "awaiting blind second review" if self.awaiting_second else "awaiting lead"


def second_review_problem(case: BlindCase, who: Actor, role: Role) -> str | None:
    """Why `who` may not give the blind second review; None when they may. Says nothing of the first decision
    beyond the fact that they made it."""
    if not case.awaiting_second:
        return f"{case.case_id} has no decision awaiting a blind second review."
    if not allowed(role, "decide"):
        return f"Your role ({role}) may not decide cases."
    if same_person(who, case.first.decision.person):
        return "You made the first decision on this case; the second review must be someone else's."
    return None


def lead_problem(case: BlindCase, who: Actor, role: Role) -> str | None:
    """Why `who` may not settle the disagreement; None when they may."""
    if not case.awaiting_lead:
        return f"{case.case_id} has no disagreement awaiting a lead."
    if not allowed(role, "settle_disagreement"):
        return f"Your role ({role}) may not settle a disagreement; it needs lead."
    second = case.second
    if same_person(who, case.first.decision.person) or (
        second is not None and same_person(who, second.decision.person)
    ):
        return "You decided this case already; the lead must be neither of the two reviewers."
    return None


class AlreadySettled(Exception):
    """Another lead settled the case first (its first decision is no longer awaiting a lead)."""


class SecondReviews:
    """The cases under blind second review and their steps."""

    def __init__(self, engine: Engine, clock=lambda: datetime.now(UTC)):
        self.engine, self.clock = engine, clock

    def open(self, bank_id: str, case_kind: str, case_id: str | None = None) -> dict[str, BlindCase]:
        """case id -> its first decision awaiting a second review or a lead (a held row is a case's newest)."""
        query = sa.select(decisions).where(
            decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.state.in_(SECOND_HELD)
        )
        if case_id is not None:
            query = query.where(decisions.c.case_id == case_id)
        return {c.case_id: c for c in self._with_steps(query)}

    def trail(self, decision_ids: list[int]) -> dict[int, list[ReviewStep]]:
        """first decision id -> its second-review steps (the export)."""
        return {
            c.first.id: c.steps for c in self._with_steps(sa.select(decisions).where(decisions.c.id.in_(decision_ids)))
        }

    def _with_steps(self, query) -> list[BlindCase]:
        with self.engine.connect() as conn:
            rows = [stored_decision(r) for r in conn.execute(query.order_by(decisions.c.id))]
            steps = (
                conn.execute(
                    sa.select(second_reviews)
                    .where(second_reviews.c.decision_id.in_([r.id for r in rows]))
                    .order_by(second_reviews.c.id)
                ).all()
                if rows
                else []
            )
        by_row: dict[int, list[ReviewStep]] = {}
        for s in steps:
            by_row.setdefault(s.decision_id, []).append(ReviewStep.model_validate({**s._mapping, "at": as_utc(s.at)}))
        return [BlindCase(first=r, steps=by_row.get(r.id, [])) for r in rows]

    def record_first(self, first: StoredDecision, role: Role) -> None:
        """The first decision's step: who held it for a second review, in which role (the export's provenance)."""
        with self.engine.begin() as conn:
            conn.execute(
                second_reviews.insert().values(
                    decision_id=first.id,
                    step=FIRST,
                    actor=first.decision.reviewer,
                    person_id=first.decision.person.id,
                    role=role,
                    outcome=first.decision.outcome,
                    decision=first.decision.model_dump(mode="json"),
                    at=first.created_at,
                )
            )

    def record_second(self, case: BlindCase, role: Role, decision: ReviewerDecision, writer: str | None = None) -> bool:
        """The second reviewer's decision: the first is released (same outcome; leased to `writer`, see
        outbox.leased_to) or waits for a lead, in one transaction. False when someone gave the second review first."""
        agreed = decision.outcome == case.first.decision.outcome
        return self._step(
            case, AWAITING_SECOND, PENDING if agreed else AWAITING_LEAD, SECOND, role, decision, None, writer
        )

    def record_lead(
        self, conn: Connection, case: BlindCase, role: Role, decision: ReviewerDecision, lead_decision_id: int
    ) -> None:
        """The lead's decision (being recorded as `lead_decision_id`, on `conn`) supersedes the first, in that same
        transaction. AlreadySettled (which undoes both) when another lead settled it first."""
        if not self._step_on(conn, case, AWAITING_LEAD, SUPERSEDED, LEAD, role, decision, lead_decision_id, None):
            raise AlreadySettled(case.case_id)

    def _step(self, case, before, after, step, role, decision, lead_decision_id, writer) -> bool:
        with self.engine.begin() as conn:
            return self._step_on(conn, case, before, after, step, role, decision, lead_decision_id, writer)

    def _step_on(self, conn, case, before, after, step, role, decision, lead_decision_id, writer) -> bool:
        now = self.clock()
        changed = conn.execute(
            decisions.update()
            .where(decisions.c.id == case.first.id, decisions.c.state == before)
            .values(state=after, next_attempt_at=now, **(leased_to(writer, now) if after == PENDING else {}))
        ).rowcount
        if changed != 1:
            return False
        conn.execute(
            second_reviews.insert().values(
                decision_id=case.first.id,
                step=step,
                actor=decision.reviewer,
                person_id=decision.person.id,
                role=role,
                outcome=decision.outcome,
                decision=decision.model_dump(mode="json"),
                lead_decision_id=lead_decision_id,
                at=now,
            )
        )
        return True

    def pair_counts(self, case_kind: str | None = None) -> list[tuple[str, str, str, str, int]]:
        """(first reviewer, second reviewer, first outcome, second outcome, cases), counted in SQL."""
        first_outcome = decisions.c.decision["outcome"].as_string()
        query = (
            sa.select(
                decisions.c.reviewer, second_reviews.c.actor, first_outcome, second_reviews.c.outcome, sa.func.count()
            )
            .join(decisions, decisions.c.id == second_reviews.c.decision_id)
            .where(second_reviews.c.step == SECOND)
            .group_by(decisions.c.reviewer, second_reviews.c.actor, first_outcome, second_reviews.c.outcome)
        )
        if case_kind:
            query = query.where(decisions.c.case_kind == case_kind)
        with self.engine.connect() as conn:
            return [tuple(row) for row in conn.execute(query)]
