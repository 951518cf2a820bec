"""How cases come in besides the queue files: `queue import FILE --kind K` (all or nothing, idempotent) and the API's
tokens (`token create|revoke|list`), which a lead gives each agent (docs/api.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from dashboard.cli.registry import command, input_error, print_json


def _queue_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["import"])
    parser.add_argument("file", type=Path, help="a CSV or JSON file of cases, as the kind's queue file")
    parser.add_argument("--kind", required=True, help="the queue kind, e.g. finance or support")


@command(
    "queue",
    "import a file of cases into the review store's queue (all or nothing; importing it again adds nothing)",
    _queue_args,
)
def run_queue(args: argparse.Namespace) -> int:
    from dashboard.kinds import KindError, by_key, configured, handed_in
    from dashboard.queue_files import QueueFileError, parse_rows
    from dashboard.review.case_queue import CaseConflict
    from dashboard.settings import load_settings

    settings = configured(load_settings())
    try:
        kind = by_key(settings, args.kind)
    except KindError as exc:
        return input_error("--kind", str(exc))
    try:
        cases = parse_rows(args.file, args.file.read_bytes(), kind.model)
    except OSError as exc:
        return input_error("file", f"{args.file}: cannot read it ({exc.strerror})")
    except QueueFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    rows = [(case.id, case.model_dump(mode="json")) for case in cases]
    try:
        added, same = handed_in(settings).import_cases(kind.name, rows, source=f"import:{args.file.name}")
    except CaseConflict as exc:
        print(f"error: {args.file}: nothing imported, {exc}", file=sys.stderr)
        return 2
    print(f"{args.file.name}: {added} {kind.nouns[1]} added, {same} already in the queue with the same values")
    return 0


def _token_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["create", "revoke", "list"])
    parser.add_argument("--name", help="the agent the token is for (create, revoke)")
    parser.add_argument("--kinds", default="", help="comma-separated queue kinds it may act on (create), e.g. finance")
    parser.add_argument("--scopes", default="submit,read", help="submit and/or read (create; default both)")
    parser.add_argument("--by", default="cli", help="who creates it (a lead's name; recorded with the token)")
    parser.add_argument("--json", action="store_true")


@command(
    "token",
    "create, revoke or list the API tokens agents use (only a hash is stored; the token is shown once)",
    _token_args,
)
def run_token(args: argparse.Namespace) -> int:
    from dashboard.access.api_tokens import ApiTokens, TokenError
    from dashboard.kinds import configured, handed_in, registered
    from dashboard.settings import load_settings

    settings = configured(load_settings())
    tokens = ApiTokens(handed_in(settings).engine)
    try:
        if args.action == "list":
            rows = [t.model_dump(mode="json") for t in tokens.all()]
            if args.json:
                print_json(rows)
            for t in [] if args.json else rows:
                state = f"revoked {t['revoked_at']}" if t["revoked_at"] else f"last used {t['last_used_at'] or 'never'}"
                print(f"{t['name']}: {','.join(t['scopes'])} on {','.join(t['kinds'])}; {state}")
            return 0
        if not args.name:
            return input_error("--name", "required to create or revoke a token")
        if args.action == "revoke":
            tokens.revoke(args.name)
            print(f"revoked {args.name}: requests with it are refused from now on")
            return 0
        known = {kind.key for kind in registered(settings)}
        kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
        unknown = [k for k in kinds if k not in known]
        if unknown:
            return input_error("--kinds", f"unknown queue kind {unknown[0]!r}; one of {', '.join(sorted(known))}")
        token, row = tokens.create(args.name, kinds, [s.strip() for s in args.scopes.split(",") if s.strip()], args.by)
    except TokenError as exc:
        field, _, message = str(exc).partition(": ")
        return input_error(field, message)
    if args.json:
        print_json({"token": token, **row.model_dump(mode="json")})
    else:
        print(f"token for {row.name} ({','.join(row.scopes)} on {','.join(row.kinds)}), shown once:\n{token}")
    return 0
