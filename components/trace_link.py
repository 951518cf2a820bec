"""Link any recall to its trace on the Traces page.

Usage on another page, next to a recall it made:

    from components.trace_link import trace_link
    from dashboard.trace_request import TraceRequest

    trace_link(TraceRequest(bank=bank, query=query, tags=tuple(tags), tags_match="all_strict",
                            budget="mid", max_tokens=4096))

The link carries the recall in the URL's query parameters (a deep link one can share); the trace is
fetched only when someone opens it.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from components.safe_text import md
from dashboard.finance.models import ExceptionCase
from dashboard.finance.recall import CaseKey
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.support.customers import customer_tag
from dashboard.support.models import Ticket
from dashboard.traces.request import TraceRequest
from dashboard.traces.verdict import CaseFocus

TRACE_PAGE = "views/traces.py"  # relative to dashboard/app/main.py, as registered there


def trace_link(
    request: TraceRequest, label: str = "Trace", *, help: str | None = None, icon: str = ":material/troubleshoot:",
    case: tuple[str, str] | None = None,
) -> None:
    """Render a link to `request`'s trace on the Traces page. `case` ("case" or "ticket", its id) is the case the
    link is opened from: the trace highlights its exact precedents and links back to it."""
    params = request.to_query_params()
    if case is not None:
        params[case[0]] = case[1]
    st.page_link(
        TRACE_PAGE, label=label, icon=icon, query_params=params,
        help=help or "How this recall ranked what it found, arm by arm",
    )


def trace_url(request: TraceRequest, base: str = "") -> str:
    """The deep link as a URL path (for exports, logs or a copy button): `<base>/traces?bank=...`."""
    from urllib.parse import urlencode

    return f"{base.rstrip('/')}/traces?{urlencode(request.to_query_params(), doseq=True)}"


def case_focus(link: tuple[str, str] | None, exceptions_file: Path, tickets_file: Path) -> CaseFocus | None:
    """The case a trace link was opened from, looked up in the configured queues (an unknown id: no focus)."""
    if link is None:
        return None
    kind, ident = link
    try:
        if kind == "case":
            case = next((c for c in load_rows(exceptions_file, ExceptionCase) if c.id == ident), None)
            return case and CaseFocus(
                kind="case", id=case.id, exact_tags=tuple(CaseKey.of(case).tags),
                about=f"vendor {case.vendor_code}, {case.exception_type.replace('_', ' ')}",
            )
        ticket = next((t for t in load_rows(tickets_file, Ticket) if t.id == ident), None)
        return ticket and CaseFocus(kind="ticket", id=ticket.id, exact_tags=(customer_tag(ticket.customer),), about=ticket.customer)
    except (QueueFileError, ValueError):
        return None


def link_back(focus: CaseFocus) -> None:
    """The way back from a trace to the case or ticket it was opened from (their pages' deep links)."""
    page, label = ("views/exceptions.py", "case") if focus.kind == "case" else ("views/tickets.py", "ticket")
    st.page_link(page, label=f"Back to {label} {md(focus.id)}", icon=":material/arrow_back:", query_params={focus.kind: focus.id})
