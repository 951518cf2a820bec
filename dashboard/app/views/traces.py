import streamlit as st

from components.trace_link import trace_url
from components.trace_view import render_console, render_trace
from dashboard.app import access, state
from dashboard.hindsight.errors import HindsightError
from dashboard.traces.request import TraceRequest, TraceStore, reachable

STORE_KEY = "trace_store"
STORE_CAPACITY = 5

st.title("Recall traces")
st.caption(
    "Which retrieval arm put each memory where it is, whether one arm flooded the candidates, and what a "
    "per-source cap, a score gate or weighted fusion would have changed. A trace runs only when you press a button."
)

store: TraceStore = st.session_state.setdefault(STORE_KEY, TraceStore(STORE_CAPACITY))
banks = list(state.settings().banks)

try:
    linked = TraceRequest.from_query_params(st.query_params)
except ValueError as exc:
    linked = None
    st.error("This link does not name a recall that can be traced:", icon=":material/link_off:")
    st.code(str(exc), language=None)
if linked is not None and not reachable(linked, banks):
    # Nothing of another bank is shown or fetched, not even its name.
    linked = None
    st.error("This link names a bank this dashboard is not configured for; it cannot be traced here.", icon=":material/block:")

submitted = None
if access.can("trace_any_query"):
    submitted = render_console(linked, banks)
else:
    st.caption("The query console is for leads; the trace links on the other pages open here.")
if submitted is not None and not (access.require("trace_any_query") and reachable(submitted, banks)):
    submitted = None
if submitted is not None:
    st.query_params.from_dict(submitted.to_query_params())  # the address bar becomes the deep link
    linked = submitted

recent = store.requests()
if linked is None and recent:
    linked = recent[0]

if linked is None:
    st.info("Run a query above, or open a trace from a recall on another page.", icon=":material/troubleshoot:")
    st.stop()

# A link never runs a recall on its own: a human reads what it asks for and presses the button. (One layout
# before and after the first run, so the trace's tabs keep their place and the open tab across reruns.)
fetched = submitted is not None or linked in store
st.text(
    f"Bank: {linked.bank}\nQuery: {linked.query}\nTags: {', '.join(linked.tags) or '(none)'} ({linked.tags_match})\n"
    f"Budget: {linked.budget}   max_tokens: {linked.max_tokens}"
)
pressed = st.button(
    "Run the recall again" if fetched else "Run this recall with a trace", key="trace_run",
    type="secondary" if fetched else "primary", icon=":material/refresh:" if fetched else ":material/play_arrow:",
)  # fmt: skip
if pressed and not access.require("trace"):
    st.stop()
if not fetched and not pressed:
    st.stop()
refresh = pressed or submitted is not None
try:
    traced = store.get_or_fetch(state.gateway(), linked, refresh=refresh)
except HindsightError as exc:
    st.error("Could not fetch the trace from Hindsight.", icon=":material/error:")
    st.code(f"{type(exc).__name__}: {exc}", language=None)
    st.stop()

render_trace(traced, trace_url(linked))
