"""API tokens: a lead creates one per agent (`python -m dashboard token create`), scoped to kinds and to submit
and/or read, and revokes it; with sign-in on, a signed-in person makes their own (the Home page), which may also
`decide`: the CLI then acts as its owner, in the role they had when they made it. Only the token's SHA-256 is stored:
the token itself is shown once. No Streamlit.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path

import sqlalchemy as sa
from pydantic import BaseModel, ConfigDict
from sqlalchemy import Engine
from sqlalchemy.exc import IntegrityError

from dashboard.store.db import as_utc, sqlite_engine, upgrade
from dashboard.store.delivery_queue import utc_now
from dashboard.store.identity import Actor, Person, as_person
from dashboard.store.schema import api_tokens

T = api_tokens.c
SCOPES = ("submit", "read", "decide")
PREFIX = "rr_"
LAST_USE_STEP = timedelta(seconds=60)  # last use is written at most once a minute: a long poll is not a write per call


class TokenError(ValueError):
    """A token that cannot be made or revoked as asked; the message names the argument."""


class ApiToken(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: int
    name: str
    kinds: tuple[str, ...]
    scopes: tuple[str, ...]
    created_by: str
    person_id: str | None = None
    role: str | None = None
    created_at: datetime
    revoked_at: datetime | None
    last_used_at: datetime | None

    def allows(self, kind: str, scope: str) -> bool:
        return kind in self.kinds and scope in self.scopes

    @property
    def owner(self) -> Person:
        return Person.stored(self.created_by, self.person_id)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _token(row: sa.Row) -> ApiToken:
    return ApiToken(
        id=row.id,
        name=row.name,
        kinds=tuple(row.kinds),
        scopes=tuple(row.scopes),
        created_by=row.created_by,
        person_id=row.person_id,
        role=row.role,
        created_at=as_utc(row.created_at),
        revoked_at=as_utc(row.revoked_at),
        last_used_at=as_utc(row.last_used_at),
    )


class ApiTokens:
    def __init__(self, store: Engine | Path, clock=utc_now):
        self.engine = store if isinstance(store, Engine) else sqlite_engine(store)
        self.clock = clock
        upgrade(self.engine)

    def create(
        self, name: str, kinds: Sequence[str], scopes: Sequence[str], created_by: Actor, role: str | None = None
    ) -> tuple[str, ApiToken]:
        """(the token, shown once; its row). `created_by` owns it; `role`: the role a `decide` token acts in. TokenError
        names a bad name, scope or an empty kind list."""
        owner = as_person(created_by)
        name = name.strip()
        if not name or len(name) > 120 or any(ord(ch) < 32 for ch in name):
            raise TokenError("--name: 1 to 120 printable characters")
        if not kinds:
            raise TokenError("--kinds: name at least one queue kind")
        unknown = [s for s in scopes if s not in SCOPES]
        if unknown or not scopes:
            raise TokenError(f"--scopes: {', '.join(unknown) or 'none given'}; one or more of {', '.join(SCOPES)}")
        if "decide" in scopes and not (owner.signed_in and role):
            raise TokenError(
                "--scopes: a decide token acts as its owner, so its owner makes it, signed in (the Home page)"
            )
        token = PREFIX + secrets.token_urlsafe(32)
        try:
            with self.engine.begin() as conn:
                conn.execute(
                    api_tokens.insert().values(
                        name=name,
                        token_sha256=token_hash(token),
                        kinds=list(dict.fromkeys(kinds)),
                        scopes=list(dict.fromkeys(scopes)),
                        created_by=owner.name,
                        person_id=owner.id,
                        role=role,
                        created_at=self.clock(),
                    )
                )
        except IntegrityError:
            raise TokenError(f"--name: a token named {name!r} exists already") from None
        return token, self.named(name)

    def named(self, name: str) -> ApiToken | None:
        with self.engine.connect() as conn:
            row = conn.execute(sa.select(api_tokens).where(T.name == name)).first()
        return None if row is None else _token(row)

    def revoke(self, name: str) -> ApiToken:
        with self.engine.begin() as conn:
            done = conn.execute(
                api_tokens.update().where(T.name == name, T.revoked_at.is_(None)).values(revoked_at=self.clock())
            )
        if done.rowcount != 1:
            raise TokenError(f"name: no token named {name!r} that is not revoked already")
        return self.named(name)

    def all(self) -> list[ApiToken]:
        with self.engine.connect() as conn:
            return [_token(r) for r in conn.execute(sa.select(api_tokens).order_by(T.id))]

    def owned_by(self, person: Person) -> list[ApiToken]:
        """A signed-in person's own tokens, oldest first."""
        with self.engine.connect() as conn:
            return [
                _token(r) for r in conn.execute(sa.select(api_tokens).where(T.person_id == person.id).order_by(T.id))
            ]

    def check(self, token: str) -> ApiToken | None:
        """The live token this string is, its last use noted; None for an unknown or revoked one."""
        with self.engine.connect() as conn:
            row = conn.execute(
                sa.select(api_tokens).where(T.token_sha256 == token_hash(token), T.revoked_at.is_(None))
            ).first()
        if row is None:
            return None
        now = self.clock()
        if row.last_used_at is None or now - as_utc(row.last_used_at) > LAST_USE_STEP:
            with self.engine.begin() as conn:
                conn.execute(api_tokens.update().where(T.id == row.id).values(last_used_at=now))
        return _token(row)
