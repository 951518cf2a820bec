"""The served app: the Streamlit pages (main.py) and, on the same port, the agents' API at /api/v1 (docs/api.md); every
request to either names one of the app's own hosts or is refused (hosts.py).

`streamlit run dashboard/app/streamlit_app.py` finds `app` here (Streamlit 1.67 serves an `st.App` it is given), which is
how scripts/dashboard starts it. Its lifespan warms the process before the first session (serve.prepare: the app's
modules, the queues, the review store, then frozen out of the collector's scans), so the conventional start is as
fast as a launcher of our own.
"""

import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import streamlit as st
from starlette.middleware import Middleware
from starlette.routing import Mount

from dashboard.api.routes import api
from dashboard.app import serve, startup_checks
from dashboard.app.hosts import OwnHostsOnly
from dashboard.app.return_to import KeepPlaceAtSignIn


@asynccontextmanager
async def warmed(_app):
    try:
        startup_checks.settings_or_exit()
        startup_checks.exposure_or_exit()
        hosts = startup_checks.hosts_or_exit()
    except SystemExit as exc:  # said already; a server start-up failure would add a traceback and exit 3
        os._exit(exc.code)
    print(f"dashboard: answers to the host names {', '.join(hosts)} (RECALL_REVIEW_ALLOWED_HOSTS)", file=sys.stderr)
    startup_checks.say_webhook_targets()
    print(
        f"dashboard: warmed in {serve.prepare():.1f} s (the app's modules, the queues, the review store)",
        file=sys.stderr,
    )
    serve.start_delivery()  # from the start, not the first page run: a decision made meanwhile elsewhere is sent too
    async with agents_api.router.lifespan_context(agents_api):  # its MCP tools' sessions (api/mcp_tools.py)
        yield


agents_api = api()
app = st.App(
    Path(__file__).with_name("main.py"),
    routes=[Mount("/api/v1", app=agents_api)],
    lifespan=warmed,
    # Every route, Streamlit's own too: only the names the operator chose; then a sign-in returns to the page it left.
    middleware=[Middleware(OwnHostsOnly), Middleware(KeepPlaceAtSignIn)],
)
