"""Streamlit entry point: `streamlit run dashboard/app.py`."""

import streamlit as st

st.set_page_config(page_title="Recall Review", page_icon=":material/fact_check:", layout="wide")

PAGES = [
    st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
    st.Page("pages/exceptions.py", title="Finance exceptions", icon=":material/receipt_long:", url_path="exceptions"),
    st.Page("pages/traces.py", title="Recall traces", icon=":material/troubleshoot:", url_path="traces"),
    st.Page("pages/tickets.py", title="Support tickets", icon=":material/support_agent:", url_path="tickets"),
    st.Page("pages/migration.py", title="Migration to tags", icon=":material/label:", url_path="migration"),
]

st.navigation(PAGES).run()
