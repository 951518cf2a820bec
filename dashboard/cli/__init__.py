"""Command line: `python -m dashboard <command>`."""

from dashboard.cli import agent_commands, api_bench, audit_bench, browser_bench, commands, curation_commands, intake_commands, lab_commands, label_commands, review_commands, scale_bench, team_bench, vouch_commands, webhook_bench, webhook_commands  # noqa: F401  (register their commands)
from dashboard.cli.registry import main

__all__ = ["main"]
