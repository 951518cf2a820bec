"""Vouching: a lead gives memory records of unknown origin a known one, after reviewing them, with a second lead's
confirmation (four eyes, like curation). No Streamlit here.

A record nobody here wrote informs a recommendation but never decides it (finance.policy). A deployment on a bank its
agents filled before this dashboard signed anything would escalate every case; instead a lead vouches for records
they reviewed: one document, or every document the server wrote before a time (the server's own write time, never a
timestamp the writer chose). The proposal records who and why; another lead confirms or refuses it. The confirmation
lists each document it covers with its original text's digest (trust/origin.text_digest): a document replaced later
under the same id, with another text, is of unknown origin again. Vouching gives a known origin, never a reviewer's
authority: a record that claims to be a reviewer's decision stays a forged claim.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import datetime
from typing import Literal

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Engine

from dashboard.access.four_eyes import proposer as proposing
from dashboard.access.four_eyes import second_person, typed
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.settings import Role
from dashboard.store.db import as_utc, upgrade
from dashboard.store.delivery_queue import utc_now
from dashboard.store.errors import Refused, VouchInputError
from dashboard.store.identity import Actor, Person
from dashboard.store.schema import vouched_documents, vouches
from dashboard.trust.origin import text_digest

REASON_MAX_CHARS = 500
V, VD = vouches.c, vouched_documents.c


class Vouch(BaseModel):
    id: int
    bank_id: str
    document_id: str | None
    written_before: datetime | None
    reason: str
    proposed_by: str
    proposer_id: str | None = None
    proposed_at: datetime
    state: Literal["proposed", "confirmed", "refused"]
    settled_by: str | None = None
    settler_id: str | None = None
    settled_at: datetime | None = None
    documents: int | None = None

    @property
    def covers(self) -> str:
        """What it vouches for, in words."""
        if self.document_id:
            return f"document {self.document_id} of bank {self.bank_id}"
        return f"every document of bank {self.bank_id} the server wrote before {self.written_before:%Y-%m-%d %H:%M} UTC"

    @property
    def by(self) -> str:
        """Who vouched, as a record's origin names them."""
        return f"{self.proposed_by}, confirmed by {self.settled_by}" if self.state == "confirmed" else self.proposed_by


class VouchedDocument(BaseModel):
    """A document to vouch for, as the server holds it: its id, its text's digest, when the server wrote it."""

    document_id: str
    text_sha256: str
    written_at: datetime | None = None


# the documents a vouch covers, read from the bank when it is confirmed (in_bank below reads them from Hindsight)
DocumentsOf = Callable[[Vouch], Iterable[VouchedDocument]]
PAGE = 100


def in_bank(gateway: HindsightGateway) -> DocumentsOf:
    """The documents a vouch covers, as the bank holds them now: each with its original text's digest and the server's
    own write time (documents without a stored text cannot be vouched for: their text could not be checked later)."""

    def one(bank_id: str, document_id: str) -> Iterator[VouchedDocument]:
        stored = gateway.document(bank_id, document_id)
        if stored is not None and stored.original_text is not None:
            yield VouchedDocument(
                document_id=document_id,
                text_sha256=text_digest(stored.original_text),
                written_at=stored.created_at and datetime.fromisoformat(stored.created_at),
            )

    def documents_of(vouch: Vouch) -> Iterator[VouchedDocument]:
        if vouch.document_id:
            yield from one(vouch.bank_id, vouch.document_id)
            return
        offset = 0
        while True:
            page = gateway.list_documents(vouch.bank_id, limit=PAGE, offset=offset)
            items = page.get("items", [])
            for item in items:
                written = item.get("created_at") and datetime.fromisoformat(item["created_at"])
                if written and written < vouch.written_before:
                    yield from one(vouch.bank_id, item["id"])
            offset += len(items)
            if not items or offset >= page.get("total", 0):
                return

    return documents_of


def _vouch(row: sa.Row) -> Vouch:
    data = dict(row._mapping)
    for key in ("written_before", "proposed_at", "settled_at"):
        data[key] = as_utc(data[key]) if data[key] is not None else None
    return Vouch.model_validate(data)


def _text(field: str, value: str | None, limit: int) -> str:
    return typed(VouchInputError, field, value, limit)


class Vouching:
    def __init__(self, engine: Engine, clock: Callable[[], datetime] = utc_now):
        self.engine, self.clock = engine, clock
        upgrade(engine)

    def propose(
        self,
        bank_id: str,
        *,
        role: Role,
        proposer: Actor,
        reason: str,
        document_id: str | None = None,
        written_before: datetime | None = None,
    ) -> Vouch:
        """A lead's proposal to vouch for one document, or for every document the server wrote before a time."""
        person, name = proposing(VouchInputError, role, "vouch", proposer)
        reason = _text("reason", reason, REASON_MAX_CHARS)
        if (document_id is None) == (written_before is None):
            raise VouchInputError("document", "give one document, or a time before which every document is vouched for")
        if written_before is not None and written_before.tzinfo is None:
            raise VouchInputError("before", "give the time with its zone (e.g. 2026-12-01T00:00:00+00:00)")
        with self.engine.begin() as conn:
            new_id = conn.execute(
                vouches.insert().values(
                    bank_id=_text("bank", bank_id, 200),
                    document_id=document_id and _text("document", document_id, 240),
                    written_before=written_before,
                    reason=reason,
                    proposed_by=name,
                    proposer_id=person.id,
                    proposed_at=self.clock(),
                    state="proposed",
                )
            ).inserted_primary_key[0]
        return self.get(int(new_id))

    def confirm(self, vouch_id: int, *, role: Role, confirmer: Actor, documents_of: DocumentsOf) -> Vouch:
        """Another lead confirms: the documents it covers (read from the bank now) get a known origin."""
        vouch, person = self._settling(vouch_id, role, confirmer, "confirm")
        found = list(documents_of(vouch))
        with self.engine.begin() as conn:
            if not self._settle(conn, vouch, person, "confirmed", documents=len(found)):
                raise Refused(f"Vouch {vouch_id} was confirmed or refused by someone else meanwhile.")
            if found:
                conn.execute(
                    vouched_documents.insert(),
                    [{"bank_id": vouch.bank_id, "vouch_id": vouch.id, **d.model_dump()} for d in found],
                )
        return self.get(vouch_id)

    def refuse(self, vouch_id: int, *, role: Role, refuser: Actor) -> Vouch:
        """Another lead refuses: nothing gets a known origin."""
        vouch, person = self._settling(vouch_id, role, refuser, "refuse")
        with self.engine.begin() as conn:
            if not self._settle(conn, vouch, person, "refused"):
                raise Refused(f"Vouch {vouch_id} was confirmed or refused by someone else meanwhile.")
        return self.get(vouch_id)

    def _settling(self, vouch_id: int, role: Role, who: Actor, step: str) -> tuple[Vouch, Person]:
        vouch = self.get(vouch_id)
        if vouch is None:
            raise VouchInputError("vouch", f"{vouch_id} is not a vouch")
        if vouch.state != "proposed":
            raise Refused(f"Vouch {vouch_id} was already {vouch.state} by {vouch.settled_by}.")
        person, _ = second_person(
            VouchInputError, role, "vouch", who, Person.stored(vouch.proposed_by, vouch.proposer_id), step, "this vouch"
        )
        return vouch, person

    def _settle(
        self, conn: sa.Connection, vouch: Vouch, person: Person, state: str, documents: int | None = None
    ) -> bool:
        done = conn.execute(
            vouches.update()
            .where(V.id == vouch.id, V.state == "proposed")
            .values(
                state=state, settled_by=person.name, settler_id=person.id, settled_at=self.clock(), documents=documents
            )
        )
        return done.rowcount == 1

    def get(self, vouch_id: int) -> Vouch | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(vouches).where(V.id == vouch_id)).first()
        return None if row is None else _vouch(row)

    def history(self, bank_id: str | None = None) -> list[Vouch]:
        """Every vouch, newest first."""
        query = sa.select(vouches).order_by(V.id.desc())
        with self.engine.connect() as conn:
            return [_vouch(r) for r in conn.execute(query.where(V.bank_id == bank_id) if bank_id else query)]


def vouched_for(conn: sa.Connection, bank_id: str, document_id: str, text_sha256: str) -> Vouch | None:
    """The confirmed vouch that covers this document with this text, the newest one; None when none does."""
    row = conn.execute(
        sa.select(vouches)
        .select_from(vouches.join(vouched_documents, VD.vouch_id == V.id))
        .where(
            VD.bank_id == bank_id, VD.document_id == document_id, VD.text_sha256 == text_sha256, V.state == "confirmed"
        )
        .order_by(V.id.desc())
        .limit(1)
    ).first()
    return None if row is None else _vouch(row)
