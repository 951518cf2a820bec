"""The generic case page of a queue kind (a kind's page script calls `render(kind)`): its queue, one case's exact and
broader evidence with each record's relevance and why, the agent's recommendation, and a decision form whose submit
goes through the decision service like every other. Everything a file or memory typed is shown as plain text."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from components import submission
from components.revisions import render_history
from components.safe_text import md
from components.trace_link import trace_link
from components.workflow import flash, reviewer_field
from dashboard.app import access, case_figures, kind_decision, resources
from dashboard.app.agent_part import RECOMPUTE, agent_part_of, show_agent_part
from dashboard.hindsight.errors import HindsightError
from dashboard.kinds import bank_of, cases_of
from dashboard.queue_files import QueueFileError
from dashboard.review.queue_kind import CaseView, EvidenceRecord, QueueKind
from dashboard.store.decision import decision_summary, outcome_words
from dashboard.traces.request import TraceRequest


def _chosen(kind: QueueKind, ids: list[str], goto_key: str) -> str:
    """The case to show: the one the service moved on to (the row selected before it is let go), else the row
    selected, the deep link's, the first. Called before the queue is drawn, so a move clears its selection."""
    table_key = f"{kind.key}_queue"
    moved = st.session_state.pop(goto_key, None)
    if moved in ids:
        st.session_state.pop(table_key, None)
        return moved
    table = st.session_state.get(table_key)
    rows = table.selection.rows if table is not None and hasattr(table, "selection") else []
    linked = st.query_params.get("case")
    return next((c for c in (ids[rows[0]] if rows else None, linked) if c in ids), ids[0])


def _evidence(title: str, records: list[EvidenceRecord]) -> None:
    st.subheader(f"{title} ({len(records)})")
    if not records:
        st.text("None.")
    for record in records:
        with st.container(border=True):
            verdict = "relevant" if record.relevant else "not relevant"
            st.text(f"{record.ref}: {verdict}" + (f" ({record.why})" if record.why else ""))
            st.text(record.text)


def _trace(kind: QueueKind, bank: str, case, view: CaseView) -> None:
    """A link to the trace of the case's exact recall, opened focused on the case (its kind's `focus`: the tags its
    exact evidence holds), with a way back here."""
    try:
        tags, about = kind.focus(case)
    except ValueError:  # the kind cannot say what the case's exact evidence is
        return
    request = TraceRequest(
        bank=bank, query=(view.query or kind.describe(case))[:4000], tags=tuple(tags), tags_match="all_strict"
    )
    trace_link(request, label=f"Trace the exact recall ({md(about)})", case=("case", case.id), of=kind.key)


def _recall(kind: QueueKind, bank: str, case) -> CaseView:
    """The case's recall, made once while its scope's memory stays the same (a decision there, on any instance, moves
    its freshness stamp): typing in the page recalls nothing again."""
    stamp = resources.freshness().stamp(bank, kind.scope(case))
    kept = st.session_state.setdefault(f"{kind.key}_recalls", {})  # case id -> (stamp, view), this session's
    if case.id in kept and kept[case.id][0] == stamp:
        return kept[case.id][1]
    try:
        view = kind.recall(resources.gateway().recall, bank, case, origin=resources.outbox().provenance.origin)
    except HindsightError as exc:
        st.warning(md(f"Hindsight did not answer: {exc}"), icon=":material/cloud_off:")
        return CaseView(case_id=case.id, available=False)
    kept[case.id] = (stamp, view)
    return view


def render(kind: QueueKind) -> None:
    settings = resources.settings()
    bank = bank_of(settings, kind)
    st.title(kind.title)
    try:
        cases = cases_of(settings, kind)
    except QueueFileError as exc:
        st.error(md(f"The {kind.nouns[1]} file cannot be read: {exc}"))
        return
    if not cases:
        st.info(f"No {kind.nouns[1]} in the queue.")
        return
    ids = [c.id for c in cases]
    keys = kind_decision.queue_keys(kind)
    chosen = _chosen(kind, ids, keys.goto)
    statuses = case_figures.statuses(bank, kind.name, ids)
    frame = pd.DataFrame([{"case": c.id, **kind.columns(c), "status": statuses[c.id]} for c in cases])
    st.dataframe(frame, hide_index=True, key=f"{kind.key}_queue", on_select="rerun", selection_mode="single-row")
    case = next(c for c in cases if c.id == chosen)
    st.query_params["case"] = case.id
    st.header(md(kind.describe(case)))
    flash(keys.flash)
    view = _recall(kind, bank, case)
    submitted = agent_part_of(kind, case.id)

    def recommendation() -> None:
        if view.recommendation:
            whose = RECOMPUTE if submitted else "The agent"
            st.text(
                f"{whose} recommends: {kind.outcomes.get(view.recommendation, view.recommendation)}. {view.rationale}"
            )
        elif view.rationale:
            st.text(view.rationale)

    if submitted is None:
        recommendation()
    else:  # the agent's part once, the recompute beside it, then where they differ
        show_agent_part(kind, submitted, view.recommendation, [*view.exact, *view.broader], recompute=recommendation)
    exact, broader = st.columns(2)
    with exact:
        _evidence("Exact evidence", view.exact)
    with broader:
        _evidence("Broader evidence", view.broader)
    _trace(kind, bank, case, view)
    seen_key = f"{kind.key}_seen_{bank}_{case.id}"  # the revision this page showed: a submit is made on it
    conflict = st.session_state.pop(keys.conflict, None)
    if conflict and conflict["case"] == case.id:
        theirs = conflict["theirs"].decision
        st.error(
            md(
                f"Not recorded: {theirs.reviewer} decided {case.id} meanwhile ({outcome_words(theirs)}). The case "
                "now shows their decision; revise it, with a reason, if you still disagree."
            ),
            icon=":material/block:",
        )
        st.session_state.pop(seen_key, None)
    st.session_state.setdefault(seen_key, resources.outbox().current_revision(bank, kind.name, case.id))
    decided = resources.outbox().latest_decided(bank, kind.name, case.id)
    if decided is not None:
        d = decided.decision
        st.text(
            f"Decided: {outcome_words(d)} by {d.reviewer}, decision #{decided.id} ({decided.state}).\n{decision_summary(d)}"
        )
        render_history(resources.decisions().revisions(bank, kind.name, case.id))
    reviewer_field(access.reviewer(f"{kind.key}_reviewer"), f"{kind.key}_reviewer")
    kind_decision.form(kind, case, view, revising=resources.decisions().standing(bank, kind.name, case.id) is not None)
    submitted = submission.take(keys.pending)
    if submitted is not None:
        refused = kind_decision.record(kind, bank, case, view, submitted, cases, seen_key)
        if refused:
            st.error(md(f"Not recorded: {refused}"), icon=":material/block:")
