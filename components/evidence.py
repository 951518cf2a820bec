"""Finance exception pieces: case facts, the recommendation, the crowd-out flag and the evidence sections.

Memory text is untrusted: it is drawn only with st.dataframe / st.text, never through markdown.
"""

from __future__ import annotations

from datetime import date

import pandas as pd
import streamlit as st

from components.safe_text import md
from components.trace_link import trace_link
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.finance.recall import PassInfo, PrecedentEvidence, TwoStageResult
from dashboard.review.outbox import StoredDecision
from dashboard.traces.request import TraceRequest

ACTION_ICONS = {"approve": ":material/check_circle:", "reject": ":material/cancel:", "escalate": ":material/priority_high:"}


def render_case_facts(case: ExceptionCase, today: date) -> None:
    st.subheader("Invoice and PO")
    pct = f"{case.variance_pct:+.1f}%" if case.variance_pct is not None else None
    with st.container(horizontal=True, gap="large"):  # sized to their values and wrapping: amounts are never cut ("1,8...")
        st.metric("Invoice amount", f"{case.invoice_amount:,.2f}", width="content")
        st.metric("PO amount", f"{case.po_amount:,.2f}", width="content")
        st.metric("Variance", f"{case.variance:+,.2f}", pct, delta_color="inverse", width="content")
    facts = pd.DataFrame(
        [("exception", case.id), ("vendor", f"{case.vendor_code} {case.vendor_name}"), ("type", case.exception_type),
         ("invoice", case.invoice), ("PO", case.po), ("opened", case.opened_on.isoformat()),
         ("age (days)", str((today - case.opened_on).days)), ("description", case.description)],
        columns=["field", "value"],
    )  # fmt: skip
    st.dataframe(facts, hide_index=True, width="stretch", key=f"facts_{case.id}")


def render_decided(stored: StoredDecision | None) -> None:
    if stored is None:
        st.info("Open: no reviewer decision yet.", icon=":material/pending:")
        return
    d = stored.decision
    who = f"{d.reviewer} ({'signed in' if d.authenticated else 'unauthenticated'})"
    how = f"override of {d.agent_recommendation}" if d.overridden else "recommendation approved"
    # The reviewer's name was typed by a person: escaped, it shows as written and nothing in it is fetched.
    line = f"Decided: {d.outcome} ({how}) by {md(who)} at {d.decided_at:%Y-%m-%d %H:%M} UTC; audit #{stored.id}"
    if stored.state == "pending":
        st.warning(line + ". Delivery to memory is pending.", icon=":material/schedule:")
    elif stored.state in ("failed", "discarded"):
        st.error(line + f". Hindsight refused it ({stored.state}); a lead can retry or discard it on the Audit log.", icon=":material/report:")
    else:
        st.success(line + f"; retained as {md(stored.document_id)}.", icon=":material/task_alt:")
    if stored.last_error and stored.state != "delivered":
        st.text(f"last error: {stored.last_error}")


def render_recommendation(rec: Recommendation) -> None:
    st.subheader("Agent recommendation")
    a, b = st.columns(2)
    a.metric("Action", rec.action.upper())
    b.metric("Confidence", f"{rec.confidence:.2f}")
    st.progress(rec.confidence)
    if rec.policy == "no_evidence":
        st.warning("No evidence at hand: the recall could not run.", icon=":material/cloud_off:")
    elif rec.policy == "guard":
        st.error("Guard: no relevant precedent, escalate.", icon=":material/shield:")
    elif rec.policy == "conflict":
        st.warning("Relevant precedents conflict.", icon=":material/call_split:")
    st.text(rec.rationale)
    st.caption("Cited precedents (relevant only)")
    st.text(", ".join(rec.cited) if rec.cited else "none")


def render_crowd_out(result: TwoStageResult, check_key: str) -> bool:
    """The crowd-out flag; returns True when the reviewer asks for the on-demand check."""
    st.subheader("Crowd-out check")
    co = result.crowd_out
    if co is None:
        st.info(
            (result.pass2_skipped_reason() or "")
            + " A single any_strict pass was not run; checking costs one more recall.",
            icon=":material/info:",
        )
        return st.button("Check crowd-out", key=check_key, icon=":material/compare_arrows:")
    source = "pass 2's response reused" if co.reused_pass2 else "one extra any_strict recall"
    if co.crowded_out:
        st.warning(
            f"Crowded out: a single any_strict pass's top {result.k} would have lost {co.lost} of the "
            f"{co.exact_in_result} exact precedent(s) ({source}).",
            icon=":material/warning:",
        )
    else:
        st.success(
            f"Not crowded out: a single any_strict pass's top {result.k} keeps all {co.exact_in_result} exact "
            f"precedent(s) ({source}).",
            icon=":material/check:",
        )
    return False


def _frame(records: list[PrecedentEvidence]) -> pd.DataFrame:
    rows = [{
        "rank": e.rank, "relevant": e.relevant, "pass": e.pass_, "precedent": e.ref,
        "outcome": e.metadata.get("outcome", ""), "decided on": e.metadata.get("decided_on", ""),
        "by": e.metadata.get("reviewer", "") or e.metadata.get("source", ""),
        "tags": ", ".join(e.tags), "final": e.scores.final, "semantic": e.scores.semantic, "keyword": e.scores.keyword,
        "text": e.text,
    } for e in records]  # fmt: skip
    columns = ["rank", "relevant", "pass", "precedent", "outcome", "decided on", "by", "tags", "final", "semantic", "keyword", "text"]
    return pd.DataFrame(rows, columns=columns)


def _trace(result: TwoStageResult, info: PassInfo, label: str, case_id: str | None) -> None:
    trace_link(
        TraceRequest(bank=result.bank_id, query=result.query, tags=tuple(info.tags), tags_match=info.tags_match,
                     max_tokens=info.max_tokens, budget=info.budget, types=tuple(info.types) if info.types else None),
        label=label, case=("case", case_id) if case_id else None,
    )  # fmt: skip


def render_evidence(result: TwoStageResult, case_id: str | None = None) -> None:
    score_cfg = {c: st.column_config.NumberColumn(c, format="%.3f") for c in ("final", "semantic", "keyword")}
    config = {"relevant": st.column_config.CheckboxColumn("relevant"), "text": st.column_config.TextColumn("text", width="large"), **score_cfg}

    st.subheader(f"Exact: this vendor AND this type ({len(result.exact)})")
    st.caption(f"Pass 1, all_strict on {' + '.join(result.pass1.tags)}: {result.pass1.returned} returned, top {result.k} kept.")
    if result.exact:
        st.dataframe(_frame(result.exact), hide_index=True, width="stretch", column_config=config, key="evidence_exact")
    else:
        st.text("No record is tagged with both this vendor and this type.")
    _trace(result, result.pass1, "Trace of pass 1 (exact)", case_id)

    st.subheader(f"Broader: this vendor OR this type ({len(result.broader)})")
    if result.pass2 is None:
        st.caption(result.pass2_skipped_reason())
        return
    st.caption(
        f"Pass 2, any_strict on {' or '.join(result.pass2.tags)}: {result.pass2.returned} returned; "
        "shown for transparency, never cited unless relevant."
    )
    if result.broader:
        st.dataframe(_frame(result.broader), hide_index=True, width="stretch", column_config=config, key="evidence_broader")
    else:
        st.text("Nothing beyond the exact precedents.")
    _trace(result, result.pass2, "Trace of pass 2 (broader)", case_id)
