"""`python -m dashboard vouch propose|confirm|refuse|list`: a lead vouches for memory records of unknown origin after
reviewing them (one document, or every document the server wrote before a time), another lead confirms or refuses
(review/vouching.py). Roles as for curation: RECALL_REVIEW_ROLE, or the API token's where sign-in is on."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from datetime import datetime

from dashboard.cli.acting import acting, token_arg
from dashboard.cli.registry import bank_arg, command, input_error, open_gateway, print_json

STEPS = ("propose", "confirm", "refuse", "list")
PAGE = 100


def _vouch_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("step", choices=STEPS, help="propose vouching, confirm or refuse another lead's proposal, or list them")
    parser.add_argument("--bank", type=bank_arg, help="propose, list: the bank (default: the finance bank)")
    parser.add_argument("--document", help="propose: the one document vouched for (as on its evidence card)")
    parser.add_argument("--before", type=datetime.fromisoformat,
                        help="propose: vouch for every document the server wrote before this time (ISO 8601, with its zone)")
    parser.add_argument("--reason", help="propose: what was reviewed, and why the records can be trusted (at most 500 characters)")
    parser.add_argument("--vouch", type=int, help="confirm, refuse: the proposal's id")
    parser.add_argument("--by", help="who acts, typed (only where sign-in is off)")
    token_arg(parser)
    parser.add_argument("--json", action="store_true")


def documents_of(gateway, vouch) -> Iterator:
    """The documents a vouch covers, as the bank holds them now: each with its original text's digest and the server's
    own write time (documents without a stored text cannot be vouched for: their text could not be checked later)."""
    from dashboard.review.vouching import VouchedDocument
    from dashboard.trust.origin import text_digest

    def one(document_id: str):
        stored = gateway.document(vouch.bank_id, document_id)
        if stored is not None and stored.original_text is not None:
            yield VouchedDocument(document_id=document_id, text_sha256=text_digest(stored.original_text),
                                  written_at=stored.created_at and datetime.fromisoformat(stored.created_at))

    if vouch.document_id:
        yield from one(vouch.document_id)
        return
    offset = 0
    while True:
        page = gateway.list_documents(vouch.bank_id, limit=PAGE, offset=offset)
        items = page.get("items", [])
        for item in items:
            written = item.get("created_at") and datetime.fromisoformat(item["created_at"])
            if written and written < vouch.written_before:
                yield from one(item["id"])
        offset += len(items)
        if not items or offset >= page.get("total", 0):
            return


@command("vouch", "a lead vouches for reviewed memory records of unknown origin; another lead confirms (four eyes)", _vouch_args)
def run_vouch(args: argparse.Namespace) -> int:
    from dashboard.review.db import make_engine
    from dashboard.review.errors import VouchInputError, NotAllowed, Refused
    from dashboard.review.vouching import Vouching

    settings, gateway = open_gateway()
    engine = make_engine(settings.store_url, settings.data_dir)
    try:
        vouching = Vouching(engine)
        if args.step == "list":
            found = vouching.history(args.bank)
            if args.json:
                print_json([v.model_dump(mode="json") for v in found])
            for v in [] if args.json else found:
                print(f"#{v.id} {v.state}: {v.covers}; by {v.by}: {v.reason}")
            return 0
        needs = {"propose": ("reason",), "confirm": ("vouch",), "refuse": ("vouch",)}[args.step]
        for flag in needs:
            if getattr(args, flag) is None:
                return input_error(f"--{flag}", f"required by {args.step}")
        who_acts, problem = acting(settings, args.by, args.token, name_flag="--by")
        if who_acts is None:
            return input_error(*problem)
        who, role = who_acts
        if args.step == "propose":
            bank = args.bank or settings.finance_bank
            if args.document and gateway.document(bank, args.document) is None:
                return input_error("--document", f"{args.document!r} is not a document of bank {bank}")
            vouch = vouching.propose(bank, role=role, proposer=who, reason=args.reason, document_id=args.document,
                                     written_before=args.before)
        elif args.step == "confirm":
            vouch = vouching.confirm(args.vouch, role=role, confirmer=who, documents_of=lambda v: documents_of(gateway, v))
        else:
            vouch = vouching.refuse(args.vouch, role=role, refuser=who)
    except VouchInputError as exc:
        return input_error(f"--{'by' if exc.field in ('proposer', 'lead') else exc.field}", str(exc).split(": ", 1)[1])
    except (NotAllowed, Refused) as exc:
        print(f"error: not recorded: {exc}", file=sys.stderr)
        return 1
    finally:
        gateway.close()
        engine.dispose()
    if args.json:
        print_json(vouch.model_dump(mode="json"))
    else:
        counted = f"; {vouch.documents} document(s) now of known origin" if vouch.state == "confirmed" else ""
        print(f"vouch #{vouch.id} {vouch.state}: {vouch.covers}; by {vouch.by}{counted}")
    return 0
