"""Stakeholder overview: a one-line headline, then queues, agreement, overrides, crowd-outs caught, the agent's
recommendations, legacy records, incidents, migration coverage and recall latency. The figures come from the
review store (decisions and the per-case flags kept as cases are recalled), computed by
dashboard/reporting/overview.py; cases never measured are measured once, on the first visit."""

from datetime import date, timedelta

import streamlit as st

from components import overview_charts as charts
from dashboard.agents.incidents import INCIDENTS_KEY
from dashboard.app import state
from dashboard.finance import flags as finance_flags
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import DEFAULT_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting import overview as overview_metrics
from dashboard.support import flags as ticket_flags
from dashboard.support import migration
from dashboard.support.models import Customer, Ticket

st.title("Overview")
st.caption("What reviewers, agents and memory are doing: decisions in the date range; queues, flags and coverage as of now.")

settings = state.settings()
log = state.recall_log()
problems = []
modes = state.memory_modes(settings.banks)
st.text("Memory: " + "; ".join(f"{bank}: {mode.label if mode else 'not reachable'}" for bank, mode in modes.items()) + ".")


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

headline_slot = st.container()  # the one-line story comes first; it is written once the figures are known
with st.container(horizontal=True, vertical_alignment="bottom"):
    period = st.date_input("Decisions made between", value=(min(first_day, today), today), key="overview_period", width=320)
    recall_all = st.button("Recall the whole queue now", key="overview_recall_all", icon=":material/refresh:", disabled=not reachable,
                           help="Recall every queued exception and ticket (cached answers are reused), so every case counts below.")  # fmt: skip
    check_all = st.checkbox("with the crowd-out check where pass 2 was skipped (one extra recall each)", key="overview_check_all")
start, end = period if isinstance(period, tuple) and len(period) == 2 else (None, None)


def _stored_flags():
    return state.case_flags(settings.finance_bank, "exception"), state.case_flags(settings.support_bank, "ticket")


finance_stored, ticket_stored = _stored_flags()
unmeasured = [c for c in cases if finance_flags.stored(finance_stored.get(c.id)) is None]
unmeasured_tickets = [t for t in tickets if ticket_flags.stored(ticket_stored.get(t.id)) is None]
never_checked = not any(INCIDENTS_KEY in f for f in (*finance_stored.values(), *ticket_stored.values()))
if reachable and (unmeasured or unmeasured_tickets or never_checked) and not st.session_state.get("overview_measured"):
    # First visit with cases no instance has measured yet (e.g. a queue file just changed): measure them once,
    # with the same concurrent loader and cache as the Exceptions page. Their flags land in the review store.
    st.session_state["overview_measured"] = True
    with st.status("Measuring the cases no one has recalled yet...", expanded=False) as measuring:
        if unmeasured:
            state.load_queue(settings.finance_bank, unmeasured, DEFAULT_K)
        for ticket in unmeasured_tickets:
            try:
                state.recall_ticket(settings.support_bank, ticket.customer, ticket.issue)
            except (HindsightError, ValueError):  # shown as "not measured"; the Tickets page says why
                pass
        if never_checked:
            try:
                state.incidents((settings.finance_bank, settings.support_bank))
            except HindsightError:
                pass
        measuring.update(label="Measured the cases no one had recalled yet.", state="complete")
    finance_stored, ticket_stored = _stored_flags()

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
    finance_stored, ticket_stored = _stored_flags()


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

incident_kinds = {("exception", c.id): finance_stored.get(c.id, {}).get(INCIDENTS_KEY) for c in cases}
incident_kinds |= {("ticket", t.id): ticket_stored.get(t.id, {}).get(INCIDENTS_KEY) for t in tickets}
metrics = overview_metrics.build(
    history=history, bank_for={"exception": settings.finance_bank, "ticket": settings.support_bank},
    cases=cases, tickets=tickets,
    finance_flags={c.id: finance_flags.stored(finance_stored.get(c.id)) for c in cases},
    ticket_flags={t.id: ticket_flags.stored(ticket_stored.get(t.id)) for t in tickets},
    incident_kinds=incident_kinds, agent_tally=state.agent_runs().tally([settings.finance_bank, settings.support_bank]),
    latencies=log.latencies(), coverage=coverage, coverage_error=coverage_error, start=start, end=end,
)  # fmt: skip

with headline_slot:
    charts.render_headline(metrics)
charts.render_kpis(metrics)
left, right = st.columns(2)
with left:
    charts.render_queues(metrics)
    charts.render_recommendations(metrics)
    charts.render_overrides(metrics)
    charts.render_legacy(metrics)
with right:
    charts.render_agreement(metrics)
    charts.render_crowd_out(metrics)
    charts.render_incidents(metrics)
    charts.render_coverage(metrics)
charts.render_latency(metrics, log.latencies())
