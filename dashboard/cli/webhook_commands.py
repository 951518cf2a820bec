"""`python -m dashboard webhooks list|redeliver`: the webhook delivery log, and a lead's redelivery of an event under
its own idempotency key (docs/webhooks.md). The worker (`python -m dashboard worker`, or the app's thread) sends it."""

from __future__ import annotations

import argparse
import sys

from dashboard.cli.registry import command, input_error, print_json


def _webhooks_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("list", "redeliver"), help="list the delivery log, or send an event again")
    parser.add_argument("event", nargs="?", type=int, help="redeliver: the event's number (as `list` shows it)")
    parser.add_argument("--limit", type=int, default=50, help="list: the newest N events (default 50)")
    parser.add_argument("--json", action="store_true")


@command(
    "webhooks", "the webhook delivery log of final decisions, and a lead's redelivery of one event", _webhooks_args
)
def run_webhooks(args: argparse.Namespace) -> int:
    from dashboard.access.roles import require
    from dashboard.delivery.webhooks import WebhookEvents
    from dashboard.settings import load_settings
    from dashboard.store.db import make_engine
    from dashboard.store.errors import NotAllowed

    if args.action == "redeliver" and args.event is None:
        return input_error("event", "redeliver needs the event's number (`webhooks list` shows it)")
    if not 1 <= args.limit <= 10_000:
        return input_error("--limit", "must be from 1 to 10000")
    settings = load_settings()
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        events = WebhookEvents(engine)
        if args.action == "list":
            log = events.deliveries(args.limit)
            if args.json:
                print_json([line.model_dump(mode="json") for line in log])
            for line in [] if args.json else log:
                answer = f"HTTP {line.last_status}" if line.last_status else (line.last_error or "not tried yet")
                print(
                    f"#{line.event_id} {line.idempotency_key} {line.case_kind} {line.case_id}: {line.state}, "
                    f"{line.attempts} attempt(s), last: {answer}"
                )
            return 0
        try:
            require(settings.role, "manage_deliveries")
        except NotAllowed as exc:
            print(f"error: not redelivered: {exc}", file=sys.stderr)
            return 1
        if not events.redeliver(args.event):
            return input_error("event", f"there is no webhook event #{args.event}")
        print(f"event #{args.event} will be sent again, under its own idempotency key, by the next worker pass")
        return 0
    finally:
        engine.dispose()
