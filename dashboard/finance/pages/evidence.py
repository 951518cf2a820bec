"""Finance exception pieces: case facts, the recommendation, the crowd-out flag and the evidence sections.

Memory text is untrusted: it is drawn only with st.dataframe / st.text, never through markdown.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date

import pandas as pd
import streamlit as st

from components.safe_text import md
from components.trace_link import trace_link
from components.when import local_day, local_time
from dashboard.delivery.outbox import StoredDecision
from dashboard.finance.matching import MatchStatus
from dashboard.finance.models import OUTCOME_WORDS, ExceptionCase
from dashboard.finance.policy import Recommendation
from dashboard.finance.recall import PassInfo, PrecedentEvidence, TwoStageResult
from dashboard.review.relevance import RecallContext
from dashboard.store.decision import decision_summary, outcome_words
from dashboard.traces.request import TraceRequest

Curate = Callable[[str], None]
ACTION_ICONS = {
    "approve": ":material/check_circle:",
    "reject": ":material/cancel:",
    "escalate": ":material/priority_high:",
}


def render_case_facts(case: ExceptionCase, today: date) -> None:
    """The invoice and PO: amounts as metrics, the rest as wrapped text (the description is never cut)."""
    pct = f"{case.variance_pct:+.1f}%" if case.variance_pct is not None else None
    with st.container(
        horizontal=True, gap="large"
    ):  # sized to their values and wrapping: amounts are never cut ("1,8...")
        st.metric("Invoice amount", f"{case.invoice_amount:,.2f}", width="content")
        st.metric("PO amount", f"{case.po_amount:,.2f}", width="content")
        st.metric("Variance", f"{case.variance:+,.2f}", pct, delta_color="inverse", width="content")
    st.text(
        f"Vendor: {case.vendor_code} {case.vendor_name}\nInvoice {case.invoice}, PO {case.po}\n"
        f"Opened {local_day(case.opened_on)} ({(today - case.opened_on).days} days ago)"
    )
    st.text(case.description)


def render_match(status: MatchStatus) -> None:
    """The case's 2-way or 3-way match, each check in plain words (what the queue file does not give says so)."""
    (st.warning if status.failed else st.info)(status.headline, icon=":material/rule:")
    st.text("\n".join(status.lines))


def render_decided(stored: StoredDecision | None, reasons: Mapping[str, str] | None = None) -> None:
    """The case's decision as it stands (`reasons`: the reason labels configured for the case)."""
    if stored is None:
        st.info("Open: no reviewer decision yet.", icon=":material/pending:")
        return
    d = stored.decision
    who = f"{d.reviewer} ({'signed in' if d.authenticated else 'unauthenticated'})"
    how = (
        f"override of {d.said(d.agent_recommendation, 'the recommendation')}"
        if d.overridden
        else "as the agent recommended"
    )
    # The reviewer's name was typed by a person: escaped, it shows as written and nothing in it is fetched.
    line = f"Decided: {outcome_words(d)} ({how}) by {md(who)} on {local_time(d.decided_at)}; decision #{stored.id}"
    if stored.state == "pending":
        st.warning(line + ". Saving to the agents' memory is pending.", icon=":material/schedule:")
    elif stored.state in ("failed", "discarded"):
        st.error(
            line + f". Hindsight refused it ({stored.state}); a lead can retry or discard it on the Audit log.",
            icon=":material/report:",
        )
    else:
        st.success(line + "; saved to the agents' memory.", icon=":material/task_alt:")
    st.text(decision_summary(d, reasons))  # the reason and the note, in full
    if stored.last_error and stored.state != "delivered":
        st.text(f"last error: {stored.last_error}")


def render_recommendation(rec: Recommendation, label: str = "Agent recommends", *, beside: bool = False) -> None:
    """The agent's recommendation in a few lines: action and confidence, then why, in plain words (`label`: whose it
    is, e.g. the dashboard's recompute beside the part an agent handed in; `beside`: in a column next to that part,
    headed by `label`, its outcome as a line of text, which a half-width metric would cut)."""
    if beside:
        st.subheader(label)
        st.text(f"Recommends {OUTCOME_WORDS[rec.action]}, confidence {rec.confidence:.2f}")
    with st.container(horizontal=True, vertical_alignment="center", gap="large"):
        if not beside:
            st.metric(label, OUTCOME_WORDS[rec.action].capitalize(), width="content")
            st.metric("Confidence", f"{rec.confidence:.2f}", width="content")
        if rec.policy == "no_evidence":
            st.warning("No evidence at hand: the recall could not run.", icon=":material/cloud_off:")
        elif rec.policy == "guard":
            st.error("Guard: no relevant precedent, escalate.", icon=":material/shield:")
        elif rec.policy == "conflict":
            st.warning("Relevant precedents conflict.", icon=":material/call_split:")
        elif rec.policy == "untrusted":
            st.warning("Escalated: records of unknown origin would decide it.", icon=":material/gpp_maybe:")
    st.text(rec.rationale)
    st.text("Cited precedents: " + (", ".join(rec.cited) if rec.cited else "none"))
    render_trust(rec)


def render_trust(rec: Recommendation) -> None:
    """The records the recommendation would not trust, what they would have made it, and what it rests on."""
    if rec.untrusted:
        st.warning(
            f"{len(rec.untrusted)} record(s) set aside as untrusted: shown below, never cited, never a vote.",
            icon=":material/gpp_maybe:",
        )
        st.text("\n".join(f"{ref}: {why}" for ref, why in rec.untrusted.items()))  # phrases from memory: literal text
        if rec.if_trusted:
            st.text(f"Counted as they present themselves, they would make the recommendation {rec.if_trusted}.")
    if rec.rests_on:
        st.text(f"The recommendation rests on {', '.join(rec.rests_on)}: without any one of them it would change.")
    if rec.swung_by and rec.policy == "untrusted":
        st.text(
            f"Records of unknown origin that would decide it (read them; a lead can vouch for them): {', '.join(rec.swung_by)}. "
            f"Without the rule it would be {rec.would_be}."
        )  # ids from memory: literal text


def render_crowd_out(result: TwoStageResult, check_key: str) -> bool:
    """The crowd-out check with its technical detail (for "How this was recalled"); returns True when the
    reviewer asks for the on-demand check."""
    co = result.crowd_out
    if co is None:
        # the reason pass 2 was skipped is said once, just above, by render_recall_details
        st.text(
            "Crowd-out not checked: one search over this vendor or this type (any_strict) was not run; checking costs one more search."
        )
        return st.button("Check crowd-out", key=check_key, icon=":material/compare_arrows:")
    source = "search 2's answer reused" if co.reused_pass2 else "one extra search (any_strict)"
    verdict = "Crowded out" if co.crowded_out else "Not crowded out"
    st.text(
        f"{verdict}: one search over this vendor or this type (any_strict) keeps {co.exact_in_result - co.lost} of the "
        f"{co.exact_in_result} exact precedent(s) in its top {result.k} ({source})."
    )
    return False


def render_crowd_out_flag(result: TwoStageResult) -> None:
    """The crowd-out finding in plain words, beside the evidence (only when it matters)."""
    co = result.crowd_out
    if co is not None and co.crowded_out:
        st.warning(
            f"One search over this vendor or this type would have lost {co.lost} of the "
            f"{co.exact_in_result} exact precedent(s): broader records outrank them.",
            icon=":material/warning:",
        )


def _card(e: PrecedentEvidence, curate: Curate | None) -> None:
    """One precedent: its id, outcome, date and relevance beside its text, wrapped (never cut); beneath, its
    curation (`curate(document id)`) when the page offers it."""
    with st.container(border=True):
        about, body = st.columns([2, 5])
        with about:
            st.text(e.ref)
            outcome, decided_on = e.metadata.get("outcome", ""), e.metadata.get("decided_on", "")
            st.text(" ".join(x for x in (outcome or "no outcome", decided_on) if x))
            st.text(f"Origin: {e.origin.words}")  # who wrote it, as far as its signature proves (never its tags)
            if e.origin.forged:
                st.badge("forged claim", color="red", icon=":material/gpp_bad:")
            if e.relevant:
                st.badge("relevant", color="green", icon=":material/check:")
            else:
                st.badge("not relevant", color="gray")
            if e.set_aside:
                st.badge("set aside", color="orange", icon=":material/block:")
        with body:
            if e.set_aside:  # the phrase came from memory: literal text only
                st.text(f"Set aside, never cited, never a vote: {e.set_aside}.", wrap=True)
            st.text(e.text, wrap=True)
            facts = e.extracted_facts
            if facts:  # with an LLM: what the server rewrote the document into, and matched
                st.caption(f"{len(facts)} fact(s) the server extracted from it matched:")
                for fact in facts:
                    st.text(f"- {fact.text}", wrap=True)
        if curate is not None and e.document_id:
            curate(e.document_id)


def render_observations(result: TwoStageResult) -> None:
    """Hindsight's observations: shown for context with where they came from, never precedents, never votes."""
    if not result.observations:
        return
    st.subheader(f"Summaries Hindsight built across records ({len(result.observations)})")
    st.caption(
        "Observations the server consolidated from several documents: context only, never a precedent, never cited."
    )
    for o in result.observations:
        with st.container(border=True):
            st.text(o.text, wrap=True)
            sources = ", ".join(o.source_documents) or "not returned"
            missing = f" ({len(o.unresolved)} more not returned)" if o.unresolved else ""
            st.text(f"Built from: {sources}{missing}")


def render_evidence(result: TwoStageResult, curate: Curate | None = None) -> None:
    """The precedents as cards, exact ones first; the technical detail is in `render_recall_details`.
    `curate(document id)` draws a card's curation part (the page's, dashboard.app.curating)."""
    st.subheader(f"Exact: this vendor AND this type ({len(result.exact)})")
    for e in result.exact:
        _card(e, curate)
    if not result.exact:
        st.text("No record is about both this vendor and this type.")
    render_crowd_out_flag(result)
    st.subheader(f"Broader: this vendor OR this type ({len(result.broader)})")
    if result.pass2 is None:
        st.text("Not searched: the exact precedents already fill the list.")
        render_observations(result)
        return
    st.caption("Shown for context; cited only when relevant.")
    for e in result.broader:
        _card(e, curate)
    if not result.broader:
        st.text("Nothing beyond the exact precedents.")
    render_observations(result)


def _frame(records: list[PrecedentEvidence]) -> pd.DataFrame:
    rows = [
        {
            "rank": e.rank,
            "relevant": e.relevant,
            "pass": e.pass_,
            "precedent": e.ref,
            "facts": len(e.facts),
            "tags": ", ".join(e.tags),
            "final": e.scores.final,
            "semantic": e.scores.semantic,
            "keyword": e.scores.keyword,
        }
        for e in records
    ]
    return pd.DataFrame(
        rows, columns=["rank", "relevant", "pass", "precedent", "facts", "tags", "final", "semantic", "keyword"]
    )


def _trace(result: TwoStageResult, info: PassInfo, label: str, case_id: str | None) -> None:
    trace_link(
        TraceRequest(
            bank=result.bank_id,
            query=result.query,
            tags=tuple(info.tags),
            tags_match=info.tags_match,
            max_tokens=info.max_tokens,
            budget=info.budget,
            types=tuple(info.types) if info.types else None,
        ),
        label=label,
        case=("case", case_id) if case_id else None,
    )


def _returned(info: PassInfo) -> str:
    facts = f" ({info.facts} memories)" if info.facts is not None and info.facts != info.returned else ""
    return f"{info.returned} document(s) returned{facts}, answer length limit {info.max_tokens} tokens (max_tokens)"


def render_recall_details(result: TwoStageResult, case_id: str | None = None) -> None:
    """Inside "How this was recalled": the passes, their tag filters, the scores and the traces (which link
    back to `case_id`)."""
    score_cfg = {c: st.column_config.NumberColumn(c, format="%.3f") for c in ("final", "semantic", "keyword")}
    config = {"relevant": st.column_config.CheckboxColumn("relevant"), **score_cfg}
    st.text(
        f"Search 1, only records tagged with all of {' + '.join(result.pass1.tags)} (all_strict): {_returned(result.pass1)}, "
        f"top {result.k} kept."
    )
    if result.budget_reached:
        st.text(
            "The answer length limit (max_tokens) ended a response: the lowest-ranked documents shown may be missing some of "
            "their matched facts (each document's full text is shown)."
        )
    if result.exact:
        st.dataframe(_frame(result.exact), hide_index=True, width="stretch", column_config=config, key="evidence_exact")
    _trace(result, result.pass1, "Trace of pass 1 (exact)", case_id)
    if result.pass2 is None:
        st.text(result.pass2_skipped_reason() or "")
        return
    st.text(
        f"Search 2, records tagged with any of {' or '.join(result.pass2.tags)}, untagged ones left out (any_strict): "
        f"{_returned(result.pass2)}."
    )
    if result.broader:
        st.dataframe(
            _frame(result.broader), hide_index=True, width="stretch", column_config=config, key="evidence_broader"
        )
    _trace(result, result.pass2, "Trace of pass 2 (broader)", case_id)


def recall_contexts(result: TwoStageResult) -> dict[str, RecallContext]:
    """Each card's request: pass 1 (exact) or pass 2 (broader), with the documents the two-stage result ranks."""
    ranked = [e.document_id for e in result.records if e.document_id]
    contexts = {}
    for e in result.records:
        info = result.pass1 if e.pass_ == "exact" or result.pass2 is None else result.pass2
        if e.document_id:
            contexts[e.document_id] = RecallContext(
                query=result.query, tags=info.tags, tags_match=info.tags_match, ranked=ranked
            )
    return contexts
