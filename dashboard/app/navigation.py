"""The pages: the fixed ones, and one per registered queue kind, in the registry's order. A page's identity is its
url_path, so a link made here reaches the page main.py runs."""

from __future__ import annotations

import streamlit as st

from dashboard.app import resources
from dashboard.review.queue_kind import QueueKind


def queue_page(kind: QueueKind) -> st.Page:
    """Its page script: relative to the app's folder (the built-in kinds'), or a path in the kind's own package (a
    few lines that call app/kind_page.py's render, the generic case page)."""
    return st.Page(
        kind.page if kind.page.is_absolute() else str(kind.page),
        title=kind.title,
        icon=kind.icon,
        url_path=kind.url_path,
    )


def pages() -> list[st.Page]:
    queues = [queue_page(kind) for kind in resources.kinds()]
    return [
        st.Page("views/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("views/overview.py", title="Overview", icon=":material/monitoring:", url_path="overview"),
        *queues[:1],
        st.Page("views/traces.py", title="Recall traces", icon=":material/troubleshoot:", url_path="traces"),
        *queues[1:],
        st.Page("views/migration.py", title="Migration to tags", icon=":material/label:", url_path="migration"),
        st.Page("views/audit.py", title="Audit log", icon=":material/history:", url_path="audit"),
        st.Page("views/incidents.py", title="Incidents", icon=":material/report:", url_path="incidents"),
        st.Page("views/glossary.py", title="Glossary", icon=":material/menu_book:", url_path="glossary"),
    ]
