"""Finance exceptions: one case at a time, built for deciding (header, the keys with Accept / Override, the
recommendation, the form, evidence), the queue in a panel above it (dashboard/finance/pages/queue.py). The case on
screen is recalled first; the cases after it are recalled in the background."""

from __future__ import annotations

from datetime import date

import streamlit as st

from components.decision_form import OVERRIDE, draft_of, drafted_cases, field_keys
from components.glossary import FINANCE_TERMS, render_glossary
from components.review_keys import Accept, review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from components.workflow import Slot, age_badge, claim_controls, flash, reviewer_field, selected_rows, unknown_link
from dashboard.agents.incidents import is_relevant_ref
from dashboard.app import access, audit, blind_review, curating, labelling, resources
from dashboard.app.agent_part import RECOMPUTE, agent_part_of, show_agent_part
from dashboard.app.case_figures import case_status, figures_from
from dashboard.finance import queue as exception_queue
from dashboard.finance.decisions import document_id_for
from dashboard.finance.kind import FINANCE, evidence_records
from dashboard.finance.models import OUTCOME_WORDS, ExceptionCase
from dashboard.finance.pages import case as finance_case
from dashboard.finance.pages import recalls as finance_recalls
from dashboard.finance.pages.evidence import (
    recall_contexts,
    render_crowd_out,
    render_evidence,
    render_recall_details,
    render_recommendation,
)
from dashboard.finance.pages.form import accept_label
from dashboard.finance.pages.queue import QUEUE_KEY, Queue, queue_panel
from dashboard.finance.policy import assess, no_evidence_recommendation
from dashboard.finance.recall import DEFAULT_K, MAX_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.write_facts import asker
from dashboard.kinds import cases_of
from dashboard.queue_files import QueueFileError
from dashboard.reporting.headline import figures_words

DETAILS_OPEN = "recall_details_open"  # "How this was recalled": its state, open or not


def case_header(
    bank: str, case: ExceptionCase, queue: Queue, me, today: date, accept: Accept
) -> tuple[bool, Slot, bool]:
    """Id, vendor, amounts, age against the SLA, status, claim, the keyboard bar and, under it, the place for what the
    last action said; returns (free, that place, Override pressed)."""
    stored = queue.decided.get(case.id)
    with st.container(key="case_header"):
        st.header(md(f"{case.id}: {case.vendor_code} {case.exception_type.replace('_', ' ')}"))
        with st.container(horizontal=True, vertical_alignment="center"):
            st.text(f"{case.vendor_name}   invoice {case.invoice_amount:,.2f}   variance {case.variance:+,.2f}")
            age_badge((today - case.opened_on).days, resources.settings().sla_days)
            held, blind = queue.held.get(case.id), queue.blind.get(case.id)
            status = case_status(stored, held.status if held else None)
            if blind is not None:  # nothing of the first decision: the second review is blind
                st.badge(blind.status, color="orange")
            elif held is not None:
                st.badge(f"{status}: {OUTCOME_WORDS[held.stored.decision.outcome]}", color="orange")
            else:
                st.badge(
                    status if stored is None else f"{status}: {OUTCOME_WORDS[stored.outcome]}",
                    color="blue" if stored is None else "green",
                )
            if draft_of(case.id):  # an override chosen or typed here, not sent: kept for this session
                st.badge("unsent draft", color="violet", icon=":material/edit_note:")
            reviewer_field(me, "reviewer_name")
            free = claim_controls(
                resources.casework(),
                bank,
                finance_case.KIND,
                case.id,
                me.person,
                lambda: access.permitted("decide"),
                cannot_claim=blind_review.cannot_claim(blind, me),
            )
        awaiting = held is not None and held.awaiting  # its form is the second approver's
        why_not = (
            "someone else holds it (see who above)"
            if not free
            else "its decision awaits a second approval (below)"
            if awaiting
            else None
        )
        override = review_keys(
            queue.ids,
            case.id,
            table_key=QUEUE_KEY,
            param="case",
            prefix="exc",
            accept=accept,
            override_state=(field_keys(case.id)["choice"], OVERRIDE),
            decided=queue.decided,
            can_decide=access.can("decide"),
            why_not=why_not,
        )
        slot = Slot("case_feedback")
    flash(finance_case.KEYS.flash, slot)  # the last decision's confirmation, where the reviewer's eyes are
    return free, slot, override


def recall(bank: str, case: ExceptionCase, queue: Queue):
    """The case's recall first (one or two calls), then the cases after it in the background; (result, error)."""
    own = document_id_for(case.id)  # this case's own decision: shown apart, never its evidence
    try:
        check = bool(st.session_state.get(f"crowd_{bank}_{case.id}_{queue.k}"))
        result = finance_recalls.recall_case(bank, CaseKey.of(case), case.recall_query(), queue.k, own, check=check)
    except HindsightError as exc:
        return None, exc  # the decision never depends on a recall: the form stays
    finally:
        if resources.connection_error() is None and resources.settings().prefetch_queue:
            finance_recalls.prefetch_queue(bank, queue.shown, queue.k, after=case.id, ids=queue.ids)
    return result, None


def page() -> None:
    st.title("Finance exceptions")
    settings = resources.settings()
    bank, today = settings.finance_bank, date.today()
    try:
        cases = cases_of(settings, FINANCE)  # the queue file's rows, then the cases agents handed in
    except QueueFileError as exc:
        st.error("The exception queue could not be loaded: nothing was imported.", icon=":material/error:")
        st.text(str(exc))
        return
    me = access.reviewer("reviewer_name")
    queue, rows, caption = queue_panel(
        bank, cases, resources.outbox().decision_states(bank, "exception"), me.person, today
    )
    case, problem = exception_queue.resolve_case(queue.shown, queue.ids, rows, st.query_params.get("case"))
    caption.caption(
        f"{len(queue.shown)} of {len(cases)} exceptions shown: "
        f"{figures_words(figures_from(queue.ids, queue.decided, queue.held, queue.blind))}."
    )
    if problem or case is None:
        flash(finance_case.KEYS.flash)  # the last decision's confirmation, when its case left the queue shown
    if problem:
        unknown_link("exception", st.query_params["case"], queue.ids, queue.decided, goto_key=finance_case.KEYS.goto)
        return
    if case is None:
        st.info(
            "Select a case in the queue to review it."
            if queue.shown
            else "No case to show: the queue is empty with these filters.",
            icon=":material/inbox:",
        )
        return
    case_view(bank, queue, rows, me.name, today)


def _queue_moved(bank: str, queue: Queue, rows: list[int], me_then: str | None, me_now: str | None) -> bool:
    """Something the queue panel was drawn from changed since: a key moved the open table's selection, k or the
    reviewer's name changed, or a decision landed (here or on another instance)."""
    return (
        (selected_rows(QUEUE_KEY) if queue.table_open else []) != rows
        or int(st.session_state.get("exceptions_k", DEFAULT_K)) != queue.k
        or me_now != me_then
        or resources.outbox().decision_states(bank, "exception")
        is not queue.decided  # kept as one object until the log moves
    )


@st.fragment
def case_view(bank: str, queue: Queue, rows: list[int], me_then: str | None, today: date) -> None:
    """The open case. A fragment: J, K, N and the case's own controls rerun this alone, not the queue's file,
    states and filters; whatever changes the queue reruns the whole page."""
    me = access.reviewer("reviewer_name")
    if _queue_moved(bank, queue, rows, me_then, me.name):
        st.rerun()
    case, _problem = exception_queue.resolve_case(queue.shown, queue.ids, rows, st.query_params.get("case"))
    if case is None:  # not a case of this queue (the address bar was edited): the page says so
        st.rerun()
    if st.query_params.get("case") != case.id:
        st.query_params["case"] = case.id  # a shareable deep link to this case
    settings = resources.settings()
    pick = (
        "select another row to switch" if queue.table_open else "J / K move through the queue, or open it to pick one"
    )
    drafts = drafted_cases()  # the queue's unsent drafts, said with the case open: a key redraws this, not the panel
    st.caption(
        f"{md(case.id)} is open: {pick}."
        + (f" Unsent drafts, kept for this session: {md(', '.join(drafts))}." if drafts else "")
    )

    result, recall_error = recall(bank, case, queue)
    result, rec = (
        assess(
            result,
            resources.outbox().provenance.origin,
            settings.origin_weights,
            untrusted_decides=settings.untrusted_decides,
            ask_server=asker(resources.gateway(), bank),
        )
        if result is not None
        else (None, no_evidence_recommendation("the recall could not run (Hindsight unavailable)."))
    )
    shown = finance_case.shown_of(case, result, rec)
    accept = Accept(accept_label(rec.action), finance_case.KEYS.pending, shown, "accept the agent's recommendation")
    free, header, override = case_header(bank, case, queue, me, today, accept)
    left, right = st.columns([3, 2], gap="large")
    with left:
        submitted = agent_part_of(FINANCE, case.id)
        if submitted is None:
            render_recommendation(rec)
        else:  # the agent's part once, the recompute beside it, then where they differ
            show_agent_part(
                FINANCE,
                submitted,
                rec.action,
                evidence_records(result, case) if result is not None else [],
                recompute=lambda: render_recommendation(rec, RECOMPUTE, beside=True),
            )
        evidence = st.container(key="case_evidence")  # the browser bench waits for this section's text
    with right:  # filled first: a decision reruns the page from here, before the decided case's evidence is drawn again
        finance_case.decision_area(
            bank, case, queue, result, rec, shown, header=header, free=free, override_pressed=override, me=me
        )
    with evidence:
        if result is not None:
            cards = [e.document_id for e in result.exact + result.broader if e.document_id]
            label = labelling.card_labels(bank, finance_case.KIND, case.id, recall_contexts(result), "reviewer_name")
            render_evidence(
                result,
                labelling.both(label, curating.card_controls(bank, cards, "reviewer_name", finance_case.KEYS.flash)),
            )
        else:
            render_evidence_unavailable(settings.base_url, recall_error)
    if result is not None and result.own_decision is not None:
        with left:
            st.subheader("Your decision, as memory holds it")
            st.text(
                f"{result.own_decision.ref} (kept out of this case's evidence; it is evidence for the next case of this vendor and type)"
            )
            st.text(result.own_decision.text)
    # Drawn only while open (opening it reruns the case): its tables, traces and glossary, drawn on every key, cost about
    # a sixth of a key's browser CPU and a fifth of its time at eight reviewers (docs/performance.md). k stays drawn:
    # its value must outlive a close.
    details = st.expander("How this was recalled", icon=":material/manage_search:", key=DETAILS_OPEN, on_change="rerun")
    with details:
        st.number_input("Precedents to recall (k)", min_value=1, max_value=MAX_K, value=DEFAULT_K, key="exceptions_k")
        if details.open:
            render_glossary(FINANCE_TERMS)
        if details.open and result is not None:
            render_recall_details(result, case.id)
            if render_crowd_out(result, check_key=f"check_crowd_{case.id}_{queue.k}"):
                st.session_state[f"crowd_{bank}_{case.id}_{queue.k}"] = True
                st.rerun()
    if result is not None:
        own = document_id_for(case.id)
        render_then_now(  # "now" lists this case's own decision too, flagged: it is what changed, never evidence
            audit.then_now(
                bank, "exception", case.id, result.records + ([result.own_decision] if result.own_decision else [])
            ),
            lambda r: (
                "your decision (not evidence)"
                if r.ref == own
                else ("relevant" if is_relevant_ref(r, case.vendor_code, case.exception_type) else "not relevant")
            ),
        )


page()
