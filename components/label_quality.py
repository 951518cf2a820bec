"""The Overview's recall quality from reviewers' relevance labels: the latest week's figures, then every week by
vendor, type and segment, each figure with the counts behind it. Group names come from the queue files: they go
to a dataframe only, never to markdown."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd
import streamlit as st

from dashboard.reporting.label_quality import QualityRow


def render_label_quality(rows: Sequence[QualityRow], k: int) -> None:
    st.subheader("Recall quality from reviewers' labels")
    st.caption(
        f"Each labelled case's recall (the agent's, as the audit log or its run recorded it; else the dashboard's) against the "
        f"documents most of their reviewers label relevant; unlabelled documents count as not relevant. A case counts in the week "
        f"of its latest label. Exceptions by vendor and type, tickets by customer segment; precision@{k} and MRR are means over cases."
    )
    if not rows:
        st.text("No relevance label yet: label the evidence cards on Finance exceptions or Support tickets.")
        return
    latest = rows[0]  # newest week, all cases
    behind = f"{latest.cases} case(s), {latest.labels} label(s), week of {latest.week}"
    cols = st.columns(3)
    cols[0].metric(f"Label precision@{k}", f"{latest.precision_at_k:.2f}", help=behind)
    cols[1].metric("Label MRR", f"{latest.mrr:.2f}", help=behind)
    cols[2].metric(f"Evidence in top {k} (labels)", f"{latest.evidence_at_k} / {latest.cases}", help=behind)
    frame = pd.DataFrame([_row(r, k) for r in rows])
    st.dataframe(frame, hide_index=True, width="stretch", key="overview_label_quality")


def _row(r: QualityRow, k: int) -> dict:
    return {
        "week of": r.week.isoformat(),
        "by": r.by,
        "group": r.group,
        "cases": r.cases,
        "labels": r.labels,
        "relevant documents": r.relevant,
        f"precision@{k}": round(r.precision_at_k, 3),
        "MRR": round(r.mrr, 3),
        f"evidence in top {k}": f"{r.evidence_at_k} / {r.cases}",
    }
