"""How often reviewers kept the agent's recommendation, by the agent's confidence: counted in SQL. No Streamlit.

The confidence is the one the retained decision records (`agent_confidence` in its metadata, finance.decisions);
each case counts once, by its standing decision: the newest that is neither held nor discarded (after a blind
second review that disagreed, the lead's).
"""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy import Engine

from dashboard.review.schema import DISCARDED, HELD, decisions

# (upper bound, label); a confidence at or above the last bound is in the top band
BANDS: tuple[tuple[float, str], ...] = ((0.5, "<0.5"), (0.7, "0.5-0.7"), (0.9, "0.7-0.9"))
TOP_BAND = ">=0.9"
LABELS = (*(label for _, label in BANDS), TOP_BAND)


def calibration_counts(engine: Engine, bank_id: str, case_kind: str = "exception") -> dict[str, tuple[int, int]]:
    """band label -> (decisions, of which the recommendation was kept), for the bands that have any."""
    mine = sa.and_(decisions.c.bank_id == bank_id, decisions.c.case_kind == case_kind, decisions.c.state.notin_((*HELD, DISCARDED)))
    standing = sa.select(sa.func.max(decisions.c.id)).where(mine).group_by(decisions.c.case_id)
    confidence = sa.cast(decisions.c.record[("metadata", "agent_confidence")].as_string(), sa.Float)
    band = sa.case(*((confidence < bound, label) for bound, label in BANDS), else_=TOP_BAND).label("band")
    kept = sa.func.sum(sa.case((decisions.c.decision["overridden"].as_boolean(), 0), else_=1))
    query = (
        sa.select(band, sa.func.count(), kept)
        .where(decisions.c.id.in_(standing), decisions.c.record[("metadata", "agent_confidence")].as_string().isnot(None))
        .group_by(band)
    )
    with engine.connect() as conn:
        return {label: (int(n), int(k)) for label, n, k in conn.execute(query)}
