"""`python -m dashboard curate propose|approve|reject|revert`: four-eyes curation of a document from a script,
through the same service as the evidence cards (roles under RECALL_REVIEW_ROLE, the review store, delivery)."""

from __future__ import annotations

import argparse
import sys

from dashboard.cli.acting import acting, token_arg
from dashboard.cli.registry import bank_arg, command, input_error, open_gateway, print_json

STEPS = ("propose", "approve", "reject", "revert")


def _curate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("step", choices=STEPS, help="propose invalidating a document, approve or reject a proposal, propose a revert")
    parser.add_argument("--document", help="propose, revert: the document id (as on the evidence card)")
    parser.add_argument("--bank", type=bank_arg, help="propose, revert: its bank (default: the finance bank)")
    parser.add_argument("--label", choices=["wrong", "outdated", "another_customer", "duplicate"], help="propose: what is wrong with it")
    parser.add_argument("--reason", help="propose, revert: why, for the lead and the audit (at most 500 characters)")
    parser.add_argument("--proposal", type=int, help="approve, reject: the proposal's id")
    parser.add_argument("--by", help="who acts, typed (only where sign-in is off): the proposer, or the lead who approves or rejects")
    token_arg(parser)
    parser.add_argument("--json", action="store_true")


@command("curate", "four-eyes curation of a document's memories: a proposal, then another person's approval", _curate_args)
def run_curate(args: argparse.Namespace) -> int:
    from dashboard.review.curation import Curation
    from dashboard.review.errors import CurationInputError, NotAllowed, Refused
    from dashboard.review.db import make_engine
    from dashboard.review.freshness import Freshness

    needs = {"propose": ("document", "label", "reason"), "revert": ("document", "reason"), "approve": ("proposal",), "reject": ("proposal",)}
    for flag in needs[args.step]:
        if getattr(args, flag) is None:
            return input_error(f"--{flag}", f"required by {args.step}")
    settings, gateway = open_gateway()
    who_acts, problem = acting(settings, args.by, args.token, name_flag="--by")
    if who_acts is None:
        gateway.close()
        return input_error(*problem)
    who, role = who_acts
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        curation = Curation(engine, gateway.set_document_state, freshness=Freshness(engine))
        report = None
        if args.step in ("propose", "revert"):
            bank = args.bank or settings.finance_bank
            if args.step == "propose" and gateway.document(bank, args.document) is None:  # a typo would retire nothing
                return input_error("--document", f"{args.document!r} is not a document of bank {bank}")
            event = curation.propose(
                bank, args.document, role=role, proposer=who, reason=args.reason,
                change="invalidate" if args.step == "propose" else "revert", label=args.label,
            )
        elif args.step == "approve":
            event, report = curation.approve(args.proposal, role=role, lead=who)
        else:
            event = curation.reject(args.proposal, role=role, lead=who)
        status = curation.status(event.bank_id, event.document_id)
    except CurationInputError as exc:
        return input_error(f"--{'by' if exc.field in ('proposer', 'lead') else exc.field}", str(exc).split(": ", 1)[1])
    except (NotAllowed, Refused) as exc:
        print(f"error: not recorded: {exc}", file=sys.stderr)
        return 1
    finally:
        gateway.close()
        engine.dispose()
    if args.json:
        print_json({"event": event.model_dump(mode="json"), "status": status.status, "sentence": status.sentence,
                    "delivery": report.model_dump() if report else None})
    else:
        print(f"{event.document_id}: {event.action} #{event.id} recorded; now {status.status}"
              + (f"; delivery {event.state}" if event.state else ""))
    return 0
