"""Four-eyes curation: a reviewer proposes retiring a DOCUMENT's memories, another person, a lead, approves.

A document a reviewer finds wrong, outdated, another customer's or a duplicate should stop reaching the
agents, without deleting it. A reviewer proposes it with a reason; a lead who is not the proposer approves
or rejects. An approval invalidates every memory of the document in Hindsight (each fact, with an LLM) with
a reason naming the proposer and the lead; a revert is proposed and approved the same way and sets them
valid again.

Every step is a row of one append-only log per document (actor, action, status before and after, time),
on the document's next revision, so a stale or concurrent step is refused instead of overwriting. An
approval is stored first and delivered like a decision (the outbox's DeliveryQueue: lease, backoff, parked
on a 4xx, exactly once); an approval a newer one on the same document undoes before it was sent is
superseded. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from pathlib import Path
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError

from dashboard.access.four_eyes import proposer as proposing
from dashboard.access.four_eyes import second_person, typed
from dashboard.hindsight.calls import CurateFn
from dashboard.review.freshness import EVERYTHING, Freshness
from dashboard.settings import Role
from dashboard.store.db import as_utc
from dashboard.store.delivery_queue import DeliveryQueue, DeliveryReport, leased_to, utc_now, worker_name
from dashboard.store.errors import CurationInputError, NotAllowed, Refused
from dashboard.store.identity import Actor, Person
from dashboard.store.schema import PENDING, curation

__all__ = ["Curation", "CurationEvent", "CurationInputError", "DocumentCuration", "NotAllowed", "Refused"]

Label = Literal["wrong", "outdated", "another_customer", "duplicate"]
LABELS: dict[str, str] = {
    "wrong": "wrong",
    "outdated": "outdated",
    "another_customer": "another customer's",
    "duplicate": "duplicate",
}
Change = Literal["invalidate", "revert"]
REASON_MAX_CHARS = 500

# A document's curation status: what a new event may do to it, and what it leaves it in.
VALID, INVALIDATION_PROPOSED, INVALIDATED, REVERT_PROPOSED = (
    "valid",
    "invalidation proposed",
    "invalidated",
    "revert proposed",
)
_PROPOSE = {"invalidate": (VALID, INVALIDATION_PROPOSED), "revert": (INVALIDATED, REVERT_PROPOSED)}
_APPROVED = {"invalidate": INVALIDATED, "revert": VALID}


class CurationEvent(BaseModel):
    id: int
    bank_id: str
    document_id: str
    revision: int
    action: Literal["propose", "approve", "reject"]
    change: Change
    label: str | None
    reason: str
    actor: str
    person_id: str | None = None
    proposal_id: int | None
    before: str
    after: str
    created_at: datetime
    state: str | None  # an approval's delivery: pending | delivered | superseded | failed | discarded
    attempts: int
    last_error: str | None
    delivered_at: datetime | None

    @property
    def person(self) -> Person:
        return Person.stored(self.actor, self.person_id)

    @property
    def what(self) -> str:
        """The label as people read it ("another customer's"); "revert" for a revert."""
        return LABELS[self.label] if self.change == "invalidate" else "revert"


class DocumentCuration(BaseModel):
    bank_id: str
    document_id: str
    status: str = VALID
    revision: int = 0  # of its latest event
    proposal: CurationEvent | None = None  # the open proposal, when there is one
    approval: CurationEvent | None = None  # the approval behind the status (invalidated, or valid again)
    approved: CurationEvent | None = None  # the proposal `approval` approved

    @property
    def sentence(self) -> str | None:
        """E.g. "invalidated by Lee on 2026-12-03: supplier contract ended (wrong, proposed by Dana)"; None when
        the document was never curated."""
        if self.approval is None:
            return None
        a, p = self.approval, self.approved
        done = "invalidated" if a.change == "invalidate" else "made valid again"
        delivery = "" if a.state == "delivered" else f"; delivery to memory {a.state}"
        why = f"{p.reason} ({a.what}, proposed by {p.actor}{delivery})" if p else a.reason
        return f"{done} by {a.actor} on {a.created_at:%Y-%m-%d}: {why}"


def _event(row: sa.Row) -> CurationEvent:
    data = dict(row._mapping)
    for key in ("created_at", "delivered_at"):
        data[key] = as_utc(data[key])
    return CurationEvent.model_validate(data)


def _text(field: str, value: str | None, limit: int) -> str:
    return typed(CurationInputError, field, value, limit)


class Curation(DeliveryQueue):
    """The curation log. `curate` is HindsightGateway.set_document_state (None: the worker delivers later);
    `freshness` is bumped for the bank when an approval reaches memory, so cached recalls are made again."""

    table = curation

    def __init__(
        self,
        store: Engine | Path,
        curate: CurateFn | None = None,
        *,
        freshness: Freshness | None = None,
        clock: Callable[[], datetime] = utc_now,
    ):
        super().__init__(store, clock)
        self.curate, self.freshness = curate, freshness

    def _parse(self, row: sa.Row) -> CurationEvent:
        return _event(row)

    def _send(self, send: CurateFn, row: CurationEvent) -> None:
        send(row.bank_id, row.document_id, "invalidated" if row.change == "invalidate" else "valid", row.reason)

    # -- writing -------------------------------------------------------------------------

    def propose(
        self,
        bank_id: str,
        document_id: str,
        *,
        role: Role,
        proposer: Actor,
        reason: str,
        change: Change = "invalidate",
        label: str | None = None,
    ) -> CurationEvent:
        """A reviewer's proposal: invalidate (with a label) a valid document, or revert an invalidated one."""
        proposer, name = proposing(CurationInputError, role, "propose_curation", proposer)
        reason = _text("reason", reason, REASON_MAX_CHARS)
        document_id = _text("document", document_id, 240)
        if change == "invalidate" and label not in LABELS:
            raise CurationInputError("label", f"one of {', '.join(LABELS)}")
        if change == "revert":
            label = None
        needs, after = _PROPOSE[change]

        def values(current: DocumentCuration) -> dict:
            if current.status != needs:
                raise Refused(f"{document_id} is {current.status}: a proposal to {change} needs it {needs}.")
            return dict(
                action="propose",
                change=change,
                label=label,
                reason=reason,
                actor=name,
                person_id=proposer.id,
                after=after,
            )

        return self._append(bank_id, document_id, values)

    def approve(self, proposal_id: int, *, role: Role, lead: Actor) -> tuple[CurationEvent, DeliveryReport]:
        """A lead other than the proposer approves: stored first, then delivered at once when Hindsight answers
        (else by the worker, later). Returns the approval as stored and the delivery report."""
        proposal = self._open(proposal_id)
        lead, name = second_person(CurationInputError, role, "approve_curation", lead, proposal.person, "approve")
        sent = f"{proposal.what}: {proposal.reason} (proposed by {proposal.actor}, approved by {name})"
        now = self.clock()
        writer = worker_name() if self.curate is not None else None  # it sends the approval at once (outbox.leased_to)
        approval = self._append(
            proposal.bank_id,
            proposal.document_id,
            lambda _: dict(
                action="approve",
                change=proposal.change,
                label=proposal.label,
                reason=sent,
                actor=name,
                person_id=lead.id,
                proposal_id=proposal.id,
                after=_APPROVED[proposal.change],
                state=PENDING,
                next_attempt_at=now,
                **leased_to(writer, now),
            ),
            expected=proposal.revision,
        )
        report = (
            self.deliver_due(self.curate, only_id=approval.id, owner=writer) if writer is not None else DeliveryReport()
        )
        if report.delivered and self.freshness is not None:
            self.freshness.bump(approval.bank_id, EVERYTHING)
        return self.get(approval.id), report

    def reject(self, proposal_id: int, *, role: Role, lead: Actor) -> CurationEvent:
        """A lead other than the proposer rejects: the document keeps its status; nothing is sent."""
        proposal = self._open(proposal_id)
        lead, name = second_person(CurationInputError, role, "approve_curation", lead, proposal.person, "reject")
        return self._append(
            proposal.bank_id,
            proposal.document_id,
            lambda _: dict(
                action="reject",
                change=proposal.change,
                label=proposal.label,
                reason=proposal.reason,
                actor=name,
                person_id=lead.id,
                proposal_id=proposal.id,
                after=proposal.before,
            ),
            expected=proposal.revision,
        )

    def _open(self, proposal_id: int) -> CurationEvent:
        proposal = self.get(proposal_id)
        if proposal is None or proposal.action != "propose":
            raise CurationInputError("proposal", f"{proposal_id} is not a curation proposal")
        open_now = self.status(proposal.bank_id, proposal.document_id).proposal
        if open_now is None or open_now.id != proposal.id:
            raise Refused(f"Proposal {proposal_id} on {proposal.document_id} was already approved or rejected.")
        return proposal

    def _append(
        self, bank_id: str, document_id: str, values: Callable[[DocumentCuration], dict], expected: int | None = None
    ) -> CurationEvent:
        """One event on the document's next revision; `expected` is the revision the actor acted on."""
        try:
            with self.engine.begin() as conn:  # SQLite: BEGIN IMMEDIATE; PostgreSQL: the unique revision decides
                current = self._status(conn, bank_id, document_id)
                revision = current.revision
                if expected is not None and revision != expected:
                    raise Refused(f"{document_id} changed meanwhile; look again.")
                result = conn.execute(
                    curation.insert().values(
                        bank_id=bank_id,
                        document_id=document_id,
                        revision=revision + 1,
                        before=current.status,
                        created_at=self.clock(),
                        **values(current),
                    )
                )
                new_id = int(result.inserted_primary_key[0])
        except IntegrityError:
            raise Refused(f"{document_id} changed meanwhile; look again.") from None
        return self.get(new_id)

    # -- reading -------------------------------------------------------------------------

    def _status(self, conn: sa.Connection, bank_id: str, document_id: str) -> DocumentCuration:
        rows = conn.execute(
            sa.select(curation)
            .where(curation.c.bank_id == bank_id, curation.c.document_id == document_id)
            .order_by(curation.c.revision)
        ).all()
        return _fold(bank_id, document_id, [_event(r) for r in rows])

    def status(self, bank_id: str, document_id: str) -> DocumentCuration:
        with self.engine.connect() as conn:
            return self._status(conn, bank_id, document_id)

    def statuses(self, bank_id: str, document_ids: Iterable[str]) -> dict[str, DocumentCuration]:
        """The curated documents among these (never-curated ones are left out), in one query."""
        wanted = list(dict.fromkeys(document_ids))
        if not wanted:
            return {}
        with self.engine.connect() as conn:
            rows = conn.execute(
                sa.select(curation)
                .where(curation.c.bank_id == bank_id, curation.c.document_id.in_(wanted))
                .order_by(curation.c.revision)
            ).all()
        events: dict[str, list[CurationEvent]] = {}
        for row in rows:
            events.setdefault(row.document_id, []).append(_event(row))
        return {doc: _fold(bank_id, doc, evs) for doc, evs in events.items()}

    def history(self, bank_id: str | None = None, document_id: str | None = None) -> list[CurationEvent]:
        """The append-only log, newest first."""
        query = sa.select(curation).order_by(curation.c.id.desc())
        if bank_id:
            query = query.where(curation.c.bank_id == bank_id)
        if document_id:
            query = query.where(curation.c.document_id == document_id)
        with self.engine.connect() as conn:
            return [_event(r) for r in conn.execute(query)]

    def counts(self, since: datetime | None = None, until: datetime | None = None) -> dict[str, int]:
        """Proposals, approvals (of either change), rejections and reverts (approved reverts) in a time range,
        counted in SQL."""
        approved = curation.c.action == "approve"
        query = sa.select(
            sa.func.count().filter(curation.c.action == "propose"),
            sa.func.count().filter(approved),
            sa.func.count().filter(curation.c.action == "reject"),
            sa.func.count().filter(approved, curation.c.change == "revert"),
        )
        if since is not None:
            query = query.where(curation.c.created_at >= since)
        if until is not None:
            query = query.where(curation.c.created_at < until)
        with self.engine.connect() as conn:
            proposals, approvals, rejections, reverts = conn.execute(query).one()
        return {"proposals": proposals, "approvals": approvals, "rejections": rejections, "reverts": reverts}


def _fold(bank_id: str, document_id: str, events: list[CurationEvent]) -> DocumentCuration:
    """The document's status from its events in revision order."""
    view = DocumentCuration(bank_id=bank_id, document_id=document_id)
    proposals: dict[int, CurationEvent] = {}
    for e in events:
        view.status, view.revision = e.after, e.revision
        if e.action == "propose":
            proposals[e.id] = view.proposal = e
            continue
        view.proposal = None
        if e.action == "approve":
            view.approval, view.approved = e, proposals.get(e.proposal_id or -1)
    return view
