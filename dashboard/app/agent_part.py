"""The part of a case its submitting agent sent (review.case_queue), and where it differs from the dashboard's
recompute (review.agent_compare), for the case pages."""

from __future__ import annotations

from collections.abc import Sequence

from components.agent_part import render_agent_part
from dashboard.app import resources
from dashboard.kinds import handed_in
from dashboard.review.agent_compare import differences
from dashboard.review.queue_kind import EvidenceRecord, QueueKind


def show_agent_part(kind: QueueKind, case_id: str, recommendation: str | None, evidence: Sequence[EvidenceRecord]) -> None:
    """Draw the agent's part when the case was handed in with one; nothing for a queue file's row."""
    stored = handed_in(resources.settings()).get(kind.name, case_id)
    if stored is None or stored.agent is None:
        return
    render_agent_part(stored.agent, kind.outcomes, differences(stored.agent, recommendation, evidence, kind.outcomes))
