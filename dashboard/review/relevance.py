"""Reviewers' relevance labels on evidence cards: relevant, not relevant or wrong, per case and document.

Append-only: each click is a row (case, document, reviewer, role, time) with the recall request the card came
from; the latest row per (bank, case, document, reviewer) counts, selected in SQL. A document is relevant to a
case when most of the reviewers who labelled it say so (`case_verdicts`). The role is checked on every write.
No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel, Field, ValidationError
from sqlalchemy import Engine

from dashboard.access.roles import require
from dashboard.settings import Role
from dashboard.store.db import as_utc, upgrade
from dashboard.store.decision import CASE_KIND
from dashboard.store.delivery_queue import utc_now
from dashboard.store.errors import LabelInputError, NotAllowed
from dashboard.store.identity import Actor, as_person
from dashboard.store.schema import ID, NAME, relevance_labels

__all__ = [
    "LABELS",
    "CaseVerdict",
    "LabelInputError",
    "NotAllowed",
    "RecallContext",
    "RelevanceLabel",
    "RelevanceLabels",
]

Label = Literal["relevant", "not_relevant", "wrong"]
LABELS: dict[str, str] = {"relevant": "relevant", "not_relevant": "not relevant", "wrong": "wrong"}
CaseKey = tuple[str, str, str]  # bank, case kind, case id


class RecallContext(BaseModel):
    """The recall request an evidence card came from, and the documents it returned, best first."""

    query: str | None = None
    tags: list[str] = Field(default_factory=list)
    tags_match: str | None = None
    ranked: list[str] = Field(default_factory=list)

    @property
    def request(self) -> tuple:
        return (self.query, tuple(sorted(self.tags)), self.tags_match)


class _Input(BaseModel):
    bank_id: str = Field(min_length=1, max_length=ID)
    case_kind: str = Field(pattern=CASE_KIND)
    case_id: str = Field(min_length=1, max_length=ID)
    document_id: str = Field(min_length=1, max_length=ID + 40)
    label: Label
    reviewer: str = Field(min_length=1, max_length=NAME, pattern=r"^[^\x00-\x1f\x7f]+$")
    person_id: str | None = None


class RelevanceLabel(RecallContext):
    id: int
    bank_id: str
    case_kind: str
    case_id: str
    document_id: str
    label: str
    reviewer: str
    person_id: str | None = None
    role: str
    created_at: datetime

    @property
    def case(self) -> CaseKey:
        return (self.bank_id, self.case_kind, self.case_id)


@dataclass
class CaseVerdict:
    """One labelled case: per document, how many reviewers labelled it and how many said relevant."""

    bank_id: str
    case_kind: str
    case_id: str
    votes: dict[str, tuple[int, int]] = field(default_factory=dict)  # document -> (relevant votes, reviewers)
    labels: list[RelevanceLabel] = field(default_factory=list)  # the latest per document and reviewer

    @property
    def relevant(self) -> list[str]:
        """Documents most of their reviewers call relevant."""
        return sorted(d for d, (yes, n) in self.votes.items() if 2 * yes > n)

    @property
    def labelled_at(self) -> datetime:
        return max(label.created_at for label in self.labels)

    def context(self) -> RecallContext | None:
        """The dashboard's request most relevant labels (then most labels) were given on; the newest list of it."""
        with_request = [label for label in self.labels if label.query]
        if not with_request:
            return None
        counts: dict[tuple, tuple[int, int]] = {}
        for label in with_request:
            relevant, given = counts.get(label.request, (0, 0))
            counts[label.request] = (relevant + (label.label == "relevant"), given + 1)
        best = max(counts.values())
        return max((label for label in with_request if counts[label.request] == best), key=lambda label: label.id)


def case_verdicts(latest: Iterable[RelevanceLabel]) -> list[CaseVerdict]:
    """The latest labels grouped by case, with each document's votes."""
    cases: dict[CaseKey, CaseVerdict] = {}
    for label in latest:
        verdict = cases.setdefault(label.case, CaseVerdict(*label.case))
        verdict.labels.append(label)
        yes, n = verdict.votes.get(label.document_id, (0, 0))
        verdict.votes[label.document_id] = (yes + (label.label == "relevant"), n + 1)
    return list(cases.values())


def _row(row) -> RelevanceLabel:
    return RelevanceLabel.model_validate({**row, "created_at": as_utc(row["created_at"])})


class RelevanceLabels:
    """The label table, on the review store's engine."""

    def __init__(self, engine: Engine, clock: Callable[[], datetime] = utc_now):
        self.engine, self.clock = engine, clock
        upgrade(engine)

    def record(
        self,
        bank_id: str,
        case_kind: str,
        case_id: str,
        document_id: str,
        label: str,
        *,
        role: Role,
        reviewer: Actor,
        context: RecallContext | None = None,
    ) -> RelevanceLabel:
        """One click: a new row (a change of mind is a new row too)."""
        require(role, "decide")
        person = as_person(reviewer or "")
        try:
            checked = _Input(
                bank_id=bank_id,
                case_kind=case_kind,
                case_id=case_id,
                document_id=document_id,
                label=label,
                reviewer=person.name.strip(),
                person_id=person.id,
            )
        except ValidationError as exc:
            problem = exc.errors()[0]
            raise LabelInputError(str(problem["loc"][0]), problem["msg"]) from None
        context = context or RecallContext()
        values = {**checked.model_dump(), "role": role, "created_at": self.clock(), **context.model_dump()}
        with self.engine.begin() as conn:
            new_id = conn.execute(relevance_labels.insert().values(**values)).inserted_primary_key[0]
        return RelevanceLabel(id=new_id, **values)

    def _latest_ids(self):
        t = relevance_labels.c
        return sa.select(sa.func.max(t.id)).group_by(
            t.bank_id, t.case_kind, t.case_id, t.document_id, sa.func.coalesce(t.person_id, t.reviewer)
        )

    def latest(self, bank_id: str | None = None, case: CaseKey | None = None) -> list[RelevanceLabel]:
        """The latest label per (bank, case, document, reviewer), oldest first: the labels that count."""
        t = relevance_labels.c
        query = sa.select(relevance_labels).where(t.id.in_(self._latest_ids())).order_by(t.id)
        if bank_id is not None:
            query = query.where(t.bank_id == bank_id)
        if case is not None:
            query = query.where(t.bank_id == case[0], t.case_kind == case[1], t.case_id == case[2])
        with self.engine.connect() as conn:
            return [_row(r) for r in conn.execute(query).mappings()]

    def mine(self, case: CaseKey, reviewer: Actor | None) -> dict[str, RelevanceLabel]:
        """This reviewer's current label per document of one case (what the cards show)."""
        if not reviewer:
            return {}
        me = as_person(reviewer)
        return {
            label.document_id: label
            for label in self.latest(case=case)
            if (label.person_id == me.id if me.signed_in or label.person_id else label.reviewer == me.name.strip())
        }

    def history(self) -> list[RelevanceLabel]:
        """Every label ever given, oldest first: the export."""
        with self.engine.connect() as conn:
            return [
                _row(r) for r in conn.execute(sa.select(relevance_labels).order_by(relevance_labels.c.id)).mappings()
            ]
