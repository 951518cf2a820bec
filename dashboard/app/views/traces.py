"""Recall traces: why the agent got back what it did, which retrieval arm filled the results, and what
another setting would have changed (the fusion lab). A trace runs only when a person presses a button."""

import streamlit as st
from pydantic import ValidationError

from components.glossary import TAGS_MATCH_WORDS, glossary_link
from components.safe_text import md
from components.trace_link import link_back, trace_url
from components.trace_view import render_console, render_trace
from components.why_not_view import render_why_not
from dashboard.app import access, resources, trace_focus
from dashboard.app.fusion_lab import show_lab
from dashboard.finance.kind import FINANCE
from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.errors import HindsightError
from dashboard.lab.blast_radius import DecidedChange, decided_changes
from dashboard.lab.fix_reach import altered, fix_report
from dashboard.lab.suggestions import Suggestion, suggestions
from dashboard.queue_files import load_rows
from dashboard.support.models import Ticket
from dashboard.traces.replay import ReplaySettings
from dashboard.traces.request import TraceRequest, TraceStore, case_of_link, kind_of_link, reachable
from dashboard.traces.request_problem import request_problem
from dashboard.traces.why_not import WhyNot, explain, find_documents, load_document

STORE_KEY = "trace_store"
STORE_CAPACITY = 5

st.title("Recall traces")
st.caption(
    "Why the agent got back what it did: which way of searching (meaning, keywords, linked memories, dates) "
    "filled the results, and what another setting would have changed. A trace runs only when you press a button."
)
glossary_link()  # the page keeps the technical words: each is said in plain words there


store: TraceStore = st.session_state.setdefault(STORE_KEY, TraceStore(STORE_CAPACITY))
banks = list(resources.settings().banks)

try:
    linked = TraceRequest.from_query_params(st.query_params)
except ValidationError as exc:  # one plain sentence naming the field, never pydantic's dump
    linked = None
    st.error(
        "This link does not name a recall that can be traced. " + md(request_problem(exc)), icon=":material/link_off:"
    )
if linked is not None and not reachable(linked, banks):
    # Nothing of another bank is shown or fetched, not even its name.
    linked = None
    st.error(
        "This link names a bank this dashboard is not configured for; it cannot be traced here.",
        icon=":material/block:",
    )

submitted = None
recent = store.requests()
if access.can("trace_any_query"):
    # Collapsed while there is a trace to read: the page opens on its verdict and charts, not on request fields.
    with st.expander(
        "Query console: trace any recall", icon=":material/terminal:", expanded=linked is None and not recent
    ):
        submitted = render_console(linked, banks)
else:
    st.caption("The query console is for leads; the trace links on the other pages open here.")
if submitted is not None and not (access.permitted("trace_any_query") and reachable(submitted, banks)):
    submitted = None
cfg = resources.settings()
focus = (
    None
    if submitted is not None
    else trace_focus.case_focus(case_of_link(st.query_params), kind_of_link(st.query_params))
)
if submitted is not None:
    st.query_params.from_dict(submitted.to_query_params())  # the address bar becomes the deep link
    linked = submitted

if linked is None and recent:
    linked = recent[0]

if linked is None:
    st.info("Run a query above, or open a trace from a recall on another page.", icon=":material/troubleshoot:")
    st.stop()

# A link never runs a recall on its own: a human reads what it asks for and presses the button. (One layout
# before and after the first run, so the trace's tabs keep their place and the open tab across reruns.)
fetched = submitted is not None or linked in store
if focus is not None:
    link_back(focus, trace_focus.page_of(focus))
st.text(f"Query: {linked.query}")
with st.expander("Details of this recall"):
    st.text(
        f"Bank (memory store): {linked.bank}\nTags: {', '.join(linked.tags) or '(none)'} (tags_match {linked.tags_match}: "
        f"{TAGS_MATCH_WORDS.get(linked.tags_match, '')})\n"
        f"Budget (how hard it searches): {linked.budget}   max_tokens (answer length limit): {linked.max_tokens}"
    )
pressed = st.button(
    "Run the recall again" if fetched else "Run this recall with a trace",
    key="trace_run",
    type="secondary" if fetched else "primary",
    icon=":material/refresh:" if fetched else ":material/play_arrow:",
)
if pressed and not access.permitted("trace"):
    st.stop()
if not fetched and not pressed:
    st.stop()
refresh = pressed or submitted is not None
try:
    traced = store.get_or_fetch(resources.gateway(), linked, refresh=refresh)
except HindsightError as exc:
    st.error("Could not fetch the trace from Hindsight.", icon=":material/error:")
    st.code(str(exc), language=None)  # the server's message, not an error class name
    st.stop()

focus = trace_focus.judged(focus, traced)
render_trace(traced, trace_url(linked), focus)


def why_not_box() -> None:
    """ "Why not this one?" on the trace shown: where a named document was lost and the change that brings it in."""
    if not access.can("trace"):
        st.caption("Why not this one? recalls again: it is for reviewers.")
        return
    gateway, request = resources.gateway(), traced.request

    def explain_one(document_id: str, k: int, knobs: ReplaySettings) -> tuple[WhyNot, list[Suggestion]] | None:
        if not access.permitted("trace"):
            st.stop()
        document = load_document(gateway, request.bank, document_id)
        if document is None:
            return None
        answer = explain(gateway, request, document, k, knobs, traced=traced)
        found = suggestions(
            answer,
            trace_focus.classifier(focus, request.bank),
            trace_focus.migrate_to(focus, request.bank, document.id, document.tags),
        )
        whose = trace_focus.whose(focus, request.bank, document.id, document.tags)
        return answer.model_copy(update={"whose": whose}), found

    def count_cases(answer: WhyNot, knobs: ReplaySettings) -> tuple[list[str], list[DecidedChange]]:
        if not access.permitted("trace"):
            st.stop()
        cases, tickets = load_rows(cfg.exceptions_file, ExceptionCase), load_rows(cfg.tickets_file, Ticket)
        report = fix_report(gateway, cfg.finance_bank, cfg.support_bank, cases, tickets, knobs, answer)
        decided = resources.outbox().decided_cases(cfg.finance_bank, FINANCE.name)
        return altered(report, exclude=focus.id if focus else None), decided_changes(
            report.diffs if report else [], decided
        )

    render_why_not(request.key(), lambda text: find_documents(gateway, request.bank, text), explain_one, count_cases)


why_not_box()


st.divider()
show_lab(linked.bank)
