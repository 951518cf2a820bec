import streamlit as st

from components.ab_view import render_ab_tab
from components.evidence_view import render_evidence_tab, render_knob_guide
from components.trace_link import trace_url
from components.trace_view import render_console, render_trace
from dashboard.app import state
from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.errors import HindsightError
from dashboard.hindsight.gateway import HindsightGateway
from dashboard.lab.ab import compare
from dashboard.lab.finance_set import demo_finance_cases
from dashboard.queue_files import load_rows
from dashboard.support.models import Ticket
from dashboard.traces.evidence import bench
from dashboard.traces.request import TraceRequest, TraceStore

STORE_KEY = "trace_store"
STORE_CAPACITY = 5

st.title("Recall traces")
st.caption(
    "Which retrieval arm put each memory where it is, whether one arm flooded the candidates, and what a "
    "per-source cap, a score gate or weighted fusion would have changed. A trace is fetched when you open it."
)

store: TraceStore = st.session_state.setdefault(STORE_KEY, TraceStore(STORE_CAPACITY))

try:
    linked = TraceRequest.from_query_params(st.query_params)
except ValueError as exc:
    linked = None
    st.error("This link does not name a recall that can be traced:", icon=":material/link_off:")
    st.code(str(exc), language=None)

submitted = render_console(linked, state.settings().finance_bank)
if submitted is not None:
    st.query_params.from_dict(submitted.to_query_params())  # the address bar becomes the deep link
    linked = submitted

recent = store.requests()
if linked is None and recent:
    linked = recent[0]

if linked is None:
    st.info("Run a query above, or open a trace from a recall on another page.", icon=":material/troubleshoot:")
    st.stop()

refresh = st.button("Run the recall again", key="trace_refresh", icon=":material/refresh:")
try:
    traced = store.get_or_fetch(state.gateway(), linked, refresh=refresh or submitted is not None)
except HindsightError as exc:
    st.error(f"Could not fetch the trace from Hindsight at {state.settings().base_url}.", icon=":material/error:")
    st.code(f"{type(exc).__name__}: {exc}", language=None)
    st.stop()

render_trace(traced, trace_url(linked))

# -- fusion lab (additive): evidence on a labelled set for this trace's bank, and the knob guide ------
st.divider()
tab_evidence, tab_ab, tab_knobs = st.tabs(["Evidence", "A/B", "Server knobs"])
with tab_evidence:
    render_evidence_tab(
        linked.bank,
        finance_cases=lambda: demo_finance_cases(state.settings().exceptions_file),
        run_bench=lambda bank, cases, k, progress: bench(state.gateway(), bank, cases, k=k, progress=progress),
    )
with tab_ab:
    cfg = state.settings()

    def run_compare(a, b):
        cases, tickets = load_rows(cfg.exceptions_file, ExceptionCase), load_rows(cfg.tickets_file, Ticket)
        return compare(state.gateway(), cfg.finance_bank, cfg.support_bank, cases, tickets, a, b,
                       open_gateway=lambda url: HindsightGateway(url, cfg.api_key))  # fmt: skip

    render_ab_tab(run_compare)
with tab_knobs:
    render_knob_guide()
