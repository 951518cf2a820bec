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

import streamlit as st

from components.safe_text import md
from dashboard.traces.request import P_OF, TraceRequest
from dashboard.traces.verdict import CaseFocus

TRACE_PAGE = "views/traces.py"  # relative to dashboard/app/main.py, as registered there


def trace_link(
    request: TraceRequest,
    label: str = "Trace",
    *,
    help: str | None = None,
    icon: str = ":material/troubleshoot:",
    case: tuple[str, str] | None = None,
    of: str | None = None,
) -> None:
    """Render a link to `request`'s trace on the Traces page. `case` ("case" or "ticket", its id) is the case the
    link is opened from, `of` its kind's key (QueueKind.key): the trace highlights its exact precedents (the kind's
    `focus`) and links back to it."""
    params = request.to_query_params()
    if case is not None:
        params[case[0]] = case[1]
    if of is not None:
        params[P_OF] = of
    st.page_link(
        TRACE_PAGE,
        label=label,
        icon=icon,
        query_params=params,
        help=help or "How this recall ranked what it found, arm by arm",
    )


def trace_url(request: TraceRequest, base: str = "") -> str:
    """The deep link as a URL path (for exports, logs or a copy button): `<base>/traces?bank=...`."""
    from urllib.parse import urlencode

    return f"{base.rstrip('/')}/traces?{urlencode(request.to_query_params(), doseq=True)}"


def link_back(focus: CaseFocus, page) -> None:
    """The way back from a trace to the case it was opened from (`page`: its page, whose deep link takes the id)."""
    st.page_link(
        page,
        label=f"Back to {focus.kind} {md(focus.id)}",
        icon=":material/arrow_back:",
        query_params={focus.kind: focus.id},
    )
