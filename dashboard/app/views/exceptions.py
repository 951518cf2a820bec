"""Finance exceptions: one case at a time, built for deciding (header, recommendation, Approve / Override,
evidence), the queue in a panel above it. The case on screen is recalled first; the rest of the queue is
recalled in the background."""

from datetime import UTC, date, datetime

import streamlit as st

from components.conflict import render_conflict
from components.decision_form import OVERRIDE, decision_form, quick_approval, reviewer_field
from components.evidence import (
    render_case_facts,
    render_crowd_out,
    render_decided,
    render_evidence,
    render_recall_details,
    render_recommendation,
)
from components.review_keys import review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from components.workflow import advance_after_decision as advance
from components.workflow import (
    age_badge,
    auto_advance_toggle,
    claim_controls,
    confirm_bulk,
    current_reviewer,
    flash,
    keep_selection,
    may_decide,
    my_queue_filter,
    render_comments,
    toast,
)
from dashboard.agents.incidents import incident_text, is_relevant_ref
from dashboard.app import access, state
from dashboard.finance import queue as exception_queue
from dashboard.finance.decisions import (
    DecisionError,
    decisions_by_case,
    document_id_for,
    evidence_snapshot,
    exception_decision,
    precedent_record,
)
from dashboard.finance.models import EXCEPTION_TYPES, ExceptionCase
from dashboard.finance.policy import assess, no_evidence_recommendation
from dashboard.finance.recall import DEFAULT_K, MAX_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.review.decision import conflict_escalation
from dashboard.review.outbox import RevisionConflict

QUEUE_KEY = "exception_queue"
FLASH = "exceptions_flash"
CONFLICT = "exceptions_conflict"
GOTO = "exceptions_goto"  # the case the next run opens (auto-advance)
BULK = "exceptions_bulk_confirmed"
KIND = "exception"

st.title("Finance exceptions")

settings = state.settings()
bank = settings.finance_bank
today = date.today()
try:
    cases = load_rows(settings.exceptions_file, ExceptionCase)
except QueueFileError as exc:
    st.error("The exception queue could not be loaded: nothing was imported.", icon=":material/error:")
    st.text(str(exc))
    st.stop()
outbox = state.outbox()
casework = state.casework()
decided = decisions_by_case(outbox, bank)
me, signed_in = current_reviewer("reviewer_name")
k = int(st.session_state.get("exceptions_k", DEFAULT_K))
flash(FLASH)

# -- the queue: a panel, collapsed while a case is open -------------------------------------------------
queue_panel = st.expander(f"Queue: {len(cases)} exceptions, {sum(1 for c in cases if c.id in decided)} decided", icon=":material/list:")
with queue_panel:
    f1, f2, f3, f4, f5 = st.columns([3, 3, 3, 3, 2], vertical_alignment="bottom")
    vendors = f1.multiselect("Vendor", sorted({c.vendor_code for c in cases}), key="filter_vendor")
    types = f2.multiselect("Type", list(EXCEPTION_TYPES), key="filter_type")
    statuses = f3.multiselect("Status", list(exception_queue.STATUSES), key="filter_status")
    sort = f4.selectbox("Sort", list(exception_queue.SORTS), key="queue_sort")
    with f5:
        mine = my_queue_filter(casework, bank, KIND, me, key="exceptions_my_queue")
    shown = exception_queue.select(cases, decided, vendors=vendors, types=types, statuses=statuses, sort=sort)
    if mine is not None:
        shown = [c for c in shown if c.id in mine]
    ids = [c.id for c in shown]
    keep_selection(QUEUE_KEY, "case", ids, decided, GOTO)
    queue_flags = state.case_flags(bank, "exception")  # measured as cases are recalled, kept in the review store
    queue_table = exception_queue.queue_frame(shown, decided, today, queue_flags, {c: incident_text(f) for c, f in queue_flags.items()})
    event = st.dataframe(
        exception_queue.with_sla(queue_table, settings.sla_days), key=QUEUE_KEY,
        on_select="rerun", selection_mode="single-row", hide_index=True, width="stretch",
        column_config={"invoice amount": st.column_config.NumberColumn(format="%.2f"), "variance": st.column_config.NumberColumn(format="%+.2f")},
    )  # fmt: skip
    queue_caption = st.empty()
    bulk_bar = st.container(horizontal=True, vertical_alignment="center")

case, problem = exception_queue.resolve_case(shown, list(event.selection.rows), st.query_params.get("case"))
queue_caption.caption(
    f"{len(shown)} of {len(cases)} exceptions; {sum(1 for c in shown if c.id in decided)} decided. "
    + (f"{md(case.id)} is open: select another row to switch." if case else "Select a row to review it.")
)


# -- bulk approval: well-supported recommendations, one confirmation, one decision per case ----------------
def _open_cases() -> list[ExceptionCase]:
    """The queue's open cases nobody else holds."""
    holders = casework.live_claims(bank, KIND)
    return [c for c in shown if c.id not in decided and holders.get(c.id, me) == me]


def _bulk_candidates() -> list[tuple]:
    """(case, result, recommendation) for each open case whose recall is at hand and whose recommendation is
    well supported. Computed when asked (a click), never on every rerun of a long queue."""
    ready = []
    for c in _open_cases():
        cached = state.cached_case(bank, c, k)
        if cached is not None:
            result, rec = assess(cached)
            if exception_queue.well_supported(rec):
                ready.append((c, result, rec))
    return ready


def _bulk_record(ready: list[tuple]) -> None:
    if not access.require("decide"):
        return
    recorded, skipped = [], []
    for c, result, rec in ready:
        if not may_decide(casework, bank, KIND, c.id, me):
            skipped.append(c.id)
            continue
        decision = exception_decision(
            c, rec, reviewer=me, authenticated=signed_in, action="approve_recommendation", outcome=None, reason_code=None,
            note="Approved in bulk: a well-supported recommendation.",
        )  # fmt: skip
        try:
            outbox.submit(bank, decision, precedent_record(c, decision, rec), state.gateway().retain, base_revision=0,
                          evidence=evidence_snapshot(result, rec))  # fmt: skip
        except RevisionConflict:  # decided by someone else meanwhile: theirs stands
            skipped.append(c.id)
            continue
        state.bump_generation(bank, CaseKey.of(c))
        recorded.append(c.id)
    message = f"{len(recorded)} decision(s) recorded, one per case: {', '.join(recorded) or 'none'}."
    if skipped:
        message += f" Skipped (claimed or decided by someone else): {', '.join(skipped)}."
    st.session_state[FLASH] = {"ok": bool(recorded), "message": message}
    st.rerun()


with bulk_bar:
    if st.button(
        "Approve well-supported recommendations", key="bulk_open", icon=":material/done_all:",
        disabled=me is None or not access.can("decide"),
        help="Open cases whose recommendation cites relevant precedents with high confidence; you confirm the list first"
        + (" (type your reviewer name first)" if me is None else ""),
    ):  # fmt: skip
        candidates = _bulk_candidates()
        if candidates:
            confirm_bulk({c.id: f"{c.id}: {c.vendor_code} {c.exception_type.replace('_', ' ')}, {r.action}" for c, _res, r in candidates}, BULK)
        else:
            toast("No open case has a well-supported recommendation at hand yet.", ok=False)
    loading = sum(1 for c in shown if c.id not in decided and state.cached_case(bank, c, k) is None)
    if loading:
        st.caption(f"{loading} open case(s) are still being recalled in the background.")
confirmed = st.session_state.pop(BULK, None)
if confirmed:
    _bulk_record([item for item in _bulk_candidates() if item[0].id in confirmed])  # only what the reviewer saw

if problem:
    st.warning("The linked exception is not in the queue (or is filtered out).", icon=":material/link_off:")
    st.text(problem)
if case is None:
    st.info("No case to show: the queue is empty with these filters.", icon=":material/inbox:")
    st.stop()
if st.query_params.get("case") != case.id:
    st.query_params["case"] = case.id  # a shareable deep link to this case

# -- the case header: what it is, how old, who holds it, and the decision keys ---------------------------
stored_now = decided.get(case.id)
with st.container(key="case_header"):
    st.header(md(f"{case.id}: {case.vendor_code} {case.exception_type.replace('_', ' ')}"))
    with st.container(horizontal=True, vertical_alignment="center"):
        st.text(f"{case.vendor_name}   invoice {case.invoice_amount:,.2f}   variance {case.variance:+,.2f}")
        age_badge((today - case.opened_on).days, settings.sla_days)
        status = exception_queue.status_of(stored_now)
        st.badge(status if stored_now is None else f"{status}: {stored_now.decision.outcome}", color="blue" if stored_now is None else "green")
        free = claim_controls(casework, bank, KIND, case.id, me, lambda: access.require("decide"))
    keys = review_keys(
        ids, case.id, table_key=QUEUE_KEY, param="case", prefix="exc", override_state=("decision_choice", OVERRIDE),
        decided=decided, can_decide=free and access.can("decide"),
    )  # fmt: skip

# The revision this page showed the reviewer: a submit is made on it, so a decision that landed since is a conflict.
seen_key = f"exc_seen_{bank}_{case.id}"
current_revision = stored_now.revision if stored_now else 0
seen_revision = st.session_state.get(seen_key, current_revision)
st.session_state[seen_key] = current_revision

# The case on screen first (one or two calls); then the rest of the queue, in the background.
key = CaseKey.of(case)
result = None
recall_error = None
own = document_id_for(case.id)  # this case's own decision: shown apart, never its evidence
try:
    result = state.recall_case(bank, key, case.recall_query(), k, own)
    if result.crowd_out is None and st.session_state.get(f"crowd_{bank}_{case.id}_{k}"):
        result = state.with_crowd_out(bank, key, case.recall_query(), k, own)
except HindsightError as exc:
    recall_error = exc  # the decision never depends on a recall: the form stays
if state.connection_error() is None:
    state.prefetch_queue(bank, shown, k, after=case.id)
if result is not None:
    result, rec = assess(result)
else:
    rec = no_evidence_recommendation("the recall could not run (Hindsight unavailable).")


def _record(decision, base_revision: int, snapshot) -> None:
    """Record (and, when Hindsight is up, deliver) one decision made on `base_revision`; toast the outcome
    and open the next unreviewed case."""
    if not access.require("decide"):  # the rule, not only the hidden form
        return
    if not may_decide(casework, bank, KIND, case.id, decision.reviewer):
        toast(f"Not recorded: {case.id} is claimed by another reviewer.", ok=False)
        return
    try:
        stored, report = outbox.submit(
            bank, decision, precedent_record(case, decision, rec), state.gateway().retain, base_revision=base_revision,
            evidence=snapshot,
        )  # fmt: skip
    except RevisionConflict as exc:
        st.session_state[CONFLICT] = {"case": case.id, "decision": decision, "snapshot": snapshot, "theirs": exc.theirs}
        st.rerun()
    state.bump_generation(bank, key)
    casework.release(bank, KIND, case.id, decision.reviewer)
    delivered = stored.state == "delivered"
    st.session_state[FLASH] = {
        "ok": delivered, "error": None if delivered else report.error,
        "message": (
            f"{case.id}: decision {decision.outcome} recorded (audit #{stored.id}) and retained into {bank} as {stored.document_id}."
            if delivered
            else f"{case.id}: decision {decision.outcome} recorded (audit #{stored.id}); it is delivered to memory when Hindsight answers."
        ),
    }  # fmt: skip
    advance(GOTO, ids, case.id, {*decided, case.id})
    st.session_state.pop(seen_key, None)
    st.rerun()


def _decision_area() -> None:
    conflict = st.session_state.get(CONFLICT)
    if conflict and conflict["case"] == case.id:
        theirs, mine_ = conflict["theirs"], conflict["decision"]
        choice = render_conflict(theirs, mine_, key=f"conflict_{case.id}")
        if choice == "keep_theirs":
            st.session_state.pop(CONFLICT)
            st.session_state.pop(seen_key, None)
            st.rerun()
        elif choice is not None:
            st.session_state.pop(CONFLICT)
            if choice == "escalate":
                mine_ = conflict_escalation(mine_, theirs.decision, decided_at=datetime.now(UTC))
            _record(mine_, theirs.revision, conflict["snapshot"])
        return
    if not access.can("decide"):
        st.info(f"Your role ({access.current_role()}) can read this case but not decide it.", icon=":material/visibility:")
        return
    reviewer_field()
    submitted = decision_form(case, rec, disabled=not free)
    if keys.approve and not submitted and free:
        submitted = quick_approval()
    if submitted:
        try:
            decision = exception_decision(
                case, rec, reviewer=submitted.reviewer, authenticated=submitted.authenticated, action=submitted.action,
                outcome=submitted.outcome, reason_code=submitted.reason_code, note=submitted.note,
            )  # fmt: skip
        except DecisionError as exc:
            toast(f"Not submitted: {exc}", ok=False)
            st.error(f"Not submitted: {md(exc)}", icon=":material/block:")
        else:
            _record(decision, seen_revision, evidence_snapshot(result, rec))


left, right = st.columns([3, 2], gap="large")
with left:
    render_recommendation(rec)
    with st.container(key="case_evidence"):  # the browser bench waits for this section's text
        if result is not None:
            render_evidence(result)
        else:
            render_evidence_unavailable(settings.base_url, recall_error)
    if result is not None and result.own_decision is not None:
        st.subheader("Your decision, as memory holds it")
        st.text(f"{result.own_decision.ref} (kept out of this case's evidence; it is evidence for the next case of this vendor and type)")
        st.text(result.own_decision.text)
with right:
    render_decided(stored_now)
    _decision_area()
    auto_advance_toggle()
    render_comments(casework, bank, KIND, case.id, me, lambda: access.require("decide"))
    st.subheader("Invoice and PO")
    render_case_facts(case, today)

with st.expander("How this was recalled", icon=":material/manage_search:"):
    st.number_input("Precedents to recall (k)", min_value=1, max_value=MAX_K, value=DEFAULT_K, key="exceptions_k")
    if result is not None:
        render_recall_details(result, case.id)
        if render_crowd_out(result, check_key=f"check_crowd_{case.id}_{k}"):
            st.session_state[f"crowd_{bank}_{case.id}_{k}"] = True
            st.rerun()
if result is not None:
    render_then_now(  # "now" lists this case's own decision too, flagged: it is what changed, never evidence
        state.then_now(bank, "exception", case.id, result.records + ([result.own_decision] if result.own_decision else [])),
        lambda r: "your decision (not evidence)" if r.ref == own else ("relevant" if is_relevant_ref(r, case.vendor_code, case.exception_type) else "not relevant"),
        key=f"then_now_{case.id}",
    )  # fmt: skip
