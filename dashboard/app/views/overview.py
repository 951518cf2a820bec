"""Stakeholder overview: a one-line headline, then queues, agreement, overrides, crowd-outs caught, the agent's
recommendations, legacy records, incidents, migration coverage and recall latency. The figures come from the
review store (decisions and the per-case flags kept as cases are recalled), computed by
dashboard/reporting/overview.py; cases never measured are measured once, on the first visit."""

from datetime import date, timedelta

import streamlit as st

from components import overview_charts as charts
from components.label_quality import render_label_quality
from components.review_agreement import render_calibration, render_reviewer_agreement
from dashboard.agents.incidents import INCIDENTS_KEY
from dashboard.app import audit, finance_recalls, resources, ticket_recalls
from dashboard.finance import flags as finance_flags
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import DEFAULT_K, CaseKey
from dashboard.hindsight.errors import HindsightError
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.agents.labelled_cases import from_store
from dashboard.reporting import agreement
from dashboard.reporting import overview as overview_metrics
from dashboard.reporting.label_quality import case_attributes, label_quality
from dashboard.support import flags as ticket_flags
from dashboard.support.models import Customer, Ticket


def _stored_flags(settings):
    casework = resources.casework()
    return casework.flags(settings.finance_bank, "exception"), casework.flags(settings.support_bank, "ticket")


def measure(settings, cases, tickets, *, check: bool, progress=None) -> list[str]:
    """Recall the queues (cached answers are reused) so every case counts; returns the problems met."""
    failed = []
    loaded = finance_recalls.load_queue(settings.finance_bank, cases, DEFAULT_K, progress=progress)
    if loaded["failed"]:
        failed.append(f"{loaded['failed']} exception(s) could not be recalled")
    for case in cases if check else []:
        try:
            finance_recalls.recall_case(settings.finance_bank, CaseKey.of(case), case.recall_query(), DEFAULT_K, document_id_for(case.id), check=True)
        except HindsightError as exc:
            failed.append(f"{case.id}: {exc}")
    for ticket in tickets:
        try:
            ticket_recalls.recall_ticket(settings.support_bank, ticket.customer, ticket.issue)
        except (HindsightError, ValueError) as exc:  # ValueError: a name no marker can be built from
            failed.append(f"{ticket.id}: {exc}")
    return failed


def coverage_of(settings, customers, reachable: bool):
    if not reachable:
        return None, "Hindsight is not reachable."
    if not customers:
        return None, None
    try:
        return ticket_recalls.legacy_plan(settings.support_bank, customers).coverage, None
    except HindsightError as exc:
        return None, str(exc)


def page() -> None:
    st.title("Overview")
    st.caption("What reviewers, agents and memory are doing: decisions in the date range; queues, flags and coverage as of now.")
    settings = resources.settings()
    modes = resources.memory_modes(settings.banks)
    st.text("Memory: " + "; ".join(f"{bank}: {mode.label if mode else 'not reachable'}" for bank, mode in modes.items()) + ".")
    problems = []

    def load(path, model, **kwargs):
        try:
            return load_rows(path, model, **kwargs)
        except QueueFileError as exc:
            problems.append(str(exc))
            return []

    cases, tickets = load(settings.exceptions_file, ExceptionCase), load(settings.tickets_file, Ticket)
    customers = load(settings.customers_file, Customer, id_field="name")
    for problem in problems:
        st.error("A queue file could not be loaded:", icon=":material/error:")
        st.text(problem)

    history = resources.outbox().history()
    today = date.today()
    # at least the last 30 days, and back to the first decision when there are older ones
    first_day = min((s.decision.decided_at.date() for s in history), default=today)
    first_day = min(first_day, today - timedelta(days=30))
    reachable = resources.connection_error() is None
    headline = st.container()  # the one-line story comes first; it is written once the figures are known
    with st.container(horizontal=True, vertical_alignment="bottom"):
        period = st.date_input("Decisions made between", value=(first_day, today), key="overview_period", width=320)
        recall_all = st.button("Recall the whole queue now", key="overview_recall_all", icon=":material/refresh:", disabled=not reachable,
                               help="Recall every queued exception and ticket (cached answers are reused), so every case counts below.")
        check_all = st.checkbox("also check whether a plain search would miss precedents where the wider search was skipped (one extra recall each)",
                                key="overview_check_all")
    start, end = period if isinstance(period, tuple) and len(period) == 2 else (None, None)

    finance_stored, ticket_stored = _stored_flags(settings)
    unmeasured = [c for c in cases if finance_flags.stored(finance_stored.get(c.id)) is None]
    unmeasured_tickets = [t for t in tickets if ticket_flags.stored(ticket_stored.get(t.id)) is None]
    never_checked = not any(INCIDENTS_KEY in f for f in (*finance_stored.values(), *ticket_stored.values()))
    if reachable and (unmeasured or unmeasured_tickets or never_checked) and not st.session_state.get("overview_measured"):
        # First visit with cases no instance has measured yet (e.g. a queue file just changed): measure them once.
        st.session_state["overview_measured"] = True
        with st.status("Measuring the cases no one has recalled yet...", expanded=False) as measuring:
            measure(settings, unmeasured, unmeasured_tickets, check=False)
            if never_checked:
                try:
                    audit.incidents(settings.banks)
                except HindsightError:
                    pass
            measuring.update(label="Measured the cases no one had recalled yet.", state="complete")
        finance_stored, ticket_stored = _stored_flags(settings)
    if recall_all:
        bar = st.progress(0.0, text="Recalling the exception queue...")
        failed = measure(settings, cases, tickets, check=check_all, progress=lambda done, total: bar.progress(done / total, text=f"Exceptions {done}/{total}"))
        bar.empty()
        if failed:
            st.warning(f"{len(failed)} recall problem(s):", icon=":material/warning:")
            st.text("\n".join(failed[:20]))
        finance_stored, ticket_stored = _stored_flags(settings)

    coverage, coverage_error = coverage_of(settings, customers, reachable)
    incident_kinds = {("exception", c.id): finance_stored.get(c.id, {}).get(INCIDENTS_KEY) for c in cases}
    incident_kinds |= {("ticket", t.id): ticket_stored.get(t.id, {}).get(INCIDENTS_KEY) for t in tickets}
    log = resources.recall_log()
    metrics = overview_metrics.build(
        history=history, bank_for={"exception": settings.finance_bank, "ticket": settings.support_bank},
        cases=cases, tickets=tickets,
        finance_flags={c.id: finance_flags.stored(finance_stored.get(c.id)) for c in cases},
        ticket_flags={t.id: ticket_flags.stored(ticket_stored.get(t.id)) for t in tickets},
        incident_kinds=incident_kinds, agent_tally=resources.agent_runs().tally(list(settings.banks)),
        latencies=log.latencies(), coverage=coverage, coverage_error=coverage_error, start=start, end=end,
        waiting=resources.decisions().approvals.waiting(),
        curation=resources.curation().counts(*overview_metrics.day_bounds(start, end)),
    )
    with headline:
        charts.render_headline(metrics)
    charts.render_kpis(metrics)
    left, right = st.columns(2)
    with left:
        charts.render_queues(metrics)
        charts.render_approvals_waiting(metrics)
        charts.render_recommendations(metrics)
        charts.render_overrides(metrics)
        charts.render_legacy(metrics)
    with right:
        charts.render_agreement(metrics)
        render_reviewer_agreement(agreement.agreements(resources.decisions().agreement_counts()))
        render_calibration(agreement.calibration(resources.decisions().calibration_counts(settings.finance_bank)))
        charts.render_crowd_out(metrics)
        charts.render_incidents(metrics)
        charts.render_coverage(metrics)
    charts.render_latency(metrics, log.latencies())
    labelled = [c for bank in settings.banks for c in from_store(resources.relevance_labels(), resources.agent_runs(), bank)]
    render_label_quality(label_quality(labelled, case_attributes(cases, tickets, customers), DEFAULT_K), DEFAULT_K)


page()
