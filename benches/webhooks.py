"""`python -m benches webhooks`: the webhook outage drill, in real time (not a test: it takes over a minute).

A receiver on 127.0.0.1 checks every request's signature as docs/webhooks.md says; the delivery worker runs as the
app runs it (a thread, real clock, real backoff). The receiver is stopped, `--decisions` decisions are made through
the decision service over `--outage` seconds, then the receiver comes back; the drill waits until every event has
been answered 2xx (or gives up) and counts what arrived: received, verified, and any idempotency key delivered twice
to a receiver that had answered 2xx. A scratch review store of its own; its decisions are retained into no memory.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benches.registry import command

BANK, CASE_KIND, KIND_KEY = "webhook-drill", "exception", "finance"
GIVE_UP_S = 600  # after the receiver is back: the backoff's cap (300 s) twice


class DrillReceiver:
    """A receiver that verifies each request as a real one would, at its arrival, and answers 200."""

    def __init__(self, port: int, secret: str):
        self.port, self.secret = port, secret
        self.arrivals: list[tuple[str, bool, float]] = []  # (idempotency key, signature verified, when)
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/decisions"

    def start(self) -> None:
        from dashboard.delivery.webhook_signature import EVENT_ID_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, verify

        drill = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                ok = verify(
                    drill.secret,
                    self.headers.get(TIMESTAMP_HEADER, ""),
                    body,
                    self.headers.get(SIGNATURE_HEADER, ""),
                    now=time.time(),
                )
                with drill._lock:
                    drill.arrivals.append((self.headers.get(EVENT_ID_HEADER, ""), ok, time.monotonic()))
                self.send_response(200 if ok else 401)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self._server.serve_forever, name="drill-receiver", daemon=True).start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def answered_2xx(self) -> list[str]:
        with self._lock:
            return [key for key, ok, _ in self.arrivals if ok]


def _proposal(case_id: str, outcome: str):
    from datetime import UTC, datetime

    from dashboard.hindsight.wire import MemoryRecord
    from dashboard.review.decisions import Proposal
    from dashboard.store.decision import ReviewerDecision

    decision = ReviewerDecision(
        case_id=case_id,
        case_kind=CASE_KIND,
        reviewer="Drill Reviewer",
        authenticated=False,
        outcome=outcome,
        overridden=outcome != "approve",
        decided_at=datetime.now(UTC),
    )
    record = MemoryRecord(document_id=f"decision-{case_id}", content=f"{case_id}: {outcome}", tags=["kind:decision"])
    return Proposal(decision=decision, record=record, scope=case_id, base_revision=0)


def _tries_while_down(engine) -> tuple[int, int]:
    """(requests that got no answer, events held back in a pass after their receiver gave none) so far."""
    import sqlalchemy as sa

    from dashboard.store.schema import webhook_attempts

    with engine.connect() as conn:
        errors = list(
            conn.execute(sa.select(webhook_attempts.c.error).where(webhook_attempts.c.status_code.is_(None))).scalars()
        )
    refused = sum(1 for e in errors if (e or "").startswith("no answer"))
    return refused, len(errors) - refused


def run(decisions: int, outage_s: float, log) -> dict:
    from dashboard.delivery.outbox import Outbox
    from dashboard.delivery.webhooks import WebhookEvents, WebhookTarget, post_webhook
    from dashboard.delivery.worker import DeliveryWorker
    from dashboard.processes import free_port
    from dashboard.review.decisions import decision_service

    secret = secrets.token_urlsafe(24)
    receiver = DrillReceiver(free_port(), secret)
    with tempfile.TemporaryDirectory(prefix="webhook-drill-") as scratch:
        outbox = Outbox(Path(scratch) / "review.sqlite3")
        service = decision_service(outbox)  # no Hindsight: the worker's retain below keeps nothing
        events = WebhookEvents(
            outbox.engine,
            targets={(BANK, CASE_KIND): WebhookTarget(KIND_KEY, receiver.url, secret, allow_private=True)},
        )
        events.dispatch()  # the webhook is configured from here on
        worker = DeliveryWorker(outbox, lambda _bank, _records: None, idle_s=0.5, also=[(events, post_webhook)]).start()
        try:
            log(f"receiver stopped ({receiver.url}); {decisions} decisions over {outage_s:.0f} s")
            down_at = time.monotonic()
            for i in range(decisions):
                service.decide(BANK, "reviewer", _proposal(f"E-{9000 + i}", ("approve", "reject", "escalate")[i % 3]))
                time.sleep(max(0.0, down_at + (i + 1) * outage_s / decisions - time.monotonic()))
            time.sleep(max(0.0, down_at + outage_s - time.monotonic()))
            refused, held_back = _tries_while_down(outbox.engine)
            receiver.start()
            back_at = time.monotonic()
            log(
                f"receiver back after {back_at - down_at:.1f} s; while it was down {refused} requests got no answer and "
                f"{held_back} events were held back in a pass after one"
            )
            while len(set(receiver.answered_2xx())) < decisions and time.monotonic() - back_at < GIVE_UP_S:
                time.sleep(0.2)
            all_in_s = time.monotonic() - back_at
            time.sleep(3 * worker.idle_s)  # a few more passes: anything sent twice would arrive now
        finally:
            worker.stop()
            receiver.stop()
        log_lines = events.deliveries(decisions)
        outbox.engine.dispose()
    per_key = Counter(receiver.answered_2xx())
    return {
        "decisions": decisions,
        "outage_s": round(back_at - down_at, 1),
        "events_queued": len(log_lines),
        "requests_without_answer_while_down": refused,
        "held_back_in_a_pass_while_down": held_back,
        "received": len(receiver.arrivals),
        "verified": sum(1 for _, ok, _ in receiver.arrivals if ok),
        "distinct_keys_answered_2xx": len(per_key),
        "keys_delivered_twice_after_2xx": sum(1 for n in per_key.values() if n > 1),
        "all_delivered_s_after_back": round(all_in_s, 1),
        "most_attempts_for_one_event": max((d.attempts for d in log_lines), default=0),
        "states": dict(Counter(d.state for d in log_lines)),
    }


def print_report(report: dict) -> None:
    print(f"decisions made while the receiver was down: {report['decisions']} (outage {report['outage_s']} s)")
    print(
        f"events queued: {report['events_queued']}; while down: {report['requests_without_answer_while_down']} requests got "
        f"no answer, {report['held_back_in_a_pass_while_down']} events held back in a pass after one (each backed off)"
    )
    print(f"requests received after it came back: {report['received']}, signatures verified: {report['verified']}")
    print(
        f"idempotency keys answered 2xx: {report['distinct_keys_answered_2xx']} of {report['decisions']}; "
        f"delivered twice after a 2xx: {report['keys_delivered_twice_after_2xx']}"
    )
    print(
        f"all delivered {report['all_delivered_s_after_back']} s after the receiver came back; "
        f"most attempts for one event: {report['most_attempts_for_one_event']}; states: {report['states']}"
    )


def _args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--decisions", type=int, default=20, help="decisions made while the receiver is down (default 20)"
    )
    parser.add_argument("--outage", type=float, default=60.0, help="seconds the receiver is down (default 60)")
    parser.add_argument("--json", action="store_true")


@command(
    "webhooks",
    "the webhook outage drill: a receiver down while decisions are made, then everything received once",
    _args,
)
def run_bench_webhooks(args: argparse.Namespace) -> int:
    if not 1 <= args.decisions <= 1000:
        print("error: --decisions: must be from 1 to 1000", file=sys.stderr)
        return 2
    if not 1 <= args.outage <= 3600:
        print("error: --outage: must be from 1 to 3600 seconds", file=sys.stderr)
        return 2
    report = run(args.decisions, args.outage, log=lambda m: print(m, file=sys.stderr, flush=True))
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print_report(report)
    return (
        0
        if report["distinct_keys_answered_2xx"] == args.decisions and not report["keys_delivered_twice_after_2xx"]
        else 1
    )
