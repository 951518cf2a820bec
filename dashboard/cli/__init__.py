"""Command line: `python -m dashboard <command>`."""

from dashboard.cli.commands import main

__all__ = ["main"]
