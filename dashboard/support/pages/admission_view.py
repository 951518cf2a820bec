"""Support audit pieces: a ticket's recall with a verdict and reason on every candidate, the decision
state, and the migration's coverage and per-record classification.

Memory text is untrusted: it is drawn only with st.dataframe / st.text, never through markdown. Text a
support lead reads (a record, why it was used or not) is wrapped text in full, never a grid cell that cuts it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import streamlit as st

from components.glossary import SUPPORT_TERMS, render_glossary
from components.safe_text import md
from components.status_banner import plain_error
from components.trace_link import trace_link
from components.when import local_time
from dashboard.delivery.outbox import StoredDecision
from dashboard.store.decision import decision_summary, outcome_words
from dashboard.support.admission import Verdict, marker
from dashboard.support.migration import Coverage, MigrationPlan, MigrationReport
from dashboard.support.recall import TicketEvidence, TicketRecall
from dashboard.traces.request import TraceRequest
from dashboard.trust.screen import Flag

PATH_TEXT = {
    "tagged": "Used this customer's tagged history. Their old untagged records were not searched.",
    "legacy": (
        "This customer has no tagged history yet: old untagged records were searched, and only those whose "
        "first sentence names this customer are used."
    ),
    "none": "No history used: this customer has no tagged records, and no old record proves it belongs to them.",
}
# The rule's verdicts in a support lead's words; the reason column keeps the rule's exact wording.
PLAIN_VERDICTS = {
    Verdict.ADMITTED: "used",
    Verdict.OTHER_CUSTOMER_MARKER: "not used: names another customer",
    Verdict.MARKER_NOT_AT_START: "not used: the customer is named only later in the text",
    Verdict.NO_MARKER: "not used: names no customer (e.g. a summary)",
    Verdict.TAGGED_FOR_OTHER: "not used: tagged for another customer",
    Verdict.TAGGED_FOR_THIS_CUSTOMER: "not used: tagged, belongs to the tagged history",
    Verdict.UNREADABLE: "not used: its original text could not be read",
    Verdict.OBSERVATION: "not used: a summary Hindsight built, no text of its own",
    Verdict.OBSERVATION_OWN: "used: every record behind it is this customer's",
    Verdict.OBSERVATION_MIXES: "not used: built partly from another customer's records",
}


def plain_verdict(verdict: str) -> str:
    try:
        return PLAIN_VERDICTS[Verdict(verdict)]
    except ValueError:
        return verdict


def record_card(
    ref: str,
    status: str,
    why: str,
    text: str,
    *,
    tags: list[str] | None = None,
    facts: Sequence[str] = (),
    below: Callable[[], None] | None = None,
    origin: str | None = None,
    flags: Sequence[Flag] = (),
) -> None:
    """One record read in full: its id and status beside why, its tags, who wrote it (`origin`, in words) and its
    text, wrapped (never cut); what the screen found in its text (`flags`); `below` draws what the page adds at the
    card's foot (a relevance label)."""
    with st.container(border=True):
        about, body = st.columns([2, 5])
        about.text(f"{ref}\n{status}")
        if tags is not None:
            about.text(f"Tags: {', '.join(tags) or '(untagged)'}")
        if origin is not None:
            about.text(f"Origin: {origin}")
        if flags:
            about.badge("flagged", color="red", icon=":material/gpp_bad:")
            body.text(
                "Flagged: " + "; ".join(f'{f.label} ("{f.phrase}")' for f in flags)
            )  # phrases from memory: literal text
        body.text(f"Why: {why}")
        body.text(text)
        for fact in facts:  # with an LLM: what the server rewrote the record into, and matched
            body.text(f"- {fact}")
        if below is not None:
            below()


Origins = Mapping[str, str]  # a record's ref -> who wrote it, in words (the page asks the review store)


def _cards(
    items: list[TicketEvidence], label: Callable[[str], None] | None = None, origins: Origins | None = None
) -> None:
    for e in items:
        below = (lambda d=e.document_id: label(d)) if label is not None and e.document_id else None
        record_card(
            e.ref,
            plain_verdict(e.verdict),
            e.reason,
            e.text,
            tags=e.tags,
            facts=e.facts,
            below=below,
            origin=(origins or {}).get(e.ref),
            flags=e.flags,
        )


def render_path(recall: TicketRecall) -> None:
    {"tagged": st.success, "legacy": st.warning, "none": st.info}[recall.path](PATH_TEXT[recall.path])


def render_observations(observations: list[TicketEvidence]) -> None:
    """The tagged recall's observations, each with its verdict and where it came from: fact, document, tags."""
    if not observations:
        return
    st.subheader(f"Summaries Hindsight built across records ({len(observations)})")
    st.caption("Observations the server consolidated. One is used only when every record behind it is this customer's.")
    for o in observations:
        with st.container(border=True):
            st.text(f"{plain_verdict(o.verdict)}. {o.reason}")
            st.text(o.text)
            for source in o.sources:
                where = f"{source.document_id or 'no document'} ({', '.join(source.tags) or 'untagged'})"
                whose = "this customer's" if source.owned else f"not proven this customer's: {source.reason}"
                st.text(f"from {where}, {whose}. Fact: {source.fact}")


def render_evidence(
    recall: TicketRecall, label: Callable[[str], None] | None = None, origins: Origins | None = None
) -> None:
    """What reached the ticket, and (when old records were searched) every candidate that did not, with why;
    `label(document id)` draws a used record's relevance label (the page's, dashboard.app.labelling); `origins`: who
    wrote each record, in words."""
    flagged = [e for e in recall.evidence if e.flags]
    if flagged:  # whatever path admitted them: said before the records
        st.warning(
            f"{len(flagged)} record(s) used for this ticket address the agent or claim an identity: "
            f"{md(', '.join(e.ref for e in flagged))}. Read them before sending.",
            icon=":material/gpp_maybe:",
        )
    if recall.path == "tagged":
        st.subheader(f"History used ({len(recall.tagged)})")
        _cards(recall.tagged, label, origins)
        render_observations(recall.observations)
        return
    st.subheader(f"Old records used ({len(recall.legacy_admitted)})")
    if recall.legacy_admitted:
        _cards(recall.legacy_admitted, label, origins)
    else:
        st.text("No old record proved it belongs to this customer.")
    st.subheader(f"Records found but not used ({len(recall.legacy_rejected)})")
    if not recall.legacy_rejected:
        return
    st.text(rejected_summary(recall.legacy_rejected))
    with st.expander("Each record, its text and why it was not used", icon=":material/visibility_off:"):
        st.caption("The search found them; none of them is this customer's by the rule, so none reaches the response.")
        _cards(recall.legacy_rejected, origins=origins)


def rejected_summary(rejected: Sequence[TicketEvidence]) -> str:
    """One line of verdicts for the records found but not used, most common first."""
    counts = Counter(plain_verdict(e.verdict).removeprefix("not used: ") for e in rejected)
    return "Not used because: " + "; ".join(f"{why} ({n})" for why, n in counts.most_common()) + "."


def render_how_recalled(recall: TicketRecall, bank_id: str, ticket_id: str | None = None, *, key: str) -> None:
    """The technical account (tags, tags_match, the fallback's candidate search), for who wants it: drawn only while
    open (`key` holds whether it is; opening it reruns the page), not on every key a reviewer presses."""
    details = st.expander("How this was recalled", key=key, on_change="rerun")
    if not details.open:
        return
    with details:
        render_glossary(SUPPORT_TERMS)
        st.text(f"Customer tag: {recall.tag}   memory store (bank): {bank_id}")
        for step, request in enumerate(recall.requests, 1):
            scope = (
                f"only records tagged {', '.join(request.tags)}, untagged ones left out (tags_match={request.tags_match})"
                if request.tags
                else "every record in the store, no tag filter (bank-wide)"
            )
            st.text(f"Search {step}: {scope}; query: {request.query}")
        if recall.path == "tagged":
            st.text(
                f"The search by tag returned {len(recall.tagged)} document(s), so old records were not searched (no legacy fallback)."
            )
        else:
            st.text(
                "The search by tag returned no document, so old records were searched (the legacy fallback), proposing "
                f"{len(recall.legacy_admitted) + len(recall.legacy_rejected)} candidates; each document is admitted only if "
                f"it is untagged and its original text starts with '{marker(recall.customer)}' (each name part escaped, "
                "flexible spaces, case-insensitive, anchored at the start). Observations are never admitted."
            )
        _trace_links(recall, bank_id, ticket_id)


def _trace_links(recall: TicketRecall, bank_id: str, ticket_id: str | None) -> None:
    names = ["Trace: tagged recall", "Trace: legacy candidate recall"]
    columns = st.columns(len(recall.requests) or 1)
    for column, name, request in zip(columns, names, recall.requests, strict=False):
        with column:
            trace_link(
                TraceRequest(
                    bank=bank_id,
                    query=request.query,
                    tags=tuple(request.tags),
                    tags_match=request.tags_match,
                    max_tokens=request.max_tokens,
                ),
                label=name,
                case=("ticket", ticket_id) if ticket_id else None,
            )


def render_decision_state(stored: StoredDecision | None) -> None:
    if stored is None:
        st.info("Open: no reviewer decision yet.", icon=":material/pending:")
        return
    d = stored.decision
    delivery = {
        "delivered": "saved to the agents' memory",
        "pending": "waiting to be saved to the agents' memory (will retry)",
        "superseded": "superseded by a newer decision",
        "failed": "refused by Hindsight, parked for a lead (Audit log)",
        "discarded": "refused by Hindsight and discarded by a lead",
    }.get(stored.state, stored.state)
    box = st.success if stored.state == "delivered" else st.warning
    box(f"Decided: {outcome_words(d)}, decision #{stored.id}: {delivery}.", icon=":material/gavel:")
    who = "signed in" if d.authenticated else "unauthenticated"
    st.text(f"By {d.reviewer} ({who}) on {local_time(d.decided_at)}\n{decision_summary(d)}")
    if stored.last_error:
        st.text(f"Last delivery error: {plain_error(stored.last_error)}")
    with st.expander("The response as saved to memory"):
        st.text(stored.record.content)


def render_coverage(coverage: Coverage, label: str, key: str) -> None:
    st.markdown(f"**{label}**")
    a, b, c, d = st.columns(4)
    a.metric("Documents", coverage.total, help="Records as retained, however many memories the server made of each")
    b.metric("Tagged", coverage.tagged, help=f"{coverage.tagged_share:.0%} of all documents")
    c.metric("Untagged", coverage.untagged)
    d.metric(
        "Can be migrated",
        coverage.convertible,
        help="Untagged documents whose original first sentence names exactly one customer of the directory",
    )
    if coverage.ready_to_retire_fallback:
        st.success(
            "Ready to retire the search of old records: every old record whose owner can be proven is tagged.",
            icon=":material/task_alt:",
        )
    else:
        st.warning(
            f"Not ready to retire the search of old records: {coverage.convertible} record(s) can still be migrated."
        )


STATUS_TEXT = {"reliable": "can be migrated", "failed": "stays untagged"}


def render_plan(plan: MigrationPlan) -> None:
    for problem in plan.directory_problems:
        st.error("The customer directory is not safe to migrate against:")
        st.text(problem)
    counts = plan.counts()
    st.text(
        f"Old untagged records: {counts['untagged']}. Owner proven, can be migrated: {counts['reliable']}. "
        f"Owner not proven, stay untagged: {counts['failed']}."
    )
    for c in plan.reliable + plan.failed:  # each record read in full: a grid cell would cut its reason and text
        owner = f", for {c.customer} (new tag {c.tag})" if c.customer and c.tag else ""
        record_card(c.document_id or "(no document id)", STATUS_TEXT[c.status] + owner, c.reason, c.text)


def render_report(report: MigrationReport) -> None:
    what = report.scope or "the bank's legacy records"
    if report.error:
        st.error("The migration stopped early; run it again to finish (a record already tagged is not tagged twice):")
        st.text(plain_error(report.error))
    else:
        st.success(
            f"Tagged {len(report.converted)} record(s) in place: same document ids, now with the customer's tag."
        )
    st.text(f"Scope: {what}.")
    if report.converted:
        st.text("Tagged: " + ", ".join(report.converted))
    if report.selected_after:
        st.text(f"Still untagged in this scope: {report.selected_after}.")
