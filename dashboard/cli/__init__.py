"""Command line: `python -m dashboard <command>`."""

from dashboard.cli import commands  # noqa: F401  (registers its commands)
from dashboard.cli import lab_commands  # noqa: F401  (registers its commands)
from dashboard.cli.registry import main

__all__ = ["main"]
