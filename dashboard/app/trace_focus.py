"""The case a trace link was opened from (`?case=E-1003`, `?ticket=T-2004`), looked up in its kind's configured
queue: the trace highlights its exact evidence and links back to its page. An unknown id: no focus."""

from __future__ import annotations

from dashboard.app import navigation, resources
from dashboard.finance.kind import FINANCE
from dashboard.kinds import cases_of
from dashboard.queue_files import QueueFileError
from dashboard.review.queue_kind import QueueKind
from dashboard.support.kind import SUPPORT
from dashboard.traces.request import P_CASE, P_TICKET
from dashboard.traces.verdict import CaseFocus

LINKED = {P_CASE: FINANCE, P_TICKET: SUPPORT}  # a trace link's parameter -> the kind whose case it names


def case_focus(link: tuple[str, str] | None) -> CaseFocus | None:
    if link is None or link[0] not in LINKED:
        return None
    param, ident = link
    kind = LINKED[param]
    try:
        case = next((c for c in cases_of(resources.settings(), kind) if c.id == ident), None)
        if case is None:
            return None
        tags, about = kind.focus(case)
    except (QueueFileError, ValueError):
        return None
    return CaseFocus(kind=param, id=case.id, exact_tags=tags, about=about)


def page_of(focus: CaseFocus):
    """The page the focused case is reviewed on."""
    kind: QueueKind = LINKED[focus.kind]
    return navigation.queue_page(kind)
