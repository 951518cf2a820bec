"""The part of a case its submitting agent sent (review.case_queue), and where it differs from the dashboard's
recompute (review.agent_compare), for the case pages."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from components.agent_part import render_agent_part
from dashboard.app import resources
from dashboard.kinds import handed_in
from dashboard.review.agent_compare import differences
from dashboard.review.queue_kind import EvidenceRecord, QueueKind
from dashboard.store.agent_part import AgentPart

RECOMPUTE = "The dashboard's recompute"  # how a page names its own recommendation beside a submitting agent's


def agent_part_of(kind: QueueKind, case_id: str) -> AgentPart | None:
    """The part the case's agent handed in with it; None for a queue file's row or a case handed in without one."""
    handed = handed_in(resources.settings()).cases(kind.name)  # the same tuple while no case is added
    kept = _agents.get(kind.name)
    if kept is None or kept[0] is not handed:
        kept = (handed, {case.case_id: case.agent for case in handed if case.agent is not None})
        _agents[kind.name] = kept
    return kept[1].get(case_id)


_agents: dict[str, tuple[tuple, dict[str, AgentPart]]] = {}  # kind -> (its handed-in cases, each one's agent part)


def show_agent_part(
    kind: QueueKind,
    agent: AgentPart | None,
    recommendation: str | None,
    evidence: Sequence[EvidenceRecord],
    recompute: Callable[[], None] | None = None,
) -> None:
    """Draw the agent's part, the recompute beside it (`recompute` draws it), and where the two differ; nothing without
    an agent's part."""
    if agent is not None:
        render_agent_part(agent, kind.outcomes, differences(agent, recommendation, evidence, kind.outcomes), recompute)
