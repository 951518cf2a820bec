"""`python -m dashboard vouch propose|confirm|refuse|list`: a lead vouches for memory records of unknown origin after
reviewing them (one document, or every document the server wrote before a time), another lead confirms or refuses
(origin/vouching.py). Roles as for curation: RECALL_REVIEW_ROLE, or the API token's where sign-in is on."""

from __future__ import annotations

import argparse
from datetime import datetime

from dashboard.cli.acting import token_arg
from dashboard.cli.four_eyes import Acting, run_step
from dashboard.cli.registry import bank_arg, command, open_gateway, print_json

STEPS = ("propose", "confirm", "refuse", "list")
NEEDS = {"propose": ("reason",), "confirm": ("vouch",), "refuse": ("vouch",)}


def _vouch_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "step", choices=STEPS, help="propose vouching, confirm or refuse another lead's proposal, or list them"
    )
    parser.add_argument("--bank", type=bank_arg, help="propose, list: the bank (default: the finance bank)")
    parser.add_argument("--document", help="propose: the one document vouched for (as on its evidence card)")
    parser.add_argument(
        "--before",
        type=datetime.fromisoformat,
        help="propose: vouch for every document the server wrote before this time (ISO 8601, with its zone)",
    )
    parser.add_argument(
        "--reason", help="propose: what was reviewed, and why the records can be trusted (at most 500 characters)"
    )
    parser.add_argument("--vouch", type=int, help="confirm, refuse: the proposal's id")
    parser.add_argument("--by", help="who acts, typed (only where sign-in is off)")
    token_arg(parser)
    parser.add_argument("--json", action="store_true")


@command(
    "vouch",
    "a lead vouches for reviewed memory records of unknown origin; another lead confirms (four eyes)",
    _vouch_args,
)
def run_vouch(args: argparse.Namespace) -> int:
    from dashboard.origin.vouching import Vouching, in_bank
    from dashboard.store.errors import VouchInputError

    if args.step == "list":
        return _list(args)

    def act(a: Acting):
        vouching = Vouching(a.engine)
        if args.step == "propose":
            bank = args.bank or a.settings.finance_bank
            if args.document and a.gateway.document(bank, args.document) is None:
                raise VouchInputError("document", f"{args.document!r} is not a document of bank {bank}")
            return vouching.propose(
                bank,
                role=a.role,
                proposer=a.who,
                reason=args.reason,
                document_id=args.document,
                written_before=args.before,
            )
        if args.step == "confirm":
            return vouching.confirm(args.vouch, role=a.role, confirmer=a.who, documents_of=in_bank(a.gateway))
        return vouching.refuse(args.vouch, role=a.role, refuser=a.who)

    def show(vouch) -> None:
        if args.json:
            print_json(vouch.model_dump(mode="json"))
        else:
            counted = f"; {vouch.documents} document(s) now of known origin" if vouch.state == "confirmed" else ""
            print(f"vouch #{vouch.id} {vouch.state}: {vouch.covers}; by {vouch.by}{counted}")

    return run_step(args, NEEDS[args.step], act, show)


def _list(args: argparse.Namespace) -> int:
    from dashboard.origin.vouching import Vouching
    from dashboard.store.db import make_engine

    settings, gateway = open_gateway()
    gateway.close()
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        found = Vouching(engine).history(args.bank)
    finally:
        engine.dispose()
    if args.json:
        print_json([v.model_dump(mode="json") for v in found])
    for v in [] if args.json else found:
        print(f"#{v.id} {v.state}: {v.covers}; by {v.by}: {v.reason}")
    return 0
