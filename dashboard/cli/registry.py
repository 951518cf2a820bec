"""The command registry: `@command(name, help, arguments)` makes a function `python -m dashboard <name>`.

Each room's commands live in their own module of this package and register themselves on import;
`dashboard.cli.main` imports them all.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from dashboard.settings import load_settings

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
    from dashboard.hindsight.gateway import HindsightGateway

    settings = load_settings()
    return settings, HindsightGateway(settings.base_url, settings.api_key)


def input_error(field: str, message: str) -> int:
    print(f"error: {field}: {message}", file=sys.stderr)
    return 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m dashboard", description="Recall Review command line")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, (help_text, add_arguments, _run) in COMMANDS.items():
        add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _help, _add, run = COMMANDS[args.command]
    return run(args)
