"""The fusion lab under a trace: evidence on a labelled set for its bank, the A/B of two recall configurations
(leads only: it clones banks and may call another server) and the server knobs' guide. Reads the built-in kinds'
queue files for its sets, as the traces page does (issue 62)."""

from __future__ import annotations

import streamlit as st

from components.ab_view import render_ab_tab
from components.evidence_view import render_evidence_tab, render_knob_guide
from dashboard.agents.labelled_cases import from_store, review_set
from dashboard.app import access, resources
from dashboard.finance.kind import FINANCE
from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.lab.ab import compare
from dashboard.lab.finance_set import demo_finance_cases
from dashboard.queue_files import load_rows
from dashboard.support.models import Ticket
from dashboard.traces.evidence import bench


def show_lab(bank: str) -> None:
    """Evidence on a labelled set for the trace's bank, an A/B of two configurations (leads), and the knob guide."""
    cfg = resources.settings()

    def open_other(url: str) -> HindsightGateway:
        # Our API key goes to the configured server only, never to a URL typed into the page.
        return HindsightGateway(url, cfg.api_key if url.rstrip("/") == cfg.base_url else None)

    def run_compare(a, b):
        if not access.permitted("compare_configs"):  # clones banks and may call another server: leads only
            return None
        cases, tickets = load_rows(cfg.exceptions_file, ExceptionCase), load_rows(cfg.tickets_file, Ticket)
        return compare(
            resources.gateway(), cfg.finance_bank, cfg.support_bank, cases, tickets, a, b, open_gateway=open_other
        )

    tab_evidence, tab_ab, tab_knobs = st.tabs(["Evidence", "A/B", "Server knobs"])
    with tab_evidence:
        render_evidence_tab(
            bank,
            finance_cases=lambda: demo_finance_cases(cfg.exceptions_file),
            reviewed_cases=lambda: review_set(from_store(resources.relevance_labels(), resources.agent_runs(), bank))[
                0
            ],
            run_bench=lambda bank, cases, k, progress: (
                bench(resources.gateway(), bank, cases, k=k, progress=progress)
                if access.permitted("trace_any_query")
                else None
            ),
        )
    with tab_ab:
        if access.can("compare_configs"):
            render_ab_tab(run_compare, lambda: resources.outbox().decided_cases(cfg.finance_bank, FINANCE.name))
        else:
            st.caption("A/B comparisons clone banks and may call another server: they are for leads.")
    with tab_knobs:
        render_knob_guide()
