"""Webhooks told of each final decision: decisions made through the decision service on a scratch review store become
signed events, posted to a real HTTP receiver on 127.0.0.1 (http.server in a thread). The clock is injected, so a
backoff is stepped over rather than slept through."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import sqlalchemy as sa
from pydantic import ValidationError

from dashboard.access.limits import ApprovalLimits
from dashboard.delivery.webhook_signature import EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, signature, verify
from dashboard.delivery.webhooks import WebhookEvents, WebhookTarget
from dashboard.hindsight.wire import MemoryRecord
from dashboard.processes import free_port
from dashboard.review.decisions import Proposal
from dashboard.settings import load_settings, settings_problem
from dashboard.store.schema import webhook_attempts
from tests.helpers import plain_decision, service_on

BANK, SECRET = "fin", "a-webhook-secret-of-the-tests"
# The URL is the receiver's, set per test; it listens on 127.0.0.1, so these targets allow private addresses explicitly
# (a webhook is refused there otherwise: test_webhook_targets.py).
TARGETS = {(BANK, "exception"): WebhookTarget("finance", "", SECRET, allow_private=True)}


class Clock:
    def __init__(self):
        self.now = datetime.now(UTC)

    def __call__(self):
        return self.now

    def step(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@dataclass(frozen=True)
class Received:
    headers: dict[str, str]
    body: bytes
    answered: int
    at: float  # unix seconds by the test's clock: when the receiver checks the signature


class Receiver:
    """A webhook receiver on 127.0.0.1:`port`: keeps every request it gets and answers `status`. Stopped, the port is
    closed: a connection is refused, as by a receiver that is down."""

    def __init__(self, port: int):
        self.port, self.status, self.requests = port, 200, []
        self.clock = lambda: datetime.now(UTC)  # a test sets its own: the sender signs by it
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks/decisions"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                receiver.requests.append(
                    Received(dict(self.headers.items()), body, receiver.status, receiver.clock().timestamp())
                )
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(5)
            self._server = None

    def keys_answered_2xx(self) -> list[str]:
        return [r.headers[EVENT_ID_HEADER] for r in self.requests if 200 <= r.answered < 300]


@pytest.fixture
def receiver():
    running = Receiver(free_port())
    yield running
    running.stop()


def _proposal(
    case_id: str, outcome: str = "approve", amount: float | None = None, base_revision: int | None = 0
) -> Proposal:
    decision = plain_decision(case_id, outcome)
    record = MemoryRecord(document_id=f"decision-{case_id}", content=f"{case_id}: {outcome}", tags=["vendor:V01"])
    return Proposal(decision=decision, record=record, scope="vendor V01", base_revision=base_revision, amount=amount)


def _events(service, receiver: Receiver, clock: Clock) -> WebhookEvents:
    receiver.clock = clock
    targets = {key: WebhookTarget(t.kind, receiver.url, t.secret, t.allow_private) for key, t in TARGETS.items()}
    events = WebhookEvents(service.outbox.engine, clock=clock, targets=targets)
    assert events.dispatch() == 0  # the webhook is configured now: its cursor starts here
    return events


def _verified(received: Received) -> dict:
    """The event's JSON, after checking its signature as a receiver does when it arrives."""
    h = received.headers
    assert verify(SECRET, h[TIMESTAMP_HEADER], received.body, h[SIGNATURE_HEADER], now=received.at)
    event = json.loads(received.body)
    assert event["idempotency_key"] == h[EVENT_ID_HEADER]
    return event


def test_a_decision_becomes_one_signed_event_and_a_revision_another(scratch_service, receiver):
    service, clock = scratch_service(), Clock()
    events = _events(service, receiver.start(), clock)
    first = service.decide(BANK, "reviewer", _proposal("E-1", "reject"))
    assert events.deliver_due().delivered == 1

    (got,) = receiver.requests
    event = _verified(got)
    assert event["event"] == "decision.final" and event["idempotency_key"] == f"decision-{first.stored.id}"
    assert (event["kind"], event["case_kind"], event["case_id"], event["bank_id"]) == (
        "finance",
        "exception",
        "E-1",
        BANK,
    )
    assert {k: event["decision"][k] for k in ("outcome", "reviewer", "revision", "overridden")} == {
        "outcome": "reject",
        "reviewer": "Dana",
        "revision": 1,
        "overridden": True,
    }
    assert event["decision"]["revision_reason"] is None  # a first decision
    assert got.body.decode() == events.get(events.deliveries()[0].event_id).body  # the body stored is the body sent
    assert not verify(
        SECRET, got.headers[TIMESTAMP_HEADER], got.body + b" ", got.headers[SIGNATURE_HEADER], now=clock.now.timestamp()
    )
    assert not verify(
        "another-secret-entirely",
        got.headers[TIMESTAMP_HEADER],
        got.body,
        got.headers[SIGNATURE_HEADER],
        now=clock.now.timestamp(),
    )
    assert not verify(
        SECRET, got.headers[TIMESTAMP_HEADER], got.body, got.headers[SIGNATURE_HEADER], now=clock.now.timestamp() + 301
    )  # replayed after the tolerance

    # Hindsight storing the decision moves its standing row again: seen again, no second event
    service.outbox.deliver_due(lambda bank, records: None)
    assert service.outbox.get(first.stored.id).state == "delivered"
    assert events.deliver_due().delivered == 0 and len(receiver.requests) == 1

    revised = service.decide(
        BANK, "reviewer", _proposal("E-1", "approve", base_revision=1), revise="the contract was amended"
    )
    assert events.deliver_due().delivered == 1
    event = _verified(receiver.requests[-1])
    assert event["idempotency_key"] == f"decision-{revised.stored.id}" and event["decision"]["revision"] == 2
    assert event["decision"]["revision_reason"] == "the contract was amended"


def test_a_held_decision_sends_nothing_until_it_is_released(scratch_service, receiver):
    service, clock = scratch_service(limits=ApprovalLimits({"reviewer": 10_000})), Clock()
    events = _events(service, receiver.start(), clock)
    held = service.decide(BANK, "reviewer", _proposal("E-2", amount=42_000))
    assert held.stored.state == "awaiting_approval"
    assert events.deliver_due().delivered == 0 and receiver.requests == [] and events.deliveries() == []

    service.second_approval(BANK, "lead", "exception", "E-2", "Lee", confirm=True)
    assert events.deliver_due().delivered == 1
    assert _verified(receiver.requests[0])["idempotency_key"] == f"decision-{held.stored.id}"


def test_a_receiver_down_while_20_decisions_are_made_gets_all_20_once_back(review_engine, receiver):
    service, clock = service_on(review_engine), Clock()  # SQLite, then PostgreSQL
    events = _events(service, receiver, clock)  # not started: its port refuses connections
    made = [service.decide(BANK, "reviewer", _proposal(f"E-{i:03d}")).stored.id for i in range(20)]
    expected = {f"decision-{i}" for i in made}

    for wait in (0, 1.5, 2.5, 4.5):  # down through three backoff steps (1, 2, 4 s): each event waits, none is given up
        clock.step(wait)
        report = events.deliver_due()
        assert (report.delivered, report.failed, report.still_pending) == (0, 0, 20)
    log = events.deliveries()
    assert {d.idempotency_key for d in log} == expected
    assert {(d.state, d.attempts, d.last_status) for d in log} == {("pending", 4, None)}
    assert all("no answer" in d.last_error for d in log)
    with service.outbox.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(webhook_attempts)).scalar_one() == 80

    receiver.start()
    assert events.deliver_due().delivered == 0  # still backing off: due 8 s after the last try
    clock.step(8.5)
    assert events.deliver_due().delivered == 20
    assert all(_verified(r) for r in receiver.requests)
    for _ in range(3):  # later passes send nothing again
        clock.step(400)
        assert events.deliver_due().delivered == 0
    keys = receiver.keys_answered_2xx()
    assert sorted(keys) == sorted(expected) and len(keys) == len(set(keys)) == 20
    assert {(d.state, d.last_status) for d in events.deliveries()} == {("delivered", 200)}


def test_a_receiver_that_answers_again_gets_the_events_it_missed_without_waiting_out_their_backoff(
    scratch_service, receiver
):
    service, clock = scratch_service(), Clock()
    events = _events(service, receiver, clock)  # down
    for case in ("E-30", "E-31"):
        service.decide(BANK, "reviewer", _proposal(case))
    for wait in (0, 1.5, 2.5, 4.5, 8.5):  # backing off: next try 16 s after the last
        clock.step(wait)
        assert events.deliver_due().delivered == 0
    receiver.start()
    service.decide(BANK, "reviewer", _proposal("E-32"))  # a new event is due at once
    assert events.deliver_due().delivered == 1  # its 2xx brings the two waiting ones forward ...
    assert events.deliver_due().delivered == 2  # ... to this very pass, on the same clock
    assert sorted(_verified(r)["case_id"] for r in receiver.requests) == ["E-30", "E-31", "E-32"]


def test_two_workers_on_one_store_queue_each_decision_once_and_send_it_once(review_engine, receiver):
    service = service_on(review_engine)
    targets = {
        key: WebhookTarget(t.kind, receiver.start().url, t.secret, t.allow_private) for key, t in TARGETS.items()
    }
    workers = [WebhookEvents(review_engine, targets=targets) for _ in range(2)]  # two instances, the real clock
    workers[0].dispatch()
    deciding, failures = threading.Event(), []

    def work(events: WebhookEvents) -> None:
        try:
            while deciding.is_set():
                events.deliver_due()
        except Exception as exc:  # noqa: BLE001 - reported by the assert below
            failures.append(exc)

    deciding.set()
    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    made = {f"decision-{service.decide(BANK, 'reviewer', _proposal(f'E-{i:03d}')).stored.id}" for i in range(30)}
    deciding.clear()
    for thread in threads:
        thread.join(60)
    assert failures == []
    for events in workers:  # whatever the race left: one more pass each
        events.deliver_due()
    assert {d.idempotency_key for d in workers[1].deliveries()} == made and len(workers[1].deliveries()) == 30
    keys = receiver.keys_answered_2xx()
    assert sorted(keys) == sorted(made)  # each once: no event queued twice, none sent by both workers
    assert all(_verified(r) for r in receiver.requests)


def test_a_busy_receiver_is_retried_and_a_refusing_one_parks_the_event_until_a_lead_redelivers(
    scratch_service, receiver
):
    service, clock = scratch_service(), Clock()
    events = _events(service, receiver.start(), clock)
    decided = service.decide(BANK, "reviewer", _proposal("E-3"))
    for busy in (503, 429, 408):
        receiver.status = busy
        assert events.deliver_due().delivered == 0
        (line,) = events.deliveries()
        assert (line.state, line.last_status) == ("pending", busy)
        clock.step(300)

    receiver.status = 400
    report = events.deliver_due()
    assert (report.delivered, report.failed) == (0, 1)
    (line,) = events.deliveries()
    assert (line.state, line.last_status, line.last_error) == ("failed", 400, "the receiver answered HTTP 400")
    clock.step(3600)
    assert events.deliver_due().failed == 0 and len(receiver.requests) == 4  # parked: not tried again on its own

    receiver.status = 200
    assert events.redeliver(line.event_id) and not events.redeliver(line.event_id + 100)
    assert events.deliver_due().delivered == 1
    bodies = {r.body for r in receiver.requests}
    assert len(bodies) == 1  # every attempt and the redelivery: the same event, the same key and body
    assert {_verified(r)["idempotency_key"] for r in receiver.requests} == {f"decision-{decided.stored.id}"}
    assert events.deliveries()[0].state == "delivered"

    assert events.redeliver(line.event_id)  # a delivered event, sent again on a lead's word
    assert events.deliver_due().delivered == 1 and receiver.keys_answered_2xx() == [f"decision-{decided.stored.id}"] * 2


def test_a_webhook_configured_on_a_store_with_history_starts_at_its_newest_decision(scratch_service, receiver):
    service, clock = scratch_service(), Clock()
    for case in ("E-10", "E-11", "E-12"):
        service.decide(BANK, "reviewer", _proposal(case))
    events = _events(service, receiver.start(), clock)  # the first dispatch: the cursor is made at the newest count
    assert events.deliver_due().delivered == 0 and events.deliveries() == []

    service.decide(BANK, "reviewer", _proposal("E-13"))
    service.decide("another-bank", "reviewer", _proposal("E-14"))  # no webhook for that bank: no event
    assert events.deliver_due().delivered == 1
    assert [_verified(r)["case_id"] for r in receiver.requests] == ["E-13"]
    assert [d.case_id for d in events.deliveries()] == ["E-13"]


def test_the_signature_is_hmac_sha256_over_the_timestamp_and_the_body():
    import hashlib
    import hmac

    body = b'{"event":"decision.final"}'
    expected = hmac.new(SECRET.encode(), b"1700000000." + body, hashlib.sha256).hexdigest()
    assert signature(SECRET, 1700000000, body) == f"sha256={expected}"
    assert verify(SECRET, "1700000000", body, f"sha256={expected}", now=1700000100)
    assert not verify(SECRET, "1700000000", body, f"sha256={expected}", now=1700000301)
    assert not verify(SECRET, "17e8", body, f"sha256={expected}", now=1700000000)


def test_a_kinds_webhook_is_a_setting_and_a_url_without_a_secret_is_an_error_naming_it(tmp_path, monkeypatch):
    from dashboard.kinds import configured, webhook_targets

    for name in ("RECALL_REVIEW_QUEUES", "RECALL_REVIEW_FINANCE_BANK", "RECALL_REVIEW_KINDS"):
        monkeypatch.delenv(name, raising=False)
    secrets = tmp_path / "secrets.toml"
    secrets.write_text(
        f'[queues.finance]\nbank = "ap"\nwebhook_url = "https://erp.example/hooks"\nwebhook_secret = "{SECRET}"\n'
    )
    settings = configured(load_settings(secrets_file=secrets))
    assert settings.finance_bank == "ap" and settings.queue("finance").webhook_url == "https://erp.example/hooks"
    (target,) = webhook_targets(settings).items()
    assert target == (("ap", "exception"), WebhookTarget("finance", "https://erp.example/hooks", SECRET))
    assert SECRET not in repr(target[1])

    for entry, problem in (
        ('{"finance": {"webhook_url": "https://erp.example/hooks"}}', "webhook_secret is required with webhook_url"),
        (
            '{"support": {"webhook_url": "ftp://erp.example/x", "webhook_secret": "0123456789abcdef"}}',
            "webhook_url: must be an http:// or https:// URL",
        ),
        (
            '{"support": {"webhook_url": "https://erp.example/x", "webhook_secret": "short"}}',
            "webhook_secret: must be 16 to 500 characters",
        ),
    ):
        monkeypatch.setenv("RECALL_REVIEW_QUEUES", entry)
        with pytest.raises(ValidationError) as error:
            load_settings(secrets_file=tmp_path / "none.toml")
        words = settings_problem(error.value)
        assert words.startswith("RECALL_REVIEW_QUEUES.") and problem in words
        assert not any(value in words for value in ("erp.example", "0123456789abcdef", "short"))  # no value echoed


def test_the_delivery_log_and_redeliver_from_the_command_line(scratch_service, receiver, tmp_path, monkeypatch, capsys):
    from dashboard.cli import main
    from dashboard.store.db import make_engine

    service, clock = (
        service_on(make_engine(None, tmp_path)),
        Clock(),
    )  # the store `python -m dashboard` finds in the data directory
    events = _events(service, receiver.start(), clock)
    service.decide(BANK, "reviewer", _proposal("E-20"))
    receiver.status = 410
    assert events.deliver_due().failed == 1
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("RECALL_REVIEW_DATABASE_URL", raising=False)

    assert main(["webhooks", "list", "--json"]) == 0
    (line,) = json.loads(capsys.readouterr().out)
    assert (line["case_id"], line["state"], line["last_status"]) == ("E-20", "failed", 410)
    monkeypatch.setenv("RECALL_REVIEW_ROLE", "reviewer")
    assert main(["webhooks", "redeliver", str(line["event_id"])]) == 1 and "not redelivered" in capsys.readouterr().err
    monkeypatch.setenv("RECALL_REVIEW_ROLE", "lead")
    assert main(["webhooks", "redeliver"]) == 2 and "error: event:" in capsys.readouterr().err
    assert main(["webhooks", "redeliver", "999"]) == 2 and "no webhook event #999" in capsys.readouterr().err
    assert main(["webhooks", "redeliver", str(line["event_id"])]) == 0
    receiver.status, clock.now = 200, datetime.now(UTC)  # the command marked it due by the real clock
    assert events.deliver_due().delivered == 1 and events.deliveries()[0].state == "delivered"
    assert (
        main(["webhooks", "list"]) == 0 and "E-20: delivered, 2 attempt(s), last: HTTP 200" in capsys.readouterr().out
    )


def _log_page() -> None:
    from datetime import UTC, datetime

    import streamlit as st

    from components.webhook_deliveries import render_webhook_deliveries
    from dashboard.delivery.webhooks import WebhookDelivery

    at = datetime(2026, 12, 1, 9, 30, tzinfo=UTC)
    line = {"case_kind": "exception", "bank_id": "fin", "url": "https://erp.example/hooks", "created_at": at}
    log = [
        WebhookDelivery(
            event_id=2,
            idempotency_key="decision-7",
            case_id="**E-7**",
            state="failed",
            attempts=1,
            last_status=400,
            last_error="the receiver answered HTTP 400",
            delivered_at=None,
            **line,
        ),
        WebhookDelivery(
            event_id=1,
            idempotency_key="decision-5",
            case_id="E-5",
            state="delivered",
            attempts=3,
            last_status=200,
            last_error=None,
            delivered_at=at,
            **line,
        ),
    ]
    st.session_state["asked"] = render_webhook_deliveries(log, can_redeliver=st.session_state.get("lead", True))


def test_the_audit_pages_delivery_log_shows_each_event_and_lets_a_lead_redeliver_a_refused_one():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_log_page, default_timeout=30).run()
    assert not at.exception
    frame = at.dataframe[0].value  # display-only: no key in AppTest
    assert list(frame["case"]) == ["**E-7**", "E-5"] and list(frame["last answer"]) == ["HTTP 400", "HTTP 200"]
    assert at.subheader[0].value == "Webhook deliveries (2 events, 1 refused)" and at.session_state["asked"] is None
    at.button(key="webhook_redeliver").click().run()
    assert at.session_state["asked"] == 2  # the refused event comes first
    at.session_state["lead"] = False
    at.run()
    assert not at.button and "A lead can send an event again." in [c.value for c in at.caption]


def test_the_audit_page_lists_the_events_and_a_lead_redelivers_a_refused_one(point_app, receiver, tmp_path):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import APP

    outbox = point_app(
        {
            "RECALL_REVIEW_DATA_DIR": str(tmp_path),
            "RECALL_REVIEW_API_PORT": str(free_port()),
            "RECALL_REVIEW_DELIVERY_WORKER": "false",
            "RECALL_REVIEW_ROLE": "lead",
        }
    )
    service, clock = service_on(outbox.engine), Clock()
    events = _events(service, receiver.start(), clock)
    service.decide(BANK, "reviewer", _proposal("E-40"))
    receiver.status = 422
    assert events.deliver_due().failed == 1

    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/audit.py").run()
    assert not at.exception
    assert "Webhook deliveries (1 event, 1 refused)" in [h.value for h in at.subheader]
    log = next(d.value for d in at.dataframe if "idempotency key" in d.value.columns)
    assert (log["case"][0], log["last answer"][0], log["state"][0]) == ("E-40", "HTTP 422", "refused by the receiver")
    at.button(key="webhook_redeliver").click().run()
    assert not at.exception and events.deliveries()[0].state == "pending"
    receiver.status, clock.now = 200, datetime.now(UTC)
    assert events.deliver_due().delivered == 1 and receiver.keys_answered_2xx() == [
        receiver.requests[0].headers[EVENT_ID_HEADER]
    ]
