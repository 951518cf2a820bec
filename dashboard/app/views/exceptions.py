"""Finance exceptions: one case at a time, built for deciding (header, recommendation, Approve / Override,
evidence), the queue in a panel above it (its table drawn only while it is open, so a key press redraws the case
alone). The case on screen is recalled first; the cases after it are recalled in the background."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

import streamlit as st

from components.evidence import render_crowd_out, render_evidence, render_recall_details, render_recommendation
from components.glossary import FINANCE_TERMS, render_glossary
from components.review_keys import review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from components.workflow import age_badge, claim_controls, flash, keep_selection, my_queue_filter, selected_rows, unknown_link
from dashboard.agents.incidents import incident_text, is_relevant_ref
from dashboard.app import access, audit, curating, finance_case, finance_recalls, labelling, resources
from dashboard.app.shown_queue import decided_among, held_statuses, shown_queue, vendor_choices
from dashboard.app.queue_filters import approval_filter, second_review_filter
from dashboard.finance import queue as exception_queue
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import EXCEPTION_TYPES, ExceptionCase
from dashboard.finance.policy import assess, no_evidence_recommendation
from dashboard.finance.recall import DEFAULT_K, MAX_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, shared_rows

QUEUE_KEY = "exception_queue"
QUEUE_OPEN = "exception_queue_open"  # the panel's state: its table and bulk approval are drawn only while it is open
# Pinned to the left: what a reviewer scans the queue for stays in view at 1440 wide, without scrolling sideways.
KEY_COLUMNS = ("case", "exact precedents", "agent recommends", "crowd-out", "incident")


@dataclass
class Queue:
    cases: Sequence[ExceptionCase]
    shown: Sequence[ExceptionCase]
    ids: Sequence[str]  # the shown cases' ids, in order: read by every key and link of the run
    decided: Mapping  # case id -> the state and outcome of its latest decision in this bank (DecisionState)
    held: Mapping  # case id -> its decision awaiting a second approval, or returned by one
    blind: dict  # case id -> its first decision awaiting a blind second review or a lead
    k: int
    table_open: bool  # the panel is open: its table and bulk approval are drawn


def queue_panel(bank: str, cases: Sequence[ExceptionCase], decided: Mapping, me: str | None, today: date) -> tuple[Queue, list[int], st.delta_generator.DeltaGenerator]:
    """The queue: filters, sort, "My queue", "Needs my approval"; while the panel is open, the table (flags from the
    review store) and bulk approval. Returns (queue, the table's selected rows, the caption's placeholder above the
    panel, where the counts show while it is closed)."""
    settings = resources.settings()
    held = resources.decisions().held_cases(bank, finance_case.KIND)
    blind = resources.decisions().blind_cases(bank, finance_case.KIND)
    k = int(st.session_state.get("exceptions_k", DEFAULT_K))
    caption = st.empty()
    # One label always: the label is part of the panel's identity, and a new one (say, a count) would close it.
    panel = st.expander("Queue: filters, table, bulk approval", icon=":material/list:", key=QUEUE_OPEN, on_change="rerun")
    if not panel.open:  # the table is not drawn: the address bar says which case is open, not a stale row
        st.session_state.pop(QUEUE_KEY, None)
    with panel:
        f1, f2, f3, f4, f5 = st.columns([3, 3, 3, 3, 2], vertical_alignment="bottom")
        vendors = f1.multiselect("Vendor", vendor_choices(cases), key="filter_vendor")
        types = f2.multiselect("Type", list(EXCEPTION_TYPES), key="filter_type")
        statuses = f3.multiselect("Status", list(exception_queue.STATUSES), key="filter_status")
        sort = f4.selectbox("Sort", list(exception_queue.SORTS), key="queue_sort")
        with f5:
            mine = my_queue_filter(resources.casework(), bank, finance_case.KIND, me, key="exceptions_my_queue")
            to_approve = approval_filter(held, me)
            to_review, to_lead = second_review_filter(blind, me, lead=False), second_review_filter(blind, me, lead=True)
        shown, ids = shown_queue(cases, decided, held, blind, (tuple(vendors), tuple(types), tuple(statuses)), sort)
        for only in (mine, to_approve, to_review, to_lead):
            if only is not None:
                shown = [c for c in shown if c.id in only]
                ids = [c.id for c in shown]
        queue = Queue(cases=cases, shown=shown, ids=ids, decided=decided, held=held, blind=blind, k=k, table_open=panel.open)
        keep_selection(QUEUE_KEY, "case", queue.ids, decided, finance_case.KEYS.goto)
        if not panel.open:  # a key press while the panel is closed redraws the case alone
            return queue, [], caption
        flags = resources.casework().flags(bank, "exception")  # measured as cases are recalled, kept in the store
        table = exception_queue.queue_frame(shown, decided, today, flags, {c: incident_text(f) for c, f in flags.items()}, held_statuses(held, blind))
        event = st.dataframe(
            exception_queue.with_sla(table, settings.sla_days), key=QUEUE_KEY,
            on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch",
            column_config={"invoice amount": st.column_config.NumberColumn(format="%.2f"), "variance": st.column_config.NumberColumn(format="%+.2f"),
                           **{c: st.column_config.Column(pinned=True) for c in KEY_COLUMNS}},
        )
        finance_case.bulk_bar(bank, queue, me)
    return queue, list(event.selection.rows), caption


def case_header(bank: str, case: ExceptionCase, queue: Queue, me: str | None, today: date):
    """Id, vendor, amounts, age against the SLA, status, claim, and the keyboard bar; returns (free, keys)."""
    stored = queue.decided.get(case.id)
    with st.container(key="case_header"):
        st.header(md(f"{case.id}: {case.vendor_code} {case.exception_type.replace('_', ' ')}"))
        with st.container(horizontal=True, vertical_alignment="center"):
            st.text(f"{case.vendor_name}   invoice {case.invoice_amount:,.2f}   variance {case.variance:+,.2f}")
            age_badge((today - case.opened_on).days, resources.settings().sla_days)
            held, blind = queue.held.get(case.id), queue.blind.get(case.id)
            status = exception_queue.status_of(stored, held.status if held else None)
            if blind is not None:  # nothing of the first decision: the second review is blind
                st.badge(blind.status, color="orange")
            elif held is not None:
                st.badge(f"{status}: {held.stored.decision.outcome}", color="orange")
            else:
                st.badge(status if stored is None else f"{status}: {stored.outcome}", color="blue" if stored is None else "green")
            free = claim_controls(resources.casework(), bank, finance_case.KIND, case.id, me, lambda: access.permitted("decide"))
        keys = review_keys(
            queue.ids, case.id, table_key=QUEUE_KEY, param="case", prefix="exc", override_state=("decision_choice", finance_case.OVERRIDE),
            decided=queue.decided, can_decide=free and access.can("decide"),
        )
    return free, keys


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
        cases = shared_rows(settings.exceptions_file, ExceptionCase)
    except QueueFileError as exc:
        st.error("The exception queue could not be loaded: nothing was imported.", icon=":material/error:")
        st.text(str(exc))
        return
    me = access.reviewer("reviewer_name")
    queue, rows, caption = queue_panel(bank, cases, resources.outbox().decision_states(bank, "exception"), me.name, today)
    case, problem = exception_queue.resolve_case(queue.shown, queue.ids, rows, st.query_params.get("case"))
    caption.caption(f"{len(queue.shown)} of {len(cases)} exceptions shown; {decided_among(queue.decided, queue.ids)} decided.")
    if problem or case is None:
        flash(finance_case.KEYS.flash)  # the last decision's confirmation, when its case left the queue shown
    if problem:
        unknown_link("exception", st.query_params["case"], queue.ids, queue.decided, goto_key=finance_case.KEYS.goto)
        return
    if case is None:
        st.info("Select a case in the queue to review it." if queue.shown else "No case to show: the queue is empty with these filters.",
                icon=":material/inbox:")
        return
    case_view(bank, queue, rows, me.name, today)


def _queue_moved(bank: str, queue: Queue, rows: list[int], me_then: str | None, me_now: str | None) -> bool:
    """Something the queue panel was drawn from changed since: a key moved the open table's selection, k or the
    reviewer's name changed, or a decision landed (here or on another instance)."""
    return (
        (selected_rows(QUEUE_KEY) if queue.table_open else []) != rows
        or int(st.session_state.get("exceptions_k", DEFAULT_K)) != queue.k
        or me_now != me_then
        or resources.outbox().decision_states(bank, "exception") is not queue.decided  # kept as one object until the log moves
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
    pick = "select another row to switch" if queue.table_open else "J / K move through the queue, or open it to pick one"
    st.caption(f"{md(case.id)} is open: {pick}.")

    free, keys = case_header(bank, case, queue, me.name, today)
    result, recall_error = recall(bank, case, queue)
    result, rec = assess(result) if result is not None else (None, no_evidence_recommendation("the recall could not run (Hindsight unavailable)."))
    left, right = st.columns([3, 2], gap="large")
    with left:
        render_recommendation(rec)
        evidence = st.container(key="case_evidence")  # the browser bench waits for this section's text
    with right:  # filled first: a decision reruns the page from here, before the decided case's evidence is drawn again
        finance_case.decision_area(bank, case, queue, result, rec, free=free, approve_key=keys.approve, me=me)
    with evidence:
        if result is not None:
            cards = [e.document_id for e in result.exact + result.broader if e.document_id]
            label = labelling.card_labels(bank, finance_case.KIND, case.id, labelling.finance_contexts(result), "reviewer_name")
            render_evidence(result, labelling.both(label, curating.card_controls(bank, cards, "reviewer_name", finance_case.KEYS.flash)))
        else:
            render_evidence_unavailable(settings.base_url, recall_error)
    if result is not None and result.own_decision is not None:
        with left:
            st.subheader("Your decision, as memory holds it")
            st.text(f"{result.own_decision.ref} (kept out of this case's evidence; it is evidence for the next case of this vendor and type)")
            st.text(result.own_decision.text)
    with st.expander("How this was recalled", icon=":material/manage_search:"):
        render_glossary(FINANCE_TERMS)
        st.number_input("Precedents to recall (k)", min_value=1, max_value=MAX_K, value=DEFAULT_K, key="exceptions_k")
        if result is not None:
            render_recall_details(result, case.id)
            if render_crowd_out(result, check_key=f"check_crowd_{case.id}_{queue.k}"):
                st.session_state[f"crowd_{bank}_{case.id}_{queue.k}"] = True
                st.rerun()
    if result is not None:
        own = document_id_for(case.id)
        render_then_now(  # "now" lists this case's own decision too, flagged: it is what changed, never evidence
            audit.then_now(bank, "exception", case.id, result.records + ([result.own_decision] if result.own_decision else [])),
            lambda r: "your decision (not evidence)" if r.ref == own else ("relevant" if is_relevant_ref(r, case.vendor_code, case.exception_type) else "not relevant"),
        )


page()
