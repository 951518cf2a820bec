"""Support audit pieces: a ticket's recall with a verdict and reason on every candidate, the decision
state, and the migration's coverage and per-record classification.

Memory text is untrusted: it is drawn only with st.dataframe / st.text, never through markdown.
"""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components.trace_link import trace_link
from dashboard.review.outbox import StoredDecision
from dashboard.support.admission import VERDICT_LABELS, Verdict
from dashboard.support.migration import Coverage, MigrationPlan, MigrationReport
from dashboard.support.recall import TicketEvidence, TicketRecall
from dashboard.traces.request import TraceRequest

PATH_TEXT = {
    "tagged": "Tagged path: recall with the customer's tag (any_strict). The legacy fallback did not run.",
    "legacy": "Legacy fallback: tagged recall was empty; bank-wide candidates were judged by the ownership rule.",
    "none": "No memory: tagged recall was empty and no legacy candidate proved its ownership.",
}


def _label(verdict: str) -> str:
    try:
        return VERDICT_LABELS[Verdict(verdict)]
    except ValueError:
        return verdict


def _frame(items: list[TicketEvidence], flag: bool) -> pd.DataFrame:
    rows = []
    for e in items:
        row = {"document": e.document_id or "", "verdict": _label(e.verdict), "reason": e.reason,
               "tags": ", ".join(e.tags) or "(untagged)", "text": e.text}  # fmt: skip
        if flag:
            row = {"admitted": e.admitted, **row}
        rows.append(row)
    columns = (["admitted"] if flag else []) + ["document", "verdict", "reason", "tags", "text"]
    return pd.DataFrame(rows, columns=columns)


def render_recall(recall: TicketRecall, bank_id: str, key: str, ticket_id: str | None = None) -> None:
    {"tagged": st.success, "legacy": st.warning, "none": st.info}[recall.path](PATH_TEXT[recall.path])
    st.text(f"Customer tag: {recall.tag}")
    config = {"admitted": st.column_config.CheckboxColumn("admitted", help="Admission flag: may reach the response")}
    if recall.path == "tagged":
        st.subheader(f"Tagged evidence ({len(recall.tagged)})")
        st.dataframe(_frame(recall.tagged, flag=True), hide_index=True, width="stretch", column_config=config, key=f"{key}_tagged")
    else:
        st.subheader(f"Legacy evidence admitted ({len(recall.legacy_admitted)})")
        if recall.legacy_admitted:
            st.dataframe(
                _frame(recall.legacy_admitted, flag=True), hide_index=True, width="stretch", column_config=config,
                key=f"{key}_legacy",
            )  # fmt: skip
        else:
            st.text("No legacy record proved its ownership.")
        with st.expander(f"Rejected candidates ({len(recall.legacy_rejected)}): for auditors, never fed to the response"):
            st.dataframe(
                _frame(recall.legacy_rejected, flag=True), hide_index=True, width="stretch", column_config=config,
                key=f"{key}_rejected",
            )  # fmt: skip
    _trace_links(recall, bank_id, ticket_id)


def _trace_links(recall: TicketRecall, bank_id: str, ticket_id: str | None) -> None:
    names = ["Trace: tagged recall", "Trace: legacy candidate recall"]
    columns = st.columns(len(recall.requests) or 1)
    for column, name, request in zip(columns, names, recall.requests, strict=False):
        with column:
            trace_link(
                TraceRequest(bank=bank_id, query=request.query, tags=tuple(request.tags), tags_match=request.tags_match,
                             max_tokens=request.max_tokens),
                label=name, case=("ticket", ticket_id) if ticket_id else None,
            )  # fmt: skip


def render_decision_state(stored: StoredDecision | None) -> None:
    if stored is None:
        st.info("Open: no reviewer decision yet.", icon=":material/pending:")
        return
    d = stored.decision
    delivery = {"delivered": "retained into Hindsight", "pending": "waiting to be retained (will retry)",
                "superseded": "superseded by a newer decision",
                "failed": "refused by Hindsight, parked for a lead (Audit log)",
                "discarded": "refused by Hindsight and discarded by a lead"}.get(stored.state, stored.state)  # fmt: skip
    box = st.success if stored.state == "delivered" else st.warning
    box(f"Decided ({(d.ticket_action or d.outcome).replace('_', ' ')}), audit #{stored.id}: {delivery}.", icon=":material/gavel:")
    who = "signed in" if d.authenticated else "unauthenticated"
    st.text(f"By {d.reviewer} ({who}) at {d.decided_at:%Y-%m-%d %H:%M} UTC")
    if stored.last_error:
        st.text(f"Last delivery error: {stored.last_error}")
    with st.expander("Retained response"):
        st.text(stored.record.content)


def render_coverage(coverage: Coverage, label: str, key: str) -> None:
    st.markdown(f"**{label}**")
    a, b, c, d = st.columns(4)
    a.metric("Memories", coverage.total)
    b.metric("Tagged", coverage.tagged, help=f"{coverage.tagged_share:.0%} of all memories")
    c.metric("Untagged", coverage.untagged)
    d.metric("Convertible legacy", coverage.convertible)
    if coverage.ready_to_retire_fallback:
        st.success("Ready to retire the legacy fallback: no convertible legacy record is left.", icon=":material/task_alt:")
    else:
        st.warning(f"Not ready to retire the fallback: {coverage.convertible} convertible legacy record(s) left.")


def render_plan(plan: MigrationPlan) -> None:
    for problem in plan.directory_problems:
        st.error("The customer directory is not safe to migrate against:")
        st.text(problem)
    counts = plan.counts()
    st.text(f"Untagged records: {counts['untagged']}; reliable identity: {counts['reliable']}; failed validation: {counts['failed']}")
    rows = [
        {"document": c.document_id or "", "status": c.status, "customer": c.customer or "", "new tag": c.tag or "",
         "reason": c.reason, "text": c.text}  # fmt: skip
        for c in plan.reliable + plan.failed
    ]
    st.dataframe(
        pd.DataFrame(rows, columns=["document", "status", "customer", "new tag", "reason", "text"]),
        hide_index=True, width="stretch", key="migration_records",
    )  # fmt: skip


def render_report(report: MigrationReport) -> None:
    if report.error:
        st.error("The run stopped early; run it again to resume (nothing converted is converted twice):")
        st.text(report.error)
    else:
        st.success(f"Converted {len(report.converted)} record(s) in place (same document ids, now tagged).")
    if report.converted:
        st.text("Converted: " + ", ".join(report.converted))
