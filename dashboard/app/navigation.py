"""The pages: the fixed ones, and each registered queue kind's, in the registry's order. A kind's pages live in its
own package and are named by their scripts' paths, so the app imports none of them. A page's identity is its
url_path, so a link made here reaches the page main.py runs."""

from __future__ import annotations

import streamlit as st

from dashboard.app import resources
from dashboard.review.queue_kind import QueueKind


def _page(script, **how) -> st.Page:
    """A script relative to the app's folder, or an absolute path (every kind's page, in the kind's package)."""
    return st.Page(script if script.is_absolute() else str(script), **how)


def queue_page(kind: QueueKind) -> st.Page:
    """Its queue and case page: the kind's own script, or a few lines in the kind's package that call
    app/kind_page.py's render, the generic case page."""
    return _page(kind.page, title=kind.title, icon=kind.icon, url_path=kind.url_path)


def kind_pages(kind: QueueKind) -> list[st.Page]:
    """Its queue page, then the pages it offers beside it (support: the migration to tags)."""
    more = [_page(p.script, title=p.title, icon=p.icon, url_path=p.url_path) for p in getattr(kind, "more_pages", ())]
    return [queue_page(kind), *more]


def pages() -> list[st.Page]:
    kinds = [kind_pages(kind) for kind in resources.kinds()]
    return [
        st.Page("views/home.py", title="Home", icon=":material/home:", default=True),
        st.Page("views/overview.py", title="Overview", icon=":material/monitoring:", url_path="overview"),
        *kinds[0][:1],
        st.Page("views/traces.py", title="Recall traces", icon=":material/troubleshoot:", url_path="traces"),
        *kinds[0][1:],
        *(page for pages in kinds[1:] for page in pages),
        st.Page("views/audit.py", title="Audit log", icon=":material/history:", url_path="audit"),
        st.Page("views/incidents.py", title="Incidents", icon=":material/report:", url_path="incidents"),
        st.Page("views/glossary.py", title="Glossary", icon=":material/menu_book:", url_path="glossary"),
    ]
