"""Stakeholder overview: a one-line headline, then queues, agreement, overrides, crowd-outs caught, the agent's
recommendations, legacy records, incidents, migration coverage and recall latency. The figures come from the
review store (decisions and the per-case flags kept as cases are recalled), computed by
dashboard/reporting/overview.py and counted by the review store's database; cases never measured are measured once, on
the first visit, when they are few (a queue of 100,000 is measured by "Recall the whole queue now")."""

from datetime import date, timedelta

import streamlit as st

from components import overview_charts as charts
from components.label_quality import render_label_quality
from components.overview_layout import render_overview
from components.safe_text import md
from dashboard.agents.labelled_cases import from_store
from dashboard.app import audit, case_figures, overview_inputs, overview_measure, resources
from dashboard.finance.kind import FINANCE
from dashboard.finance.overview import MISSED_LISTED
from dashboard.finance.recall import DEFAULT_K
from dashboard.hindsight.errors import HindsightError
from dashboard.kinds import bank_of, cases_of
from dashboard.queue_files import QueueFileError, shared_rows
from dashboard.reporting import agreement
from dashboard.reporting import overview as overview_metrics
from dashboard.reporting.label_quality import case_attributes, label_quality
from dashboard.support import flags as ticket_flags
from dashboard.support.kind import SUPPORT
from dashboard.support.models import Customer

MEASURE_ON_VISIT = 200  # more unmeasured cases than this are measured on request, not by opening the page
WAITING_LISTED = 50  # the oldest approvals waiting, listed; the rest are counted


def page() -> None:
    st.title("Overview")
    settings = resources.settings()
    modes = resources.memory_modes(settings.banks)
    if resources.connection_error() is None:
        audit.keep_reading(settings.banks)  # the agents' recalls, read from Hindsight's audit log off this run
    audit.show_reading(settings.banks)  # a new store's first catch-up: how far it has got
    problems = []

    def load(read, *args, **kwargs):
        try:
            return read(*args, **kwargs)
        except QueueFileError as exc:
            problems.append(str(exc))
            return []

    kinds = resources.kinds()
    queued = {kind.name: load(cases_of, settings, kind) for kind in kinds}
    cases, tickets = queued[FINANCE.name], queued[SUPPORT.name]  # what the finance and support sections read
    customers = load(shared_rows, settings.customers_file, Customer, id_field="name")
    for problem in problems:
        st.error("A queue file could not be loaded:", icon=":material/error:")
        st.text(problem)

    outbox = resources.outbox()
    banks = {kind.name: bank_of(settings, kind) for kind in kinds}
    standing = {kind: outbox.standing_counts(bank, kind) for kind, bank in banks.items()}
    today = date.today()
    # at least the last 30 days, and back to the first decision when there are older ones
    first_day = min(overview_metrics.first_decision_day(standing) or today, today - timedelta(days=30))
    reachable = resources.connection_error() is None
    headline = st.container()  # the one-line story comes first; it is written once the figures are known
    with st.container(horizontal=True, vertical_alignment="bottom"):
        period = st.date_input("Decisions made between", value=(first_day, today), key="overview_period", width=320)
        recall_all = st.button(
            "Recall the whole queue now",
            key="overview_recall_all",
            icon=":material/refresh:",
            disabled=not reachable,
            help="Recall every queued exception and ticket (cached answers are reused), so every case counts below.",
        )
        check_all = st.checkbox(
            "also check the cases whose own precedents filled the list (one extra search each)",
            key="overview_check_all",
            help="Whether a single search over this vendor or this type would lose precedents, for the cases where "
            "the wider second search never ran",
        )
    start, end = period if isinstance(period, tuple) and len(period) == 2 else (None, None)

    finance_queue, ticket_queue = (
        overview_measure.finance_flags(settings, cases),
        overview_measure.ticket_flags(settings, tickets),
    )
    # a bank the server does not know (not created yet, or unreachable) has nothing to measure: no recall each visit
    unmeasured = set(finance_queue.unmeasured) if modes.get(settings.finance_bank) else set()
    unmeasured_tickets = set(ticket_queue.unmeasured) if modes.get(settings.support_bank) else set()
    never_checked = not (finance_queue.incidents_checked_anywhere or ticket_queue.incidents_checked_anywhere)
    few = len(unmeasured) + len(unmeasured_tickets) <= MEASURE_ON_VISIT
    if (
        reachable
        and ((few and (unmeasured or unmeasured_tickets)) or never_checked)
        and not st.session_state.get("overview_measured")
    ):
        # First visit with cases no instance has measured yet (e.g. a queue file just changed): measure them once.
        st.session_state["overview_measured"] = True
        with st.status("Measuring the cases no one has recalled yet...", expanded=False) as measuring:
            if few:
                overview_measure.measure(
                    settings,
                    [c for c in cases if c.id in unmeasured],
                    [t for t in tickets if t.id in unmeasured_tickets],
                    check=False,
                )
            if never_checked:
                try:
                    audit.incidents(settings.banks)
                except HindsightError:
                    pass
            measuring.update(label="Measured the cases no one had recalled yet.", state="complete")
        finance_queue, ticket_queue = (
            overview_measure.finance_flags(settings, cases),
            overview_measure.ticket_flags(settings, tickets),
        )  # the rows just written
    if recall_all:
        bar = st.progress(0.0, text="Recalling the exception queue...")
        failed = overview_measure.measure(
            settings,
            cases,
            tickets,
            check=check_all,
            progress=lambda done, total: bar.progress(done / total, text=f"Exceptions {done}/{total}"),
        )
        bar.empty()
        if failed:
            st.warning(f"{len(failed)} recall problem(s):", icon=":material/warning:")
            st.text("\n".join(failed[:20]))
        finance_queue, ticket_queue = (
            overview_measure.finance_flags(settings, cases),
            overview_measure.ticket_flags(settings, tickets),
        )
    never_recalled = len(finance_queue.unmeasured) + len(ticket_queue.unmeasured)
    if never_recalled and not few:
        st.info(
            f"{never_recalled:,} queued cases have never been recalled, so the flags below leave them out. "
            '"Recall the whole queue now" measures them, one recall each.',
            icon=":material/info:",
        )

    coverage, coverage_error = overview_measure.coverage_of(settings, customers, reachable)
    ticket_stored = resources.casework().flags(settings.support_bank, SUPPORT.name)
    log = resources.recall_log()
    waiting = [
        h
        for h in resources.decisions().approvals.waiting(limit=WAITING_LISTED)
        if h.stored.bank_id == banks.get(h.stored.case_kind)
    ]
    queues = overview_inputs.queues_of(kinds, queued, settings)
    metrics = overview_metrics.build(
        standing=standing,
        states={kind: outbox.decision_states(bank, kind) for kind, bank in banks.items()},
        held={kind: case_figures.held_now(bank, kind) for kind, bank in banks.items()},
        blind=[c for kind, bank in banks.items() for c in case_figures.blind_now(bank, kind)],
        **queues,
        **overview_inputs.sections(
            cases,
            tickets,
            finance=finance_queue.finance(),
            missed=finance_queue.missed(MISSED_LISTED),
            ticket_flags={t.id: ticket_flags.stored(ticket_stored.get(t.id)) for t in tickets},
            coverage=coverage,
        ),
        incidents={FINANCE.name: finance_queue.incidents(), SUPPORT.name: ticket_queue.incidents()},
        incident_cases={kind: case_figures.incident_cases(bank, kind) for kind, bank in banks.items()},
        agent_tally=resources.agent_runs().tally(list(settings.banks)),
        latencies=log.latencies(),
        coverage_error=coverage_error,
        start=start,
        end=end,
        waiting=waiting,
        curation=resources.curation().counts(*overview_metrics.day_bounds(start, end)),
    )
    with headline:  # the story and its four numbers: the first screen
        charts.render_headline(metrics)
        charts.render_headline_numbers(metrics)
    st.caption(
        "What reviewers, agents and memory are doing: decisions in the date range; queues, flags and coverage as of now."
    )
    render_overview(
        metrics,
        agreement.agreements(resources.decisions().agreement_counts()),
        agreement.calibration(resources.decisions().calibration_counts(settings.finance_bank, FINANCE.name)),
        log.latencies(),
    )
    labelled = [
        c for bank in settings.banks for c in from_store(resources.relevance_labels(), resources.agent_runs(), bank)
    ]
    render_label_quality(label_quality(labelled, case_attributes(queues["groups_of"], labelled), DEFAULT_K), DEFAULT_K)
    st.caption(
        "How memory is kept: "
        + md("; ".join(f"{bank}: {mode.plain if mode else 'not reachable'}" for bank, mode in modes.items()))
        + ".",
        help=md("; ".join(f"{bank}: {mode.label}" for bank, mode in modes.items() if mode)) or None,
    )


page()
