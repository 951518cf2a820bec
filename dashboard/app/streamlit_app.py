"""The served app: the Streamlit pages (main.py) and, on the same port, the agents' API at /api/v1 (docs/api.md).

`streamlit run dashboard/app/streamlit_app.py` finds `app` here (Streamlit 1.67 serves an `st.App` it is given);
scripts/dashboard runs it warmed (serve.py).
"""

from pathlib import Path

import streamlit as st
from starlette.routing import Mount

from dashboard.api.routes import api

app = st.App(Path(__file__).with_name("main.py"), routes=[Mount("/api/v1", app=api())])
