"""The case a trace link was opened from (`?case=D-3001&of=disputes`: a case of any registered kind; `?case=E-1003`
and `?ticket=T-2004`, links without `of`: a finance case, a ticket), looked up in its kind's configured queue: the trace
highlights its exact evidence (the kind's `focus`) and links back to its page. An unknown kind or id: no focus."""

from __future__ import annotations

import streamlit as st

from dashboard.app import navigation, resources
from dashboard.kinds import KindError, by_key, cases_of
from dashboard.lab.suggestions import Classify, case_classifier, plain_classifier, ticket_classifier
from dashboard.queue_files import QueueFileError
from dashboard.review.queue_kind import QueueKind
from dashboard.support.admission import OWNERSHIP_WORDS, Ownership
from dashboard.support.customers import customer_tag
from dashboard.support.recall import customers_records, ownership_sentence
from dashboard.traces.request import P_CASE, P_TICKET, TracedRecall
from dashboard.traces.verdict import CaseFocus

LINKED = {P_CASE: "finance", P_TICKET: "support"}  # a link without `of`: its parameter -> the kind key it names


def _kind(param: str, of: str | None) -> QueueKind | None:
    try:
        return by_key(resources.settings(), of or LINKED[param])
    except (KindError, KeyError):
        return None


def _case(param: str, ident: str, of: str | None = None):
    kind = _kind(param, of)
    try:
        return None if kind is None else next((c for c in cases_of(resources.settings(), kind) if c.id == ident), None)
    except QueueFileError:
        return None


def case_focus(link: tuple[str, str] | None, of: str | None = None) -> CaseFocus | None:
    """The focus of the case `link` names, of the kind `of` names (QueueKind.focus: its exact evidence's tags)."""
    if link is None or link[0] not in LINKED:
        return None
    param, ident = link
    kind, case = _kind(param, of), _case(param, ident, of)
    if kind is None or case is None:
        return None
    try:
        tags, about = kind.focus(case)
    except ValueError:
        return None
    return CaseFocus(kind=param, id=case.id, exact_tags=tags, about=about, of=kind.key)


def judged(focus: CaseFocus | None, traced: TracedRecall) -> CaseFocus | None:
    """A ticket's focus with every candidate of the trace judged by the ticket page's own ownership rule (its tag, or
    an old record's first sentence), so the trace stars exactly the customer's records. Kept in the session per trace
    fetched: judging an old record reads its original text, a call each."""
    if focus is None or focus.kind != P_TICKET:
        return focus
    key = f"trace_owned:{focus.id}:{traced.fetched_at.isoformat()}:{traced.request.key()}"
    owned = st.session_state.get(key)
    if owned is None:
        ticket = _case(P_TICKET, focus.id)
        if ticket is None:
            return focus
        documents = {label.document_id: label.tags for label in traced.labels.values() if label.document_id}
        found = customers_records(traced.request.bank, ticket.customer, documents.items(), resources.gateway().document)
        owned = st.session_state[key] = {document: OWNERSHIP_WORDS[how] for document, how in found.items()}
    return focus.model_copy(update={"owned": owned})


def page_of(focus: CaseFocus):
    """The page the focused case is reviewed on."""
    return navigation.queue_page(_kind(focus.kind, focus.of))


def whose(focus: CaseFocus | None, bank: str, document_id: str, tags: tuple[str, ...]) -> str | None:
    """Opened from a ticket: whether `document_id` is its customer's, by the same rule as the ticket's page."""
    ticket = _case(P_TICKET, focus.id) if focus is not None and focus.kind == P_TICKET else None
    if ticket is None:
        return None
    return ownership_sentence(bank, ticket.customer, document_id, tags, resources.gateway().document)


def classifier(focus: CaseFocus | None, bank: str) -> Classify:
    """How a fix's extra documents are judged against the case the trace came from (the case's page's rule)."""
    ticket = _case(P_TICKET, focus.id) if focus is not None and focus.kind == P_TICKET else None
    if ticket is not None:
        read = resources.gateway().document
        return ticket_classifier(
            lambda docs: set(customers_records(bank, ticket.customer, [(d.id, d.tags) for d in docs], read))
        )
    if focus is not None and focus.kind == P_CASE:
        return case_classifier(focus.exact_tags)
    return plain_classifier


def migrate_to(focus: CaseFocus | None, bank: str, document_id: str, tags: tuple[str, ...]) -> str | None:
    """The customer's tag, when `document_id` is an old untagged record proven the ticket's customer's (the safe fix)."""
    ticket = _case(P_TICKET, focus.id) if focus is not None and focus.kind == P_TICKET else None
    if ticket is None or tags:
        return None
    owned = customers_records(bank, ticket.customer, [(document_id, tags)], resources.gateway().document)
    return customer_tag(ticket.customer) if owned.get(document_id) is Ownership.FIRST_SENTENCE else None
