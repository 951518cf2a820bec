"""Command line: `python -m dashboard <command>`. The benches are not here: `python -m benches <bench>`."""

from dashboard.cli import (  # noqa: F401  (register their commands)
    agent_commands,
    commands,
    curation_commands,
    intake_commands,
    lab_commands,
    label_commands,
    review_commands,
    vouch_commands,
    webhook_commands,
)
from dashboard.cli.registry import main

__all__ = ["main"]
