"""The review store's commands: `python -m dashboard worker` delivers recorded decisions to Hindsight (and each kind's
webhook events, docs/webhooks.md).

Run one or more next to the app instances of a deployment (with RECALL_REVIEW_DELIVERY_WORKER=false on
the instances, or not: they share the store and never deliver one row twice).
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

from dashboard.cli.registry import command, input_error, open_gateway, print_json


def _worker_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--once", action="store_true", help="one delivery pass, then exit (cron, or a test)")
    parser.add_argument("--idle", type=float, default=2.0, help="seconds between looks for new decisions (default 2)")
    parser.add_argument("--json", action="store_true", help="with --once: print the delivery report as JSON")


@command(
    "worker",
    "deliver recorded decisions from the review store to Hindsight until stopped (SIGTERM/Ctrl-C)",
    _worker_args,
)
def run_worker(args: argparse.Namespace) -> int:
    from dashboard.delivery.outbox import Outbox
    from dashboard.delivery.webhook_target import check_targets
    from dashboard.delivery.webhooks import WebhookEvents, post_webhook
    from dashboard.delivery.worker import DeliveryWorker
    from dashboard.kinds import webhook_targets
    from dashboard.review.curation import Curation
    from dashboard.store.db import make_engine

    if not 0.05 <= args.idle <= 3600:
        return input_error("--idle", "must be from 0.05 to 3600 seconds")
    settings, gateway = open_gateway()
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        also = [(Curation(engine), gateway.set_document_state)]
        targets = webhook_targets(settings)
        if targets:  # each kind's webhook told of its final decisions (docs/webhooks.md)
            also.append((WebhookEvents(engine, targets=targets), post_webhook))
            for line in check_targets({t.kind: (t.url, t.allow_private) for t in targets.values()}):
                print(f"worker: webhook {line}", file=sys.stderr, flush=True)
        worker = DeliveryWorker(Outbox(engine), gateway.retain, idle_s=args.idle, also=also)
        if args.once:
            report = worker.run_once()
            if args.json:
                print_json(report.model_dump())
            else:
                print(
                    f"delivered {report.delivered}, failed {report.failed}, superseded {report.superseded}, "
                    f"still pending {report.still_pending}{'; ' + report.error if report.error else ''}"
                )
            return 0
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        print(f"worker {worker.name} delivering from the review store to {settings.base_url}", flush=True)
        worker.run(stop)
        print(f"worker {worker.name} stopped after delivering {worker.delivered}", flush=True)
        return 0
    finally:
        gateway.close()
        engine.dispose()


def _export_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", choices=("csv", "json"), default="csv", help="CSV (default) or JSON, on stdout")


@command(
    "export-audit",
    "print the decision audit log: every reviewer's decision on a case, with its provenance",
    _export_args,
)
def run_export_audit(args: argparse.Namespace) -> int:
    """The Audit log page's export: a blind second review's first, second and lead decisions each as a row, with
    the reviewer, role, time, step and whether it was delivered or superseded."""
    from dashboard.delivery.outbox import Outbox
    from dashboard.reporting.audit_export import audit_rows, to_csv, to_json
    from dashboard.review.approvals import Approvals
    from dashboard.review.figures import held_statuses, log_statuses
    from dashboard.review.second_review import SecondReviews
    from dashboard.settings import load_settings
    from dashboard.store.db import make_engine

    settings = load_settings()
    outbox = Outbox(make_engine(settings.store_url, settings.data_dir))
    approvals, reviews = Approvals(outbox.engine), SecondReviews(outbox.engine)
    history = outbox.history()
    held = lambda bank, kind: held_statuses(approvals.held(bank, kind), reviews.open(bank, kind))  # noqa: E731
    rows = audit_rows(
        history, reviews.trail([h.id for h in history]), log_statuses(history, outbox.decision_states, held)
    )
    print(to_csv(rows) if args.format == "csv" else to_json(rows), end="")
    return 0
