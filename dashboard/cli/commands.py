"""The commands of the core rooms: server, seed, recall-ticket, migrate, recall-exception, bench. Each is a
thin shell over the core; input errors exit 2 naming the flag, Hindsight failures exit 1."""

from __future__ import annotations

import argparse
import sys

from dashboard.cli.registry import bank_arg, command, input_error, open_gateway, print_json, query_arg
from dashboard.hindsight.errors import HindsightError
from dashboard.settings import load_settings


# -- server -------------------------------------------------------------------------
def _server_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--json", action="store_true", help="print the status as JSON")


@command("server", "start, stop or show the embedded Hindsight", _server_args)
def run_server(args: argparse.Namespace) -> int:
    from dashboard.hindsight.embedded import EmbeddedServer, ServerError

    settings = load_settings()
    if not settings.embedded:
        if args.action == "status":
            return _external_status(settings, args.json)
        print(f"HINDSIGHT_API_URL is set ({settings.base_url}): the embedded server is not used.", file=sys.stderr)
        return 2
    server = EmbeddedServer(settings, log=lambda msg: print(msg, file=sys.stderr))
    try:
        if args.action == "start":
            status = server.start()
        elif args.action == "stop":
            server.stop()
            status = server.status()
        else:
            status = server.status()
    except ServerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    memory = _memory_modes(settings) if status.healthy else {}
    if args.json:
        print_json({**status.as_dict(), "memory": memory})
    else:
        state = "healthy" if status.healthy else ("running, not healthy" if status.running else "stopped")
        print(
            f"{status.url}: {state} (api pid {status.api_pid}, postgres pid {status.pg_pid}); data in {status.data_dir}"
        )
        for bank, mode in memory.items():
            print(f"  {bank}: {mode['label'] if mode else 'no such bank yet'}")
    return 0 if args.action != "status" or status.healthy else 3


def _memory_modes(settings) -> dict[str, dict | None]:
    """How the server stores each registered kind's bank (verbatim or extracting, observations), as it says."""
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.kinds import configured

    settings = configured(settings)  # every kind's bank, its own default where none is configured

    gateway = HindsightGateway(settings.base_url, settings.api_key)
    try:
        return {bank: _mode_of(gateway, bank) for bank in settings.banks}
    finally:
        gateway.close()


def _mode_of(gateway, bank: str) -> dict | None:
    try:
        return gateway.memory_mode(bank).as_json()
    except HindsightError:
        return None


def _external_status(settings, as_json: bool) -> int:
    """`server status` against HINDSIGHT_API_URL: its health and how it stores the banks; nothing is started."""
    from dashboard.hindsight.embedded import health

    healthy = (health(settings.base_url) or {}).get("status") == "healthy"
    memory = _memory_modes(settings) if healthy else {}
    if as_json:
        print_json({"url": settings.base_url, "embedded": False, "healthy": healthy, "memory": memory})
    else:
        print(f"{settings.base_url}: {'healthy' if healthy else 'not answering healthy'} (external server)")
        for bank, mode in memory.items():
            print(f"  {bank}: {mode['label'] if mode else 'no such bank yet'}")
    return 0 if healthy else 3


# -- seed ---------------------------------------------------------------------------
def _seed_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-agents", action="store_true", help="only the records: do not run the reference agents")


@command("seed", "retain the demo data into every registered kind's bank that declares a seed (idempotent)", _seed_args)
def run_seed(args: argparse.Namespace) -> int:
    from dashboard.cli.seed import seed_demo_data, seed_flags

    settings, gateway = open_gateway()
    try:
        counts = seed_demo_data(gateway, settings, log=lambda msg: print(msg, file=sys.stderr))
        if not args.no_agents:  # real agent recalls (incidents included) for a fresh demo
            from dashboard.cli.agent_commands import seed_agents

            counts["agent_runs"] = seed_agents(gateway, settings, log=lambda msg: print(msg, file=sys.stderr))
        counts["case_flags"] = seed_flags(gateway, settings, log=lambda msg: print(msg, file=sys.stderr))
    finally:
        gateway.close()
    if args.json:
        print_json(counts)
    return 0


# -- support ticket audit ------------------------------------------------------------
def _recall_ticket_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--customer", required=True, help="the customer's name, as in the directory")
    parser.add_argument("--issue", required=True, help="the ticket's issue text")
    parser.add_argument("--bank", type=bank_arg, help="support bank (default: the configured one)")
    parser.add_argument("--json", action="store_true")


@command(
    "recall-ticket",
    "recall a customer's history for a ticket: tagged path, or the audited legacy fallback",
    _recall_ticket_args,
)
def run_recall_ticket(args: argparse.Namespace) -> int:
    from dashboard.support.admission import AmbiguousName, marker_pattern
    from dashboard.support.customers import customer_tag
    from dashboard.support.recall import recall_for_ticket

    if not args.customer.strip():
        return input_error("--customer", "must not be empty")
    if not args.issue.strip():
        return input_error("--issue", "must not be empty")
    try:
        marker_pattern(args.customer)
        customer_tag(args.customer)
    except (AmbiguousName, ValueError) as exc:
        return input_error("--customer", str(exc))
    settings, gateway = open_gateway()
    try:
        result = recall_for_ticket(
            gateway.recall,
            args.bank or settings.support_bank,
            args.customer,
            args.issue,
            read_document=gateway.document,
        )
    finally:
        gateway.close()
    if args.json:
        print_json(result.as_json())
    else:
        print(f"{result.customer} ({result.tag}): path {result.path}")
        for item in result.evidence:
            print(f"  + {item.document_id}: {item.reason}")
        for item in result.legacy_rejected:
            print(f"  - {item.document_id}: {item.reason}")
    return 0


def _migrate_args(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--dry-run", action="store_true", help="classify and count; write nothing")
    mode.add_argument("--apply", action="store_true", help="write tagged replacements (idempotent, resumable)")
    parser.add_argument("--bank", type=bank_arg, help="support bank (default: the configured one)")
    parser.add_argument("--customers", help="customer directory file (default: the demo customers.json)")
    parser.add_argument("--limit", type=int, help="convert at most this many records in this run")
    parser.add_argument("--batch-size", type=int, default=10)
    parser.add_argument("--json", action="store_true")


@command("migrate", "migrate untagged support records to customer tags (--dry-run or --apply)", _migrate_args)
def run_migrate(args: argparse.Namespace) -> int:
    from dashboard.cli.agent_commands import open_stores
    from dashboard.queue_files import QueueFileError, load_rows
    from dashboard.support import migration
    from dashboard.support.directory import check_directory
    from dashboard.support.models import Customer

    if args.limit is not None and args.limit < 0:
        return input_error("--limit", "must be 0 or more")
    if args.batch_size < 1:
        return input_error("--batch-size", "must be 1 or more")
    try:
        customers = load_rows(args.customers or load_settings().customers_file, Customer, id_field="name")
    except QueueFileError as exc:
        return input_error("--customers", str(exc))
    problems = check_directory(customers)
    if problems:
        return input_error("--customers", "the directory is not safe to migrate against: " + "; ".join(problems))
    settings, gateway = open_gateway()
    bank = args.bank or settings.support_bank
    try:
        if args.dry_run:
            plan = migration.plan(gateway, bank, customers)
            payload = {
                "mode": "dry-run",
                "bank": bank,
                "counts": plan.counts(),
                "coverage": plan.coverage.as_json(),
                "records": [c.model_dump(exclude={"text"}) for c in plan.reliable + plan.failed],
            }
        else:
            provenance = open_stores(settings)[
                0
            ].provenance  # the migrated records are signed as this dashboard's migration's
            report = migration.apply(
                gateway,
                bank,
                customers,
                batch_size=args.batch_size,
                limit=args.limit,
                retain=lambda b, records: gateway.retain(b, [provenance.sign(r, "migration") for r in records]),
            )
            payload = {
                "mode": "apply",
                "bank": bank,
                "converted": report.converted,
                "remaining_reliable": report.remaining_reliable,
                "before": report.before.as_json(),
                "after": report.after.as_json(),
                "error": report.error,
            }
    except migration.MigrationError as exc:
        print(f"error: migration of {bank} stopped: {exc}", file=sys.stderr)
        return 1
    finally:
        gateway.close()
    if args.json:
        print_json(payload)
    elif args.dry_run:
        print(f"{bank}: {payload['counts']}; coverage {payload['coverage']}")
        for item in payload["records"]:
            print(f"  {item['document_id']}: {item['status']}: {item['reason']}")
    else:
        print(f"{bank}: converted {len(report.converted)}; before {payload['before']}; after {payload['after']}")
    return 1 if not args.dry_run and report.error else 0


# -- finance exception recall -----------------------------------------------------------
def _recall_exception_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--vendor", help="vendor code, e.g. V01")
    parser.add_argument("--type", dest="exception_type", help="exception type, e.g. price_variance")
    parser.add_argument(
        "--query", default="", type=query_arg, help="recall query text (default: built from vendor and type)"
    )
    parser.add_argument("--k", default="5", help="how many records to recall (default 5)")
    parser.add_argument("--bank", type=bank_arg, help="finance bank (default: the configured one)")
    parser.add_argument("--json", action="store_true")


@command(
    "recall-exception",
    "two-stage recall of AP precedents for a vendor and exception type, with the recommendation",
    _recall_exception_args,
)
def run_recall_exception(args: argparse.Namespace) -> int:
    from dashboard.cli.agent_commands import open_stores
    from dashboard.finance.policy import assess
    from dashboard.finance.recall import MAX_K, CaseKey, InvalidCase, check_crowd_out, two_stage_recall
    from dashboard.hindsight.write_facts import asker

    try:
        key = CaseKey.parse(args.vendor, args.exception_type)
    except InvalidCase as exc:
        return input_error("--vendor" if exc.field == "vendor" else "--type", str(exc).split(": ", 1)[1])
    try:
        k = int(args.k)
    except ValueError:
        k = 0
    if not 1 <= k <= MAX_K:
        return input_error("--k", f"must be a whole number from 1 to {MAX_K}, got {args.k!r}")
    settings, gateway = open_gateway()
    try:
        result = two_stage_recall(gateway.recall, args.bank or settings.finance_bank, key, args.query, k=k)
        result = check_crowd_out(gateway.recall, result)  # reuses pass 2; one more call only when it was skipped
        outbox, _ = open_stores(settings)  # a reviewer's authority is proven by the review store's signature
        result, rec = assess(
            result,
            outbox.provenance.origin,
            settings.origin_weights,
            untrusted_decides=settings.untrusted_decides,
            ask_server=asker(gateway, result.bank_id),
        )
    finally:
        gateway.close()
    payload = {
        "bank": result.bank_id,
        "vendor": key.vendor_code,
        "type": key.exception_type,
        "query": result.query,
        "k": k,
        "exact": [e.as_json() for e in result.exact],
        "broader": [e.as_json() for e in result.broader],
        "pass2_skipped": result.pass2_skipped,
        "crowded_out_in_single_pass": result.crowd_out.lost,
        "crowd_out_check": "reused pass 2" if result.crowd_out.reused_pass2 else "one extra any_strict call",
        "calls": result.calls,
        "recommendation": rec.model_dump(
            include={"action", "confidence", "cited", "rationale", "policy", "untrusted", "if_trusted", "rests_on"}
        ),
    }
    if args.json:
        print_json(payload)
    else:
        print(
            f"{key.vendor_code} / {key.exception_type}: {len(result.exact)} exact, {len(result.broader)} broader"
            f"{' (pass 2 skipped)' if result.pass2_skipped else ''}; single pass would lose {result.crowd_out.lost}"
        )
        for e in result.records:
            print(f"  {e.pass_:8} {'relevant' if e.relevant else 'other   '} {e.ref}")
        print(f"recommendation: {rec.action} ({rec.confidence:.2f}): {rec.rationale}")
        for ref, why in rec.untrusted.items():
            print(f"  set aside: {ref}: {why}")
    return 0
