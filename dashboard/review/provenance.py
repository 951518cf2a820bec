"""The review store's side of record origins: the deployment's signing key (made once, kept in the store, so every
instance on one store agrees), signing what this dashboard writes to memory, and telling who wrote a recalled record
(dashboard/trust/origin.py holds the rule). No Streamlit here."""

from __future__ import annotations

import secrets as token
from collections.abc import Mapping, Sequence

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError

from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.db import upgrade
from dashboard.review.schema import secrets
from dashboard.trust.origin import Kind, Origin, origin_of, signed_metadata

SIGNING = "signing"


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

    def origin(self, document_id: str | None, tags: Sequence[str], metadata: Mapping[str, str]) -> Origin:
        """Who wrote a recalled record, as far as its signature proves."""
        return origin_of(self.key, document_id, tags, metadata)
