"""Commands of the agents room: `agent` (run a reference agent) and `audit-recalls` (the audit log's
recalls, synced, with incidents)."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime

from dashboard.cli.acting import acting, token_arg
from dashboard.cli.registry import command, input_error, open_gateway, print_json


def open_stores(settings):
    """The review store the dashboard uses: its decision log and, on the same engine, the agent runs."""
    from dashboard.delivery.outbox import Outbox
    from dashboard.kinds import hold_webhook_position
    from dashboard.store.agent_runs import AgentRunStore
    from dashboard.store.db import make_engine

    outbox = Outbox(
        make_engine(settings.store_url, settings.data_dir), signing_key=settings.signing_secret
    )  # the store the app and the worker use
    hold_webhook_position(settings, outbox.engine)  # a decision this command records is sent to the kind's webhook
    return outbox, AgentRunStore(outbox.engine)


def seed_agents(gateway, settings, log=print) -> dict[str, int]:
    """Run the reference agents over the configured queues of the kinds that have one (naive variants on a few cases
    first)."""
    from dashboard.agents.runner import seed_agent_runs
    from dashboard.kinds import bank_of, cases_of, registered

    outbox, store = open_stores(settings)
    queues = [(kind, bank_of(settings, kind), cases_of(settings, kind)) for kind in registered(settings)]
    return seed_agent_runs(gateway, store, queues, log=log, origin=outbox.provenance.origin)


# -- agent ------------------------------------------------------------------------------------
def _agent_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("agent", choices=["finance", "support"])
    parser.add_argument("--variant", choices=["reviewed", "seed", "naive"], default="reviewed")
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--case", help="an exception id (finance) or a ticket id (support)")
    which.add_argument("--all", action="store_true", help="every case of the configured queue")
    parser.add_argument("--no-retain", action="store_true", help="support: draft without retaining the response")
    parser.add_argument("--json", action="store_true")


@command(
    "agent",
    "run a reference agent (real recalls, deterministic) on a case or the whole queue, and record the run",
    _agent_args,
)
def run_agent(args: argparse.Namespace) -> int:
    from dashboard.agents.runner import run_exception, run_ticket
    from dashboard.finance.models import ExceptionCase
    from dashboard.queue_files import QueueFileError, load_rows
    from dashboard.support.models import Ticket

    settings, gateway = open_gateway()
    finance = args.agent == "finance"
    try:
        items = load_rows(
            settings.exceptions_file if finance else settings.tickets_file, ExceptionCase if finance else Ticket
        )
    except QueueFileError as exc:
        return input_error("queue", str(exc))
    if args.case:
        items = [i for i in items if i.id == args.case]
        if not items:
            return input_error("--case", f"{args.case!r} is not in the {'exception' if finance else 'ticket'} queue")
    outbox, store = open_stores(settings)
    runs = []
    try:
        for item in items:
            if finance:
                runs.append(
                    run_exception(gateway, store, settings.finance_bank, item, args.variant, outbox.provenance.origin)
                )
            else:
                runs.append(
                    run_ticket(
                        gateway,
                        store,
                        settings.support_bank,
                        item,
                        args.variant,
                        retain=not args.no_retain,
                        origin=outbox.provenance.origin,
                    )
                )
    finally:
        gateway.close()
    if args.json:
        print_json(runs[0].as_json() if args.case else [r.as_json() for r in runs])
    else:
        for r in runs:
            head = f"{r.output['action']} ({r.output['confidence']:.2f})" if finance else f"path {r.output['path']}"
            print(
                f"{r.case_id} {r.agent}/{r.variant}: {head}; cited {', '.join(r.cited) or 'nothing'}; audit ids {len(r.audit_ids)}"
            )
    return 0


# -- audit-recalls -------------------------------------------------------------------------------
def _audit_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bank", required=True, help="a configured bank (finance or support)")
    parser.add_argument("--since", required=True, help="ISO date or time, e.g. 2026-11-30 or 2026-11-30T08:00:00+00:00")
    parser.add_argument("--incidents", action="store_true", help="also list the incidents of the agent runs since then")
    parser.add_argument("--json", action="store_true")


@command(
    "audit-recalls", "sync a configured bank's audit log and list the recalls (and incidents) since a time", _audit_args
)
def run_audit_recalls(args: argparse.Namespace) -> int:
    from datetime import UTC

    from dashboard.agents.audit_sync import sync_bank
    from dashboard.agents.findings import find_incidents

    settings, gateway = open_gateway()
    if args.bank not in (settings.finance_bank, settings.support_bank):
        gateway.close()
        return input_error(
            "--bank", f"{args.bank!r} is not a configured bank ({settings.finance_bank}, {settings.support_bank})"
        )
    try:
        since = datetime.fromisoformat(args.since)
    except ValueError:
        gateway.close()
        return input_error("--since", f"{args.since!r} is not an ISO date or time")
    since = since if since.tzinfo else since.replace(tzinfo=UTC)
    outbox, store = open_stores(settings)
    try:
        enabled = gateway.audit_log_enabled(args.bank)
        report = sync_bank(gateway, store, args.bank)
        payload = {
            "bank": args.bank,
            "audit_log_enabled": enabled,
            "sync": report.model_dump(),
            "recalls": [e.model_dump(mode="json") for e in store.entries(args.bank, since=since)],
        }
        if args.incidents:
            runs = [r for r in store.runs(bank_id=args.bank) if r.started_at >= since]
            payload["incidents"] = [i.model_dump(mode="json") for i in find_incidents(gateway, store, outbox, runs)]
    finally:
        gateway.close()
    if args.json:
        print_json(payload)
    else:
        print(
            f"{args.bank}: audit log {'on' if enabled else 'OFF'}; {len(payload['recalls'])} recall(s) since {since.isoformat()}"
        )
        for i in payload.get("incidents", []):
            print(f"[{i['kind']}] {i['case_id']} {i['agent']}/{i['variant']}: {i['summary']}")
    return 0


# -- decide ---------------------------------------------------------------------------------------
def _decide_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kind",
        help="the queue kind (finance, support, or a registered one); default: the one whose queue holds --case",
    )
    parser.add_argument("--case", required=True, help="a case id of that kind's configured queue (E-..., T-...)")
    parser.add_argument("--outcome", help="the decision, one of the kind's outcomes (or --second-approval)")
    parser.add_argument(
        "--second-approval",
        choices=["confirm", "reject"],
        help="confirm or reject the case's decision held above its reviewer's approval limit, as whoever acts",
    )
    parser.add_argument("--reason", help="a reason code (an override needs one where the kind has them)")
    parser.add_argument("--note", default="", help="a note (reason OTHER needs one; a ticket's override says why)")
    parser.add_argument("--response", help="tickets: the response that replaces the draft (outcome reject)")
    parser.add_argument(
        "--reviewer", help="who decides, typed: only where sign-in is off (recorded as unauthenticated)"
    )
    parser.add_argument(
        "--revise",
        metavar="REASON",
        help="revise the case's standing decision, for this reason (recorded as its next revision); "
        "without it a decided case is refused",
    )
    token_arg(parser)
    parser.add_argument("--json", action="store_true")


def _case_of_kind(settings, kind_key: str | None, case_id: str):
    """(kind, case) for --kind/--case, or (None, why not) naming the flag to fix."""
    from dashboard.kinds import KindError, by_key, cases_of, registered
    from dashboard.queue_files import QueueFileError

    try:
        kinds = [by_key(settings, kind_key)] if kind_key else list(registered(settings))
    except KindError as exc:
        return None, ("--kind", str(exc))
    for kind in kinds:
        try:
            cases = cases_of(settings, kind)
        except QueueFileError as exc:
            return None, ("queue", str(exc))
        found = next((c for c in cases if c.id == case_id), None)
        if found is not None:
            return (kind, found), None
    if kind_key:
        return None, ("--case", f"{case_id!r} is not in the {kinds[0].nouns[0]} queue")
    return None, ("--case", f"{case_id!r} is in no configured queue ({', '.join(k.key for k in kinds)})")


def _handed_in_agent(settings, kind, case_id: str):
    """The part of the agent that handed the case in (None: a queue file's row): the decision is compared with it."""
    from dashboard.kinds import handed_in

    stored = handed_in(settings).get(kind.name, case_id)
    return stored.agent if stored is not None else None


@command(
    "decide",
    "record a reviewer's decision like the page does: stored first, then retained into Hindsight",
    _decide_args,
)
def run_decide(args: argparse.Namespace) -> int:
    """For scripts and bulk imports of decisions made elsewhere: the same decision service as the pages (role,
    claim, approval limits, outbox, freshness). Sign-in off: as the typed --reviewer, under RECALL_REVIEW_ROLE, recorded
    as unauthenticated; sign-in on: as --token's owner, in its role, with their subject. A decision above the reviewer's
    limit is held; `--second-approval` confirms or rejects it.
    One path for every kind (dashboard/kinds.py): its recall, then its proposal from what was typed."""
    from datetime import UTC

    from dashboard.kinds import bank_of, proposed
    from dashboard.review.decisions import configured_decision_service
    from dashboard.review.queue_kind import Choice
    from dashboard.store.errors import AlreadyDecided, InputError, NotAllowed, Refused
    from dashboard.store.identity import Person

    if (args.outcome is None) == (args.second_approval is None):
        return input_error(
            "--outcome", "give either --outcome (a decision) or --second-approval confirm|reject, not both"
        )
    if args.second_approval and args.revise is not None:
        return input_error("--revise", "a second approval confirms or rejects the decision held; it revises nothing")
    if args.revise is not None and not args.revise.strip():
        return input_error("--revise", "give the reason for revising the decision")
    if args.second_approval and (args.reason or args.response):
        return input_error(
            "--reason" if args.reason else "--response", "a second approval confirms or rejects the decision as made"
        )
    settings, gateway = open_gateway()
    found, problem = _case_of_kind(settings, args.kind, args.case)
    if found is None:
        gateway.close()
        return input_error(*problem)
    kind, case = found
    who_acts, problem = acting(settings, args.reviewer, args.token, name_flag="--reviewer", kind_key=kind.key)
    if who_acts is None:
        gateway.close()
        return input_error(*problem)
    who, role = who_acts
    bank = bank_of(settings, kind)
    outbox, _ = open_stores(settings)
    service = configured_decision_service(settings, outbox, gateway.retain)
    try:
        if args.second_approval:
            done = service.second_approval(
                bank, role, kind.name, args.case, who, confirm=args.second_approval == "confirm", note=args.note
            )
            decision = done.stored.decision
        else:
            view = kind.recall(gateway.recall, bank, case, origin=outbox.provenance.origin)
            choice = Choice(
                reviewer=str(who),
                outcome=args.outcome,
                reason_code=args.reason,
                note=args.note,
                details={"response": args.response} if args.response else {},
                decided_at=datetime.now(UTC),
                agent=_handed_in_agent(settings, kind, args.case),
            )
            try:
                proposal = proposed(kind, case, view, choice, kind.reasons(case, settings.reason_codes))
            except InputError as exc:
                return input_error("--reason" if exc.field == "reason_code" else f"--{exc.field}", exc.problem)
            if isinstance(who, Person):
                proposal = proposal.by(who)
            done = service.decide(bank, role, proposal, revise=args.revise)
            decision = done.stored.decision
    except AlreadyDecided as exc:
        print(
            f"error: not recorded: {exc.standing_words} To change it, run decide again with --revise REASON.",
            file=sys.stderr,
        )
        return 1
    except (NotAllowed, Refused) as exc:
        print(f"error: not recorded: {exc}", file=sys.stderr)
        return 1
    finally:
        gateway.close()
    stored = done.stored
    payload = {
        "audit_id": stored.id,
        "case": args.case,
        "bank": bank,
        "document_id": stored.document_id,
        "state": stored.state,
        "outcome": decision.outcome,
        "overridden": decision.overridden,
        "delivery_error": done.report.error,
        "held_because": done.held_because,
        "second_approval": args.second_approval,
        "revision": stored.revision,
        "revision_reason": decision.revision_reason,
    }
    if args.json:
        print_json(payload)
    elif args.second_approval:
        print(
            f"{args.case}: {decision.reviewer}'s {decision.outcome} {args.second_approval}ed by {who} (audit #{stored.id}), {stored.state}"
        )
    else:
        held = f": awaiting a second approval. {done.held_because}" if done.held_because else ""
        what = f"revised (revision {stored.revision})" if decision.revision_reason else "recorded"
        print(f"{args.case}: {decision.outcome} {what} (audit #{stored.id}), {stored.state}{held}")
    return 0
