"""The command registry: `@command(name, help, arguments)` makes a function `python -m dashboard <name>`.

Each room's commands live in their own module of this package and register themselves on import;
`dashboard.cli.main` imports them all.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from pydantic import ValidationError

from dashboard.hindsight.errors import HindsightError
from dashboard.settings import load_settings, settings_problem

BANK_ID_MAX = 200
QUERY_MAX = 5000  # the gateway refuses longer queries; say so before any network call

Command = Callable[[argparse.Namespace], int]
Arguments = Callable[[argparse.ArgumentParser], None]
COMMANDS: dict[str, tuple[str, Arguments, Command]] = {}


def command(name: str, help: str, arguments: Arguments):
    """Register the decorated function as `python -m dashboard <name>`; `arguments` declares its flags."""

    def register(run: Command) -> Command:
        COMMANDS[name] = (help, arguments, run)
        return run

    return register


def print_json(payload: object) -> None:
    print(json.dumps(payload, indent=2, default=str))


def open_gateway():
    """(the settings, every registered queue kind's filled in; a gateway to the configured server)."""
    from dashboard.hindsight.gateway import HindsightGateway
    from dashboard.kinds import configured

    settings = configured(load_settings())
    return settings, HindsightGateway(settings.base_url, settings.api_key)


def input_error(field: str, message: str) -> int:
    print(f"error: {field}: {message}", file=sys.stderr)
    return 2


def bank_arg(value: str) -> str:
    """argparse type of --bank: an empty or odd bank id is an input error (exit 2 naming the flag), never the default."""
    bank = value.strip()
    if not bank:
        raise argparse.ArgumentTypeError("must not be empty (leave --bank out to use the configured bank)")
    if len(bank) > BANK_ID_MAX or any(ch.isspace() or ch in "/\\?#%" or ord(ch) < 32 for ch in bank):
        raise argparse.ArgumentTypeError(f"a bank id is 1-{BANK_ID_MAX} characters without spaces or / \\ ? # %")
    return bank


def query_arg(value: str) -> str:
    if len(value) > QUERY_MAX:
        raise argparse.ArgumentTypeError(f"{len(value):,} characters; the limit is {QUERY_MAX:,}")
    return value


def build_parser(prog: str = "python -m dashboard", commands: dict | None = None) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description="Recall Review command line")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add_arguments, _run) in (COMMANDS if commands is None else commands).items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m dashboard", commands: dict | None = None) -> int:
    """Run one command of `commands` (the product's, unless another table is given: the benches keep their own)."""
    commands = COMMANDS if commands is None else commands
    args = build_parser(prog, commands).parse_args(argv)
    _help, _add, run = commands[args.command]
    try:
        return run(args)
    except HindsightError as exc:  # the server's words (never an error class name); exit 1: worth retrying later
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except ValidationError as exc:
        if exc.title != "Settings":
            raise
        print(f"error: settings: {settings_problem(exc)}", file=sys.stderr)  # a configuration error is an input error
        return 2
