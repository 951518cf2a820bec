"""Where the agent that handed a case in and the dashboard's own recompute differ, in a reviewer's words: the
recommendation, and each citation against the evidence the dashboard recalled and judged ("the agent cited
PREC-V11-PRI-01, another vendor's precedent"). No Streamlit; names no kind (the kind judged the evidence)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from dashboard.review.queue_kind import EvidenceRecord
from dashboard.store.agent_part import AgentPart

MAX_UNCITED = 3  # relevant records the agent left out, named; the rest counted


def differences(
    agent: AgentPart, recommendation: str | None, evidence: Sequence[EvidenceRecord], outcome_words: Mapping[str, str]
) -> list[str]:
    """One sentence per difference, the recommendation first; [] when the two agree on everything they both say."""

    def words(outcome: str) -> str:
        return f"{outcome} ({outcome_words[outcome]})" if outcome in outcome_words else outcome

    lines = []
    if agent.recommendation and recommendation and agent.recommendation != recommendation:
        lines.append(
            f"The agent recommends {words(agent.recommendation)}; the dashboard's recompute recommends "
            f"{words(recommendation)}."
        )
    judged = {record.ref: record for record in evidence}
    for ref in agent.cited:
        record = judged.get(ref)
        if record is None:
            lines.append(f"The agent cited {ref}, which the dashboard's recall did not return.")
        elif not record.relevant:
            lines.append(f"The agent cited {ref}, {record.why}.")
    uncited = [r.ref for r in evidence if r.relevant and r.ref not in agent.cited]
    if agent.cited and uncited:
        more = len(uncited) - MAX_UNCITED
        named = ", ".join(uncited[:MAX_UNCITED]) + (f" and {more} more" if more > 0 else "")
        lines.append(f"The agent did not cite {named}: relevant by the dashboard's rule.")
    return lines
