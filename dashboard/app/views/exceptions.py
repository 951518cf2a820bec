"""Finance exceptions: the queue, and for one case its facts, evidence, recommendation and decision."""

from datetime import UTC, date, datetime

import streamlit as st

from components.conflict import render_conflict
from components.decision_form import OVERRIDE, decision_form, quick_approval
from components.evidence import (
    render_case_facts,
    render_crowd_out,
    render_decided,
    render_evidence,
    render_recommendation,
)
from components.review_keys import review_keys
from components.safe_text import md
from components.status_banner import render_evidence_unavailable
from components.then_now import render_then_now
from dashboard.agents.incidents import is_relevant_ref
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
PRELOAD = 200  # visible cases whose recalls load with the queue

st.title("Finance exceptions")
st.caption("Exact precedents (this vendor AND this type) apart from broader ones; approve or override the agent.")

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
decided = decisions_by_case(outbox, bank)

f1, f2, f3, f4 = st.columns(4)
vendors = f1.multiselect("Vendor", sorted({c.vendor_code for c in cases}), key="filter_vendor")
types = f2.multiselect("Type", list(EXCEPTION_TYPES), key="filter_type")
statuses = f3.multiselect("Status", list(exception_queue.STATUSES), key="filter_status")
sort = f4.selectbox("Sort", list(exception_queue.SORTS), key="queue_sort")
shown = exception_queue.select(cases, decided, vendors=vendors, types=types, statuses=statuses, sort=sort)
event = st.dataframe(
    exception_queue.queue_frame(shown, decided, today), key=QUEUE_KEY, on_select="rerun", selection_mode="single-row",
    hide_index=True, width="stretch",
    column_config={"invoice amount": st.column_config.NumberColumn(format="%.2f"), "variance": st.column_config.NumberColumn(format="%+.2f")},
)  # fmt: skip
st.caption(f"{len(shown)} of {len(cases)} exceptions; {sum(1 for c in cases if c.id in decided)} decided. Select a row to review it.")

# Load the visible queue's recalls (no traces; 1-2 calls per case, at most 4 in flight) into the cache the
# case view reads: opening a loaded case makes no network call. Beyond PRELOAD cases, on request.
queue_k = int(st.session_state.get("exceptions_k", DEFAULT_K))
to_load = shown if len(shown) <= PRELOAD or st.session_state.get("exceptions_load_all") else shown[:PRELOAD]
if len(shown) > PRELOAD and not st.session_state.get("exceptions_load_all"):
    st.button(f"Load recalls for all {len(shown)} visible cases (the first {PRELOAD} load automatically)", key="exceptions_load_all")
bar = st.empty()
if state.connection_error() is None:  # offline: the banner says so; don't retry every case on every rerun
    loaded = state.load_queue(
        bank, to_load, queue_k, progress=lambda done, total: bar.progress(done / total, text=f"Recalling precedents: {done} of {total} cases")
    )  # fmt: skip
else:
    loaded = {"failed": 0}
bar.empty()
if loaded["failed"]:
    st.warning(f"Recall failed for {loaded['failed']} of {len(to_load)} cases; they are recalled again when opened.", icon=":material/error:")

case, problem = exception_queue.resolve_case(shown, list(event.selection.rows), st.query_params.get("case"))
if problem:
    st.warning("The linked exception is not in the queue (or is filtered out).", icon=":material/link_off:")
    st.text(problem)
if case is None:
    st.stop()
if st.query_params.get("case") != case.id:
    st.query_params["case"] = case.id  # a shareable deep link to this case

st.divider()
st.header(md(f"{case.id}: {case.vendor_code} {case.exception_type.replace('_', ' ')}"))
keys = review_keys([c.id for c in shown], case.id, table_key=QUEUE_KEY, param="case", prefix="exc", override_state=("decision_choice", OVERRIDE))
flash = st.session_state.pop(FLASH, None)
if flash and flash["case"] == case.id:
    (st.success if flash["ok"] else st.warning)(md(flash["message"]), icon=":material/save:")
    if flash.get("error"):
        st.text(f"delivery error: {flash['error']}")
render_decided(decided.get(case.id))
# The revision this page showed the reviewer: a submit is made on it, so a decision that landed since is a conflict.
seen_key = f"exc_seen_{bank}_{case.id}"
current_revision = decided[case.id].revision if case.id in decided else 0
seen_revision = st.session_state.get(seen_key, current_revision)
st.session_state[seen_key] = current_revision

k = int(st.number_input("Precedents to recall (k)", min_value=1, max_value=MAX_K, value=DEFAULT_K, key="exceptions_k"))
key = CaseKey.of(case)
result = None
own = document_id_for(case.id)  # this case's own decision: shown apart, never its evidence
try:
    result = state.recall_case(bank, key, case.recall_query(), k, own)
    if result.crowd_out is None and st.session_state.get(f"crowd_{bank}_{case.id}_{k}"):
        result = state.with_crowd_out(bank, key, case.recall_query(), k, own)
except HindsightError as exc:
    # The decision never depends on a recall: say the evidence is unavailable and keep the form.
    render_evidence_unavailable(settings.base_url, exc)
if result is not None:
    result, rec = assess(result)
else:
    rec = no_evidence_recommendation("the recall could not run (Hindsight unavailable).")

left, right = st.columns([2, 3])
with left:
    render_case_facts(case, today)
with right:
    render_recommendation(rec)
    if result is not None and render_crowd_out(result, check_key=f"check_crowd_{case.id}_{k}"):
        st.session_state[f"crowd_{bank}_{case.id}_{k}"] = True
        st.rerun()
if result is not None:
    if result.own_decision is not None:
        st.subheader("Your decision, as memory holds it")
        st.text(f"{result.own_decision.ref} (kept out of this case's evidence; it is evidence for the next case of this vendor and type)")
        st.text(result.own_decision.text)
    render_evidence(result, case.id)
    render_then_now(  # "now" lists this case's own decision too, flagged: it is what changed, never evidence
        state.then_now(bank, "exception", case.id, result.records + ([result.own_decision] if result.own_decision else [])),
        lambda r: "your decision (not evidence)" if r.ref == own else ("relevant" if is_relevant_ref(r, case.vendor_code, case.exception_type) else "not relevant"),
        key=f"then_now_{case.id}",
    )  # fmt: skip


def _record(decision, base_revision: int, snapshot) -> None:
    """Record (and, when Hindsight is up, deliver) one decision made on `base_revision`; flash the outcome."""
    if not access.require("decide"):  # the rule, not only the hidden form
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
    delivered = stored.state == "delivered"
    st.session_state[FLASH] = {
        "case": case.id, "ok": delivered, "error": None if delivered else report.error,
        "message": (
            f"Decision {decision.outcome} recorded (audit #{stored.id}) and retained into {bank} as {stored.document_id}."
            if delivered
            else f"Decision {decision.outcome} recorded (audit #{stored.id}); it is delivered to memory when Hindsight answers."
        ),
    }  # fmt: skip
    st.session_state.pop(seen_key, None)
    st.rerun()


st.subheader("Your decision")
conflict = st.session_state.get(CONFLICT)
if conflict and conflict["case"] == case.id:
    theirs, mine = conflict["theirs"], conflict["decision"]
    choice = render_conflict(theirs, mine, key=f"conflict_{case.id}")
    if choice == "keep_theirs":
        st.session_state.pop(CONFLICT)
        st.session_state.pop(seen_key, None)
        st.rerun()
    elif choice is not None:
        st.session_state.pop(CONFLICT)
        if choice == "escalate":
            mine = conflict_escalation(mine, theirs.decision, decided_at=datetime.now(UTC))
        _record(mine, theirs.revision, conflict["snapshot"])
    st.stop()
if not access.can("decide"):
    st.info(f"Your role ({access.current_role()}) can read this case but not decide it.", icon=":material/visibility:")
    st.stop()
submitted = decision_form(case, rec)
if keys.approve and not submitted:
    submitted = quick_approval()
if submitted:
    try:
        decision = exception_decision(
            case, rec, reviewer=submitted.reviewer, authenticated=submitted.authenticated, action=submitted.action,
            outcome=submitted.outcome, reason_code=submitted.reason_code, note=submitted.note,
        )  # fmt: skip
    except DecisionError as exc:
        st.error(f"Not submitted: {md(exc)}", icon=":material/block:")
    else:
        _record(decision, seen_revision, evidence_snapshot(result, rec))
