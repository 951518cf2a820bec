"""Webhooks told of each final decision (docs/webhooks.md): per queue kind, a URL that receives a signed JSON event
when a case's standing decision (its newest not held, store/standing.py) is new.

Two steps, both in every delivery pass of the worker:
- `dispatch` reads the standing decisions changed since the "webhooks" cursor and queues one event per decision of a
  kind with a webhook, in one transaction with the cursor's move: a decision is queued once (its idempotency key is
  unique) and none is skipped (the change counts commit in order);
- `deliver_due` (store/delivery_queue.py) posts the due events with a lease and a backoff, each attempt in the delivery log.
No Streamlit, and no queue kind named here: the targets arrive as values (dashboard.kinds.webhook_targets).
"""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

import httpx
import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy import Engine
from sqlalchemy.dialects import postgresql, sqlite

from dashboard.delivery.webhook_signature import signed_headers
from dashboard.delivery.webhook_target import Resolve, TargetRefused, TargetUnresolved, pin
from dashboard.hindsight.errors import HindsightRequestRejected
from dashboard.store.db import as_utc
from dashboard.store.decision import ReviewerDecision, compared, outcome_words
from dashboard.store.delivery_queue import ERROR_CHARS, DeliveryQueue, DeliveryReport, utc_now
from dashboard.store.schema import (
    DELIVERED,
    DISCARDED,
    FAILED,
    PENDING,
    SUPERSEDED,
    cursors,
    decisions,
    log_versions,
    standing_decisions,
    webhook_attempts,
    webhook_events,
)

log = logging.getLogger(__name__)

CURSOR = "webhooks"  # its row in review_cursors: the standing decisions' change count read up to
EVENT = "decision.final"
TIMEOUT_S = 5.0  # a receiver answers at once and does its work later; a slow one is retried, not waited for
RETRIED_STATUSES = (408, 429)  # with every 5xx: the receiver is busy or down, it did not refuse the event
INSERT_CHUNK = 500
S, E = standing_decisions.c, webhook_events.c


@dataclass(frozen=True)
class WebhookTarget:
    """Where a kind's final decisions go: its settings key (in the body), the URL, and the secret that signs them."""

    kind: str
    url: str
    secret: str = field(repr=False)
    allow_private: bool = False  # its settings' webhook_allow_private: loopback and private addresses may be sent to


Targets = Mapping[tuple[str, str], WebhookTarget]  # (bank_id, case_kind) -> its kind's webhook
# (url, body, headers, timeout, allow_private=) -> the HTTP status; raises NoAnswer, or TargetRefused for an inward target
Post = Callable[..., int]


class ReceiverUnavailable(Exception):
    """No answer, a timeout, a 5xx, 408 or 429: the event is tried again later.

    Deliberately not HindsightUnavailable: DeliveryQueue answers that by backing off every due row and ending the pass,
    which would let one kind's dead receiver hold up every other kind's events. A plain error backs off its own row."""


class NoAnswer(ReceiverUnavailable):
    """The receiver did not answer at all (refused, unreachable, timed out): its other events wait for the next pass."""


class ReceiverRejected(HindsightRequestRejected):
    """Another 4xx (or a 3xx: a signed body is never sent on to another address): DeliveryQueue parks the event
    `failed` with the status, on the Audit page, until a lead redelivers it."""


class WebhookEvent(BaseModel):
    """One event as queued: `document_id` is its idempotency key, `body` the JSON exactly as signed and sent."""

    id: int
    bank_id: str
    document_id: str
    case_kind: str
    case_id: str
    decision_id: int
    url: str
    body: str
    created_at: datetime
    state: str  # pending | delivered | failed | discarded
    attempts: int
    last_error: str | None
    next_attempt_at: datetime
    delivered_at: datetime | None

    @property
    def idempotency_key(self) -> str:
        return self.document_id


class WebhookDelivery(BaseModel):
    """A line of the delivery log (the Audit page, `webhooks list`): an event, its state and its latest attempt."""

    event_id: int
    idempotency_key: str
    case_kind: str
    case_id: str
    bank_id: str
    url: str
    state: str
    attempts: int
    last_status: int | None  # the receiver's HTTP status at the latest attempt; None: no answer (or not tried yet)
    last_error: str | None
    created_at: datetime
    delivered_at: datetime | None


def idempotency_key(decision_id: int) -> str:
    return f"decision-{decision_id}"


def event_body(target: WebhookTarget, row: sa.Row, now: datetime) -> str:
    """The event's JSON for one standing decision (`row`: the standing row with its decision and revision)."""
    decision = ReviewerDecision.model_validate(row.decision)
    payload = {
        "event": EVENT,
        "idempotency_key": idempotency_key(row.decision_id),
        "kind": target.kind,
        "case_kind": row.case_kind,
        "case_id": row.case_id,
        "bank_id": row.bank_id,
        "decision": {
            "outcome": decision.outcome,
            "action": decision.action,
            "action_words": outcome_words(decision),
            "reason_code": decision.reason_code,
            "note": decision.note,
            "reviewer": decision.reviewer,
            "decided_at": decision.decided_at.isoformat(),
            "revision": row.revision,
            "revision_reason": decision.revision_reason,  # why it replaced revision N-1; None for a first decision
            **compared(decision),
        },
        "occurred_at": now.isoformat(),  # when the dispatcher found it final (a held decision: after its release)
    }
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)


def post_webhook(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    timeout_s: float,
    *,
    allow_private: bool = False,
    resolve: Resolve = socket.getaddrinfo,
) -> int:
    """POST `body` to `url`; the HTTP status it answered. Its name is resolved here, once, and the connection goes to the
    address checked (webhook_target.pin), naming the configured host in `Host` and in TLS (SNI, the certificate's
    name). Redirects are not followed: a 3xx comes back as an answer, so the signed body goes to the configured URL
    only. TargetRefused when the address is inward; NoAnswer when none came."""
    try:
        target = pin(url, allow_private, resolve)
    except TargetUnresolved as exc:
        raise NoAnswer(str(exc)) from None
    sent = {**headers, "Host": target.host_header, "User-Agent": "recall-review-webhooks/1"}
    try:
        with httpx.Client(
            trust_env=False, follow_redirects=False, timeout=timeout_s
        ) as client:  # no proxy from the env
            with client.stream(
                "POST", target.direct_url, content=body, headers=sent, extensions={"sni_hostname": target.host}
            ) as response:
                return response.status_code
    except httpx.HTTPError as exc:
        raise NoAnswer(f"no answer from {urlsplit(url).netloc}: {exc or type(exc).__name__}") from None


def _insert_ignoring_duplicates(conn: sa.Connection):
    return (postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert)(
        webhook_events
    ).on_conflict_do_nothing(index_elements=["document_id"])


class WebhookEvents(DeliveryQueue):
    """The webhook events of the review store: queued by `dispatch`, posted by `deliver_due` (send: `post_webhook`)."""

    table = webhook_events
    changes_memory = False  # a delivered event changes no recall: no instance recalls again for it

    def __init__(self, store: Engine | Path, clock: Callable[[], datetime] = utc_now, targets: Targets | None = None):
        super().__init__(store, clock)
        self.targets: Targets = dict(targets or {})
        self._silent: set[str] = set()  # URLs that gave no answer in this pass

    def _parse(self, row: sa.Row) -> WebhookEvent:
        data = dict(row._mapping)
        for key in ("created_at", "next_attempt_at", "delivered_at"):
            data[key] = as_utc(data[key])
        return WebhookEvent.model_validate(data)

    # -- queueing ------------------------------------------------------------------------

    def dispatch(self, targets: Targets | None = None) -> int:
        """Queue an event for each standing decision changed since the cursor whose (bank, kind) has a target, and move
        the cursor, in one transaction; how many events are new. A missing cursor starts at the current count, so a
        webhook configured today is told of today's decisions, not of the history."""
        targets = self.targets if targets is None else targets
        if not targets:
            return 0  # nothing configured: the cursor waits where it is, and resumes there
        counter = sa.select(log_versions.c.version).where(log_versions.c.log == standing_decisions.name)
        with self.engine.connect() as conn:  # nothing changed (most passes): no write, no lock
            if (
                conn.execute(counter).scalar_one()
                == conn.execute(sa.select(cursors.c.value).where(cursors.c.name == CURSOR)).scalar()
            ):
                return 0
        now = self.clock()
        with self.engine.begin() as conn:  # SQLite: BEGIN IMMEDIATE; PostgreSQL: the cursor's row is locked below
            counted = conn.execute(counter).scalar_one()
            start = self._cursor(conn, counted)
            # Every count up to `counted` has committed (the triggers hold the counter until they commit): reading up to
            # it and moving the cursor there skips nothing; a later count is read by the next pass.
            pairs = [sa.and_(S.bank_id == bank, S.case_kind == kind) for bank, kind in targets]
            rows = conn.execute(
                sa.select(S.bank_id, S.case_kind, S.case_id, S.decision_id, decisions.c.decision, decisions.c.revision)
                .join(decisions, decisions.c.id == S.decision_id)
                .where(S.change_seq > start, S.change_seq <= counted, sa.or_(*pairs), S.state != SUPERSEDED)
                .order_by(S.change_seq, S.decision_id)
            ).all()
            events = [self._event(targets[(row.bank_id, row.case_kind)], row, now) for row in rows]
            created = 0
            for chunk in range(0, len(events), INSERT_CHUNK):
                created += conn.execute(
                    _insert_ignoring_duplicates(conn).values(events[chunk : chunk + INSERT_CHUNK])
                ).rowcount
            conn.execute(cursors.update().where(cursors.c.name == CURSOR).values(value=counted))
        return created

    def hold_position(self) -> int:
        """Where the events start, made durable now if it is not yet (at the newest decision): every process with a
        webhook in its settings holds it before it records anything, so a decision recorded from then on is sent,
        whenever a worker's first pass comes (docs/webhooks.md). Its value."""
        if not self.targets:
            return 0
        counter = sa.select(log_versions.c.version).where(log_versions.c.log == standing_decisions.name)
        with self.engine.connect() as conn:  # held already (every start but the first): no write
            held = conn.execute(sa.select(cursors.c.value).where(cursors.c.name == CURSOR)).scalar()
        if held is not None:
            return int(held)
        with self.engine.begin() as conn:
            return self._cursor(conn, conn.execute(counter).scalar_one())

    @staticmethod
    def _cursor(conn: sa.Connection, counted: int) -> int:
        """The cursor's value, its row locked until the transaction ends (PostgreSQL: one dispatcher at a time); a
        missing cursor is made at `counted`."""
        read = sa.select(cursors.c.value).where(cursors.c.name == CURSOR)
        if conn.dialect.name == "postgresql":
            read = read.with_for_update()
        value = conn.execute(read).scalar()
        if value is None:
            insert = (postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert)(cursors)
            conn.execute(insert.values(name=CURSOR, value=counted).on_conflict_do_nothing(index_elements=["name"]))
            value = conn.execute(read).scalar_one()
        return int(value)

    @staticmethod
    def _event(target: WebhookTarget, row: sa.Row, now: datetime) -> dict:
        return {
            "bank_id": row.bank_id,
            "document_id": idempotency_key(row.decision_id),
            "case_kind": row.case_kind,
            "case_id": row.case_id,
            "decision_id": row.decision_id,
            "url": target.url,
            "body": event_body(target, row, now),
            "created_at": now,
            "state": PENDING,
            "attempts": 0,
            "next_attempt_at": now,
        }

    # -- sending -------------------------------------------------------------------------

    def deliver_due(self, send: Post = post_webhook, **options) -> DeliveryReport:
        """Queue what is new (`dispatch`), then post the due events (DeliveryQueue.deliver_due): 2xx delivered; no answer,
        5xx, 408, 429 backed off (1, 2, 4 ... 300 s) row by row; another 4xx parked `failed`."""
        self._silent = set()
        try:
            self.dispatch()
        except Exception:  # the events already queued still go out; the next pass dispatches again
            log.exception("queueing webhook events failed")
        return super().deliver_due(send, **options)

    def _send(self, send: Post, row: WebhookEvent) -> None:
        target = self.targets.get((row.bank_id, row.case_kind))
        if target is None:  # this process has no webhook for it (another instance's settings may): wait, do not park
            self._fail(
                row, None, f"no webhook configured here for {row.case_kind} of bank {row.bank_id}", ReceiverUnavailable
            )
        if target.url in self._silent:  # one timeout per receiver and pass, not one per event
            self._fail(
                row, None, f"not sent: {urlsplit(target.url).netloc} gave no answer earlier in this pass", NoAnswer
            )
        headers = signed_headers(target.secret, row.document_id, row.body, self.clock().timestamp())
        try:
            status = send(target.url, row.body.encode(), headers, TIMEOUT_S, allow_private=target.allow_private)
        except NoAnswer as exc:
            self._silent.add(target.url)
            self._fail(row, None, str(exc), NoAnswer, url=target.url)
        except TargetRefused as exc:  # parked, in words, until the settings change and a lead redelivers
            self._fail(row, None, str(exc), ReceiverRejected, url=target.url)
        if 200 <= status < 300:
            self._log_attempt(row.id, status, None, target.url)
            self._due_now(target.url)
            return
        retried = status >= 500 or status in RETRIED_STATUSES
        self._fail(
            row,
            status,
            f"the receiver answered HTTP {status}",
            ReceiverUnavailable if retried else ReceiverRejected,
            url=target.url,
        )

    def _due_now(self, url: str) -> None:
        """The receiver at `url` answered: its events backing off from an outage are due now, not after their backoff
        (up to 5 minutes), so a receiver that comes back gets what it missed within a pass or two."""
        now = self.clock()
        with self.engine.begin() as conn:
            conn.execute(
                webhook_events.update()
                .where(
                    E.state == PENDING,
                    E.url == url,
                    E.next_attempt_at > now,
                    sa.or_(E.lease_until.is_(None), E.lease_until < now),
                )
                .values(next_attempt_at=now)
            )

    def _fail(
        self, row: WebhookEvent, status: int | None, error: str, raised: type[Exception], url: str | None = None
    ) -> NoReturn:
        """Log the attempt, then raise what DeliveryQueue answers with a backoff (ReceiverUnavailable) or a park (ReceiverRejected)."""
        self._log_attempt(row.id, status, error, url or row.url)
        raise raised(error)

    def _log_attempt(self, event_id: int, status: int | None, error: str | None, url: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(
                webhook_attempts.insert().values(
                    event_id=event_id,
                    at=self.clock(),
                    status_code=status,
                    error=error[:ERROR_CHARS] if error else None,
                )
            )
            conn.execute(webhook_events.update().where(E.id == event_id, E.url != url).values(url=url))  # the URL used

    # -- a lead's actions and the log ------------------------------------------------------

    def redeliver(self, event_id: int) -> bool:
        """A lead sends an event again, failed or delivered, under the same idempotency key (a pending one: now).
        False when there is no such event."""
        now = self.clock()
        with self.engine.begin() as conn:
            again = conn.execute(
                webhook_events.update()
                .where(E.id == event_id, E.state.in_((FAILED, DELIVERED, DISCARDED)))
                .values(state=PENDING, next_attempt_at=now, delivered_at=None, lease_owner=None, lease_until=None)
            ).rowcount
            if again:
                return True
            return (
                conn.execute(
                    webhook_events.update().where(E.id == event_id, E.state == PENDING).values(next_attempt_at=now)
                ).rowcount
                == 1
            )

    def deliveries(self, limit: int = 200) -> list[WebhookDelivery]:
        """The delivery log, newest event first: each event, its state, its attempts and what the latest one got."""
        latest = (
            sa.select(webhook_attempts.c.event_id, sa.func.max(webhook_attempts.c.id).label("attempt_id"))
            .group_by(webhook_attempts.c.event_id)
            .subquery()
        )
        attempt = webhook_attempts.alias("latest_attempt")
        query = (
            sa.select(
                E.id,
                E.document_id,
                E.case_kind,
                E.case_id,
                E.bank_id,
                E.url,
                E.state,
                E.attempts,
                E.created_at,
                E.delivered_at,
                attempt.c.status_code,
                attempt.c.error,
            )
            .outerjoin(latest, latest.c.event_id == E.id)
            .outerjoin(attempt, attempt.c.id == latest.c.attempt_id)
            .order_by(E.id.desc())
            .limit(limit)
        )
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [
            WebhookDelivery(
                event_id=r.id,
                idempotency_key=r.document_id,
                case_kind=r.case_kind,
                case_id=r.case_id,
                bank_id=r.bank_id,
                url=r.url,
                state=r.state,
                attempts=r.attempts,
                last_status=r.status_code,
                last_error=r.error,
                created_at=as_utc(r.created_at),
                delivered_at=as_utc(r.delivered_at),
            )
            for r in rows
        ]
