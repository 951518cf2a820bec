import streamlit as st

from components.overview import render_banks, render_queues, render_server
from dashboard import runtime
from dashboard.overview import build_overview

st.title("Recall Review")
st.caption(
    "Check what agents recalled from Hindsight before they act: finance exceptions and support tickets, "
    "with the evidence, why each memory was admitted, and a human decision retained back into memory."
)

overview = build_overview(runtime.gateway(), runtime.settings())
render_server(overview.server)
left, right = st.columns(2)
with left:
    render_banks(overview.banks)
with right:
    render_queues(overview.queues)
