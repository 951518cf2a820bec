"""How often reviewers kept the agent's recommendation, by the agent's confidence: counted in SQL. No Streamlit.

The confidence is the one the retained decision records (`agent_confidence` in its metadata, finance.decisions);
each case counts once, by its standing decision (migration 0012: the newest not held; after a blind second review
that disagreed, the lead's), unless a lead discarded it.
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.store.schema import DISCARDED, standing_decisions

# (upper bound, label); a confidence at or above the last bound is in the top band
BANDS: tuple[tuple[float, str], ...] = ((0.5, "<0.5"), (0.7, "0.5-0.7"), (0.9, "0.7-0.9"))
TOP_BAND = ">=0.9"
LABELS = (*(label for _, label in BANDS), TOP_BAND)


def calibration_counts(engine: Engine, bank_id: str, case_kind: str) -> dict[str, tuple[int, int]]:
    """band label -> (decisions, of which the recommendation was kept), for the bands that have any."""
    s = standing_decisions.c
    confidence = sa.cast(s.agent_confidence, sa.Float)
    band = sa.case(*((confidence < bound, label) for bound, label in BANDS), else_=TOP_BAND).label("band")
    kept = sa.func.sum(sa.case((sa.func.coalesce(s.overridden, False), 0), else_=1))
    query = (
        sa.select(band, sa.func.count(), kept)
        .where(s.bank_id == bank_id, s.case_kind == case_kind, s.state != DISCARDED, s.agent_confidence.isnot(None))
        .group_by(band)
    )
    with engine.connect() as conn:
        return {label: (int(n), int(k)) for label, n, k in conn.execute(query)}
