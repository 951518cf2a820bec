"""The benches' own command table: the product's command-line plumbing, none of its commands."""

from __future__ import annotations

from dashboard.cli import registry

BENCHES: dict[str, tuple[str, registry.Arguments, registry.Command]] = {}


def command(name: str, help: str, arguments: registry.Arguments):
    """Register the decorated function as `python -m benches <name>`."""

    def register(run: registry.Command) -> registry.Command:
        BENCHES[name] = (help, arguments, run)
        return run

    return register


def main(argv: list[str] | None = None) -> int:
    return registry.main(argv, prog="python -m benches", commands=BENCHES)
