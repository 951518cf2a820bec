"""Command line: `python -m dashboard <command>`. Each command is a thin shell over the core."""

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


def _print_json(payload: object) -> None:
    print(json.dumps(payload, indent=2, default=str))


def _gateway():
    from dashboard.hindsight_gateway import HindsightGateway

    settings = load_settings()
    return settings, HindsightGateway(settings.base_url, settings.api_key)


# -- server -------------------------------------------------------------------------
def _server_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["start", "stop", "status"])
    parser.add_argument("--json", action="store_true", help="print the status as JSON")


@command("server", "start, stop or show the embedded Hindsight", _server_args)
def run_server(args: argparse.Namespace) -> int:
    from dashboard.embedded import EmbeddedServer, ServerError

    settings = load_settings()
    if not settings.embedded:
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
    if args.json:
        _print_json(status.as_dict())
    else:
        state = "healthy" if status.healthy else ("running, not healthy" if status.running else "stopped")
        print(f"{status.url}: {state} (api pid {status.api_pid}, postgres pid {status.pg_pid}); data in {status.data_dir}")
    return 0 if args.action != "status" or status.healthy else 3


# -- seed ---------------------------------------------------------------------------
def _seed_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true")


@command("seed", "retain the demo data into the finance and support banks (idempotent)", _seed_args)
def run_seed(args: argparse.Namespace) -> int:
    from dashboard.seed import seed_demo_data

    settings, gateway = _gateway()
    try:
        counts = seed_demo_data(gateway, settings, log=lambda msg: print(msg, file=sys.stderr))
    finally:
        gateway.close()
    if args.json:
        _print_json(counts)
    return 0


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
