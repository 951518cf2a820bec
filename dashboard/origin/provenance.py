"""The review store's side of record origins: the deployment's signing key (made once, kept in the store, so every
instance on one store agrees), signing what this dashboard writes to memory, and telling who wrote a recalled record
(dashboard/trust/origin.py holds the rule). No Streamlit here.

A reviewer's decision has a human's authority only while it is its case's standing decision in the store (its newest
decision not held for a second look): a revision the store has superseded, replayed into the bank, is void with the
revision that superseded it. A decision signed before revisions were bound has authority only when it is the standing
decision of its bank's document, with the same outcome and text. When the store cannot be read, the signature's own
checks stand and a recall keeps the newest revision it holds of each case (finance/trust.py)."""

from __future__ import annotations

import secrets as token
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError, SQLAlchemyError

from dashboard.hindsight.wire import MemoryRecord
from dashboard.origin.vouching import vouched_for
from dashboard.store.db import upgrade
from dashboard.store.schema import decisions, secrets, standing_decisions
from dashboard.trust.origin import Bound, Kind, Origin, origin_of, signed_metadata, text_digest

SIGNING = "signing"
D, S = decisions.c, standing_decisions.c


class Standing(NamedTuple):
    """A case's standing decision as the store holds it."""

    revision: int
    decided_on: object  # a date, or None for rows written before the column
    outcome: str | None
    document_id: str
    text: str


def _standing(conn: sa.Connection, *where) -> Standing | None:
    query = (
        sa.select(D.revision, S.decided_on, S.outcome, D.document_id, D.record)
        .select_from(standing_decisions.join(decisions, D.id == S.decision_id))
        .where(*where)
    )
    row = conn.execute(query).first()
    return (
        None
        if row is None
        else Standing(row.revision, row.decided_on, row.outcome, row.document_id, (row.record or {}).get("content", ""))
    )


class Provenance:
    def __init__(self, engine: Engine, key: bytes | None = None):
        self.engine = engine
        self._key = key  # the configured key (Settings.signing_secret), else the store's

    @property
    def key(self) -> bytes:
        """The deployment's signing key: configured, else read from the store, or made there by the first process
        that needs it."""
        if self._key is None:
            upgrade(self.engine)
            self._key = bytes.fromhex(self._read() or self._make())
        return self._key

    def _read(self) -> str | None:
        with self.engine.connect() as conn:
            return conn.execute(sa.select(secrets.c.value).where(secrets.c.name == SIGNING)).scalar()

    def _make(self) -> str:
        try:
            with self.engine.begin() as conn:
                conn.execute(secrets.insert().values(name=SIGNING, value=token.token_hex(32)))
        except IntegrityError:
            pass  # another process made it first: theirs is the key
        return self._read()

    def sign(self, record: MemoryRecord, kind: Kind, who: str | None = None) -> MemoryRecord:
        """`record` as this dashboard writes it: its metadata signed as written by `kind` (for `who`)."""
        metadata = signed_metadata(self.key, record.document_id, record.tags, record.metadata, kind, who)
        return record.model_copy(update={"metadata": metadata})

    def sign_decision(
        self, record: MemoryRecord, who: str, bank_id: str, case_kind: str, case_id: str, revision: int, outcome: str
    ) -> MemoryRecord:
        """A reviewer's decision as it is retained: signed as revision `revision` of the case, with its outcome, its
        document id and its text's digest."""
        bound = Bound(
            bank=bank_id,
            case=f"{case_kind}:{case_id}",
            revision=revision,
            outcome=outcome,
            document_id=record.document_id or "",
            text_sha256=text_digest(record.content),
        )
        metadata = signed_metadata(self.key, record.document_id, record.tags, record.metadata, "reviewer", who, bound)
        return record.model_copy(update={"metadata": metadata})

    def origin(
        self,
        document_id: str | None,
        tags: Sequence[str],
        metadata: Mapping[str, str],
        *,
        bank: str | None = None,
        text: str | None = None,
    ) -> Origin:
        """Who wrote a recalled record, as far as its signature proves, and, for a reviewer's decision, whether it is
        its case's standing decision in this store."""
        found = origin_of(self.key, document_id, tags, metadata, bank=bank, text=text)
        if found.kind == "unknown":
            return self._vouched(found, document_id, bank, text)
        if found.kind != "reviewer" or (found.void and found.bound is not None):
            return found
        try:
            return self._standing_check(found, document_id, metadata, bank, text)
        except SQLAlchemyError:
            return found  # the store cannot be read: the signature's own checks stand

    def _vouched(self, found: Origin, document_id: str | None, bank: str | None, text: str | None) -> Origin:
        """A record of unknown origin two leads vouched for, with this text: known, as theirs (origin/vouching.py)."""
        if bank is None or text is None or not document_id:
            return found
        try:
            with self.engine.connect() as conn:
                vouch = vouched_for(conn, bank, document_id, text_digest(text))
        except SQLAlchemyError:
            return found
        return found if vouch is None else found.model_copy(update={"kind": "vouched", "who": vouch.by})

    def _standing_check(
        self, found: Origin, document_id: str | None, metadata: Mapping[str, str], bank: str | None, text: str | None
    ) -> Origin:
        bound = found.bound
        with self.engine.connect() as conn:
            if bound is None:  # signed before revisions were bound: only the store can say it stands
                if bank is None or text is None:
                    return found
                standing = _standing(conn, S.bank_id == bank, D.document_id == document_id)
                if (
                    standing is not None
                    and standing.outcome == metadata.get("outcome", standing.outcome)
                    and text_digest(standing.text) == text_digest(text)
                ):
                    return found.model_copy(update={"void": None})
                return found.model_copy(
                    update={
                        "void": "signed before decisions were bound to their revision, and not "
                        "the review store's standing decision with this text"
                    }
                )
            standing = _standing(
                conn, S.bank_id == bound.bank, S.case_kind == bound.case_kind, S.case_id == bound.case_id
            )
        if standing is not None and standing.revision > bound.revision:
            on = f" of {standing.decided_on}" if standing.decided_on else ""
            return found.voided(f"revision {bound.revision}, superseded by revision {standing.revision}{on}")
        if standing is None or standing.revision != bound.revision:
            held = "no standing decision" if standing is None else f"revision {standing.revision} as standing"
            return found.voided(
                f"revision {bound.revision} of {bound.case_id} is not in the review store, which holds {held}"
            )
        if standing.outcome is not None and standing.outcome != bound.outcome:
            return found.voided(f"its outcome ({bound.outcome}) is not the standing decision's ({standing.outcome})")
        return found
