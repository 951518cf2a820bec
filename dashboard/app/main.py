"""Streamlit entry point: `streamlit run dashboard/app/main.py` (scripts/dashboard runs it warmed: serve.py)."""

from pathlib import Path

import streamlit as st

from components.status_banner import render_status_banner
from dashboard.app import access, resources
from dashboard.app.background import background

# The tab icon ships with the app (a ":material/...:" page icon is fetched from an internet font host).
PAGE_ICON = Path(__file__).parent / "assets" / "page_icon.svg"
st.set_page_config(page_title="Recall Review", page_icon=str(PAGE_ICON), layout="wide")

PAGES = [
    st.Page("views/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("views/overview.py", title="Overview", icon=":material/monitoring:", url_path="overview"),
    st.Page("views/exceptions.py", title="Finance exceptions", icon=":material/receipt_long:", url_path="exceptions"),
    st.Page("views/traces.py", title="Recall traces", icon=":material/troubleshoot:", url_path="traces"),
    st.Page("views/tickets.py", title="Support tickets", icon=":material/support_agent:", url_path="tickets"),
    st.Page("views/migration.py", title="Migration to tags", icon=":material/label:", url_path="migration"),
    st.Page("views/audit.py", title="Audit log", icon=":material/history:", url_path="audit"),
    st.Page("views/incidents.py", title="Incidents", icon=":material/report:", url_path="incidents"),
]

page = st.navigation(PAGES)
access.render_sign_in()
resources.worker()  # delivery runs in this thread, never in a page run
outbox = resources.outbox()
render_status_banner(
    resources.connection_error(), resources.settings().base_url, outbox.pending_count(),
    resources.deliver_now if access.can("deliver_now") else None, failed=outbox.failed_count(),
)
with background().page_run():  # the background's recalls wait for it
    page.run()
