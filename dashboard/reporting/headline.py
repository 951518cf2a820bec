"""The Overview's headline and the case figures in words, as a stakeholder asks: how many cases, how many decided,
how often people overrule the agent, what went wrong and where. No Streamlit here.

The figures come from review/figures.py and agents.incidents.incident_figures, so every page that says them in
words (the Overview, the Audit log, Home) says the same numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from dashboard.agents.incidents import IncidentFigures, naive_words
from dashboard.reporting.overview import OverviewMetrics, incident_label, total
from dashboard.review.figures import CaseFigures

NAMED = 3  # cases named per incident kind; the rest are counted


# What the Overview's heading starts with, e.g. "30 cases (18 exceptions, 12 tickets): 1 decided": the browser bench waits for it
HEADLINE_START = re.compile(
    r"^[\d,]+ cases? \([\d,]+ [a-z -]+(?:, [\d,]+ [a-z -]+)*\): [\d,]+ decided"
)  # any kinds' nouns


def n(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def held_words(f: CaseFigures) -> str:
    """e.g. "3 held (1 for a second approver, 1 for a blind second review, 1 awaiting the lead)"; "" when none."""
    if not f.held:
        return ""
    kinds = [
        (f.held_for_approver, "for a second approver"),
        (f.held_for_blind_review, "for a blind second review"),
        (f.awaiting_lead, "awaiting the lead"),
    ]
    return f"{f.held:,} held (" + ", ".join(f"{count:,} {what}" for count, what in kinds if count) + ")"


def figures_words(f: CaseFigures) -> str:
    """e.g. "3 decided, 3 held (1 for a second approver, ...), 24 open": what a queue's cases are now."""
    decided = f"{f.decided:,} decided" + (
        f" ({f.pending_delivery:,} not yet stored in memory)" if f.pending_delivery else ""
    )
    opened = f"{f.open:,} open" + (f" ({f.returned:,} returned by the second approver)" if f.returned else "")
    return ", ".join(part for part in (decided, held_words(f), opened) if part)


def cases_sentence(queues: Sequence) -> str:
    """e.g. "30 cases (18 exceptions, 12 tickets): 3 decided, 3 held (...), 24 open."."""
    every = total(queues)
    each = ", ".join(n(q.cases, *q.nouns) for q in queues)
    return f"{n(every.cases, 'case')} ({each}): {figures_words(every)}."


def overrule_sentence(m: OverviewMetrics) -> str:
    decisions = sum(a.decisions for a in m.agreement)
    if not decisions:
        return "No decision made in the date range yet."
    overruled = sum(a.overridden for a in m.agreement)
    return f"People overruled the agent on {overruled:,} of the {n(decisions, 'decision')} made in the date range ({overruled / decisions:.0%})."


def _cases(found: list[tuple[str, str]], nouns: Mapping[str, tuple[str, str]]) -> str:
    """e.g. "2 tickets (T-2004, T-2010)"; past NAMED, "and 4 more" (`nouns`: case kind -> its nouns)."""
    kind = found[0][0]
    ids = [case_id for _, case_id in found]
    named = ", ".join(ids[:NAMED]) + (f" and {len(ids) - NAMED} more" if len(ids) > NAMED else "")
    return f"{n(len(ids), *nouns.get(kind, ('case', 'cases')))} ({named})"


def where_words(found: IncidentFigures, nouns: Mapping[str, tuple[str, str]]) -> list[str]:
    """Where the incidents happened, the cases with the same kinds together: "2 exceptions (E-1002, E-1012): a broad
    recall missed this vendor's precedents, cites a precedent of another vendor or type"."""
    parts = []
    for kinds, cases in found.alike:
        by_case_kind = [[c for c in cases if c[0] == case_kind] for case_kind in dict.fromkeys(k for k, _ in cases)]
        labels = [incident_label(k) for k in kinds]
        said = ", ".join(labels[:-1]) + " and " + labels[-1] if len(labels) > 1 else labels[0]
        parts.append(" and ".join(_cases(group, nouns) for group in by_case_kind) + ": " + said)
    return parts


WRONG = "What went wrong: "


def wrong_sentence(m: OverviewMetrics) -> str:
    inc = m.incidents
    if not inc.checked:
        return (
            "No agent run is recorded yet: nothing to check for incidents."
            if not inc.agent_runs
            else "The agents' runs are not checked for incidents yet."
        )
    if not inc.cases:
        return f"No incident in the agents' recalls ({n(inc.checked, 'case')} checked)."
    naive = naive_words(inc.found)
    return (
        f"{WRONG}{n(inc.cases, 'case')} with incidents, "
        + (f"{naive}: " if naive else "")
        + "; ".join(where_words(inc.found, {q.kind: q.nouns for q in m.queues}))
        + "."
    )


def headline_parts(m: OverviewMetrics) -> tuple[str, str]:
    """(the cases, what is decided or held and how often people overrule the agent; what went wrong and where)."""
    return f"{cases_sentence(m.queues)} {overrule_sentence(m)}", wrong_sentence(m)


def headline(m: OverviewMetrics) -> str:
    """What a stakeholder reads first: the cases and what is decided or held, how often people overrule the agent,
    what went wrong and where (saying so when the demo's deliberately naive agents did it)."""
    return " ".join(headline_parts(m))
