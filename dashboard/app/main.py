"""Streamlit entry point: `streamlit run dashboard/app/main.py` (scripts/dashboard runs it warmed: serve.py)."""

from pathlib import Path

import streamlit as st

from components.status_banner import render_status_banner
from dashboard.app import access, navigation, resources
from dashboard.app.background import background

# The tab icon ships with the app (a ":material/...:" page icon is fetched from an internet font host).
PAGE_ICON = Path(__file__).parent / "assets" / "page_icon.svg"
st.set_page_config(page_title="Recall Review", page_icon=str(PAGE_ICON), layout="wide")

page = st.navigation(navigation.pages())  # one page per registered queue kind (dashboard/kinds.py)
access.render_sign_in()
resources.worker()  # delivery runs in this thread, never in a page run
outbox = resources.outbox()
# One slot, drawn on every run whether it says anything or not: the banners come and go with what other sessions do (a
# decision waiting for delivery), and each one drawn straight in the page moved everything under it. A fragment's
# identity is its place in the page, so the open case's fragment then changed identity between two runs, and Streamlit
# dropped a key or a typed value the browser sent to the one it had drawn (seen: a reviewer's first J and their name
# lost while another reviewer decided).
with st.container(key="status_banner"):
    render_status_banner(
        resources.connection_error(),
        resources.settings().base_url,
        outbox.pending_count(),
        resources.deliver_now if access.can("deliver_now") else None,
        failed=outbox.failed_count(),
    )
with background().page_run():  # the background's recalls wait for it
    page.run()
