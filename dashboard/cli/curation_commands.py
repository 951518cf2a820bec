"""`python -m dashboard curate propose|approve|reject|revert`: four-eyes curation of a document from a script,
through the same service as the evidence cards (roles under RECALL_REVIEW_ROLE, the review store, delivery)."""

from __future__ import annotations

import argparse

from dashboard.cli.acting import token_arg
from dashboard.cli.four_eyes import Acting, run_step
from dashboard.cli.registry import bank_arg, command, print_json

STEPS = ("propose", "approve", "reject", "revert")
NEEDS = {
    "propose": ("document", "label", "reason"),
    "revert": ("document", "reason"),
    "approve": ("proposal",),
    "reject": ("proposal",),
}


def _curate_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "step", choices=STEPS, help="propose invalidating a document, approve or reject a proposal, propose a revert"
    )
    parser.add_argument("--document", help="propose, revert: the document id (as on the evidence card)")
    parser.add_argument("--bank", type=bank_arg, help="propose, revert: its bank (default: the finance bank)")
    parser.add_argument(
        "--label", choices=["wrong", "outdated", "another_customer", "duplicate"], help="propose: what is wrong with it"
    )
    parser.add_argument("--reason", help="propose, revert: why, for the lead and the audit (at most 500 characters)")
    parser.add_argument("--proposal", type=int, help="approve, reject: the proposal's id")
    parser.add_argument(
        "--by", help="who acts, typed (only where sign-in is off): the proposer, or the lead who approves or rejects"
    )
    token_arg(parser)
    parser.add_argument("--json", action="store_true")


@command(
    "curate", "four-eyes curation of a document's memories: a proposal, then another person's approval", _curate_args
)
def run_curate(args: argparse.Namespace) -> int:
    from dashboard.review.curation import Curation
    from dashboard.review.freshness import Freshness
    from dashboard.store.errors import CurationInputError

    def act(a: Acting):
        curation = Curation(a.engine, a.gateway.set_document_state, freshness=Freshness(a.engine))
        report = None
        if args.step in ("propose", "revert"):
            bank = args.bank or a.settings.finance_bank
            if (
                args.step == "propose" and a.gateway.document(bank, args.document) is None
            ):  # a typo would retire nothing
                raise CurationInputError("document", f"{args.document!r} is not a document of bank {bank}")
            event = curation.propose(
                bank,
                args.document,
                role=a.role,
                proposer=a.who,
                reason=args.reason,
                change="invalidate" if args.step == "propose" else "revert",
                label=args.label,
            )
        elif args.step == "approve":
            event, report = curation.approve(args.proposal, role=a.role, lead=a.who)
        else:
            event = curation.reject(args.proposal, role=a.role, lead=a.who)
        return event, report, curation.status(event.bank_id, event.document_id)

    def show(done) -> None:
        event, report, status = done
        if args.json:
            print_json(
                {
                    "event": event.model_dump(mode="json"),
                    "status": status.status,
                    "sentence": status.sentence,
                    "delivery": report.model_dump() if report else None,
                }
            )
        else:
            print(
                f"{event.document_id}: {event.action} #{event.id} recorded; now {status.status}"
                + (f"; delivery {event.state}" if event.state else "")
            )

    return run_step(args, NEEDS[args.step], act, show)
