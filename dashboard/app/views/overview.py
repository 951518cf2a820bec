"""Stakeholder overview: queues, agreement, overrides, crowd-outs prevented, legacy admission, migration
coverage and recall latency in one screen. The numbers come from dashboard/overview_metrics.py."""

from datetime import date, timedelta

import streamlit as st

from components import overview_charts as charts
from dashboard.app import state
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import DEFAULT_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting import overview as overview_metrics
from dashboard.support import migration
from dashboard.support.models import Customer, Ticket

st.title("Overview")
st.caption("What reviewers and memory are doing: decisions in the date range; queues, recalls and coverage as of now.")

settings = state.settings()
log = state.recall_log()
problems = []


def _load(path, model, **kwargs):
    try:
        return load_rows(path, model, **kwargs)
    except QueueFileError as exc:
        problems.append(str(exc))
        return []


cases = _load(settings.exceptions_file, ExceptionCase)
tickets = _load(settings.tickets_file, Ticket)
customers = _load(settings.customers_file, Customer, id_field="name")
for problem in problems:
    st.error("A queue file could not be loaded:", icon=":material/error:")
    st.text(problem)

history = state.outbox().history()
today = date.today()
first_day = min((s.decision.decided_at.date() for s in history), default=today - timedelta(days=30))
reachable = state.connection_error() is None

with st.container(horizontal=True, vertical_alignment="bottom"):
    period = st.date_input("Decisions made between", value=(min(first_day, today), today), key="overview_period", width=320)
    recall_all = st.button("Recall the whole queue now", key="overview_recall_all", icon=":material/refresh:", disabled=not reachable,
                           help="Recall every queued exception and ticket (cached answers are reused), so every case counts below.")  # fmt: skip
    check_all = st.checkbox("with the crowd-out check where pass 2 was skipped (one extra recall each)", key="overview_check_all")
start, end = period if isinstance(period, tuple) and len(period) == 2 else (None, None)

if recall_all:
    failed = []
    bar = st.progress(0.0, text="Recalling the exception queue...")
    # The same concurrent loader and cache as the Exceptions page: cached cases cost nothing.
    loaded = state.load_queue(
        settings.finance_bank, cases, DEFAULT_K, progress=lambda done, total: bar.progress(done / total, text=f"Exceptions {done}/{total}")
    )  # fmt: skip
    if loaded["failed"]:
        failed.append(f"{loaded['failed']} exception(s) could not be recalled")
    for i, case in enumerate(cases if check_all else []):
        try:
            state.with_crowd_out(settings.finance_bank, CaseKey.of(case), case.recall_query(), DEFAULT_K, document_id_for(case.id))
        except HindsightError as exc:
            failed.append(f"{case.id}: {exc}")
        bar.progress((i + 1) / len(cases), text=f"Crowd-out check {case.id}")
    for j, ticket in enumerate(tickets):
        try:
            state.recall_ticket(settings.support_bank, ticket.customer, ticket.issue)
        except (HindsightError, ValueError) as exc:  # ValueError: a name no marker can be built from
            failed.append(f"{ticket.id}: {exc}")
        bar.progress((j + 1) / len(tickets), text=f"Tickets {j + 1}/{len(tickets)}")
    bar.empty()
    if failed:
        st.warning(f"{len(failed)} recall problem(s):", icon=":material/warning:")
        st.text("\n".join(failed[:20]))


@st.cache_data(ttl=60, show_spinner="Reading migration coverage...")
def _coverage(base_url: str, bank: str, _customers: list[Customer]) -> migration.Coverage:
    return migration.plan(state.gateway(), bank, _customers).coverage


coverage, coverage_error = None, None
if not reachable:
    coverage_error = "Hindsight is not reachable."
elif customers:
    try:
        coverage = _coverage(settings.base_url, settings.support_bank, customers)
    except HindsightError as exc:
        coverage_error = str(exc)

metrics = overview_metrics.build(
    history=history, bank_for={"exception": settings.finance_bank, "ticket": settings.support_bank},
    cases=cases, tickets=tickets,
    finance_results={c.id: log.finance_result(settings.finance_bank, c.vendor_code, c.exception_type, c.recall_query()) for c in cases},
    ticket_results={t.id: log.ticket_result(settings.support_bank, t.customer, t.issue) for t in tickets},
    latencies=log.latencies(), coverage=coverage, coverage_error=coverage_error, start=start, end=end,
)  # fmt: skip

charts.render_kpis(metrics)
left, right = st.columns(2)
with left:
    charts.render_queues(metrics)
    charts.render_overrides(metrics)
    charts.render_legacy(metrics)
with right:
    charts.render_agreement(metrics)
    charts.render_crowd_out(metrics)
    charts.render_coverage(metrics)
charts.render_latency(metrics, log.latencies())
