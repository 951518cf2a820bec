"""The deterministic ownership rule for old, untagged support records, with a reason for every verdict.

Legacy records were retained without tags; the only proof of ownership is their first sentence,
`Customer <name> contacted support.`. A record is admitted for a customer only if it is untagged AND
its text STARTS with that customer's marker:

    ^Customer\\s+<part1>\\s+<part2>...\\s+contacted\\s+support\\.     (case-insensitive)

- every whitespace-separated part of the name is `re.escape`d, so `.`, `(`, `+`, `'` in a name are
  literal, and the parts are joined by flexible whitespace (`\\s+`): spacing and case may differ;
- the marker is anchored at the very start (`\\A`): a record that mentions the name mid-text, or
  quotes the marker after a prefix ("Escalation note: Customer ..."), is never admitted;
- after the name the rule requires whitespace and `contacted support.`, so a longer name that starts
  with this one ("Ann Leeds" for "Ann Lee") never matches, and a shorter one ("Lee") cannot either,
  because the name must follow `Customer` directly.

Names are compared as "identity keys" (whitespace collapsed, case-folded): two names with the same key
are the same customer for this rule. A name containing `contacted support.` would make markers
ambiguous; such names are refused (`AmbiguousName`).

The rule reads a document's ORIGINAL text (`judge_document`): with an LLM the server rewrites each
document into facts and the marker is gone from them. Observations have no text of their own: never
admitted on the legacy path, and on the tagged path used only when every source document is proven this
customer's (`judge_observation`). Pure functions, no Streamlit, no I/O.
"""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict

from dashboard.support.customers import customer_tag, display_name

MARKER_TEMPLATE = "Customer {name} contacted support."
# Any leading marker, whoever it names (non-greedy, one line): used to explain a rejection.
_ANY_MARKER = re.compile(r"Customer\s+(?P<name>[^\n]+?)\s+contacted\s+support\.", re.IGNORECASE)
_AMBIGUOUS = re.compile(r"contacted\s+support\.", re.IGNORECASE)


class AmbiguousName(ValueError):
    """The name cannot be used in a marker (empty, or it contains `contacted support.`)."""


class Verdict(StrEnum):
    ADMITTED = "admitted"
    OTHER_CUSTOMER_MARKER = "other_customer_marker"
    MARKER_NOT_AT_START = "marker_not_at_start"
    NO_MARKER = "no_marker"
    TAGGED_FOR_OTHER = "tagged_for_other"
    TAGGED_FOR_THIS_CUSTOMER = "tagged_for_this_customer"
    UNREADABLE = "original_text_unreadable"
    OBSERVATION = "observation"  # the legacy path: an observation is never admitted
    OBSERVATION_OWN = "observation_this_customer"  # the tagged path: every source proven this customer's
    OBSERVATION_MIXES = "observation_mixes_customers"  # the tagged path: a source is someone else's or unproven


VERDICT_LABELS = {
    Verdict.ADMITTED: "admitted",
    Verdict.OTHER_CUSTOMER_MARKER: "rejected: another customer's marker",
    Verdict.MARKER_NOT_AT_START: "rejected: marker not at the start",
    Verdict.NO_MARKER: "rejected: no marker",
    Verdict.TAGGED_FOR_OTHER: "rejected: tagged for someone else",
    Verdict.TAGGED_FOR_THIS_CUSTOMER: "rejected: tagged record, belongs to the tagged path",
    Verdict.UNREADABLE: "rejected: original text could not be read",
    Verdict.OBSERVATION: "rejected: an observation, no text of its own",
    Verdict.OBSERVATION_OWN: "used: every source is this customer's",
    Verdict.OBSERVATION_MIXES: "excluded: mixes another customer's records",
}


class Admission(BaseModel):
    """The verdict on one candidate, and the human-readable reason for it."""

    model_config = ConfigDict(frozen=True)

    verdict: Verdict
    reason: str

    @property
    def admitted(self) -> bool:
        return self.verdict is Verdict.ADMITTED


def marker(name: str) -> str:
    """The legacy (and retained-back) first sentence for a customer."""
    return MARKER_TEMPLATE.format(name=display_name(name))


def marker_pattern(name: str) -> re.Pattern[str]:
    parts = name.split()
    if not parts:
        raise AmbiguousName("customer name is empty")
    if _AMBIGUOUS.search(name):
        raise AmbiguousName(f"customer name {name!r} contains 'contacted support.': markers would be ambiguous")
    escaped = r"\s+".join(re.escape(part) for part in parts)
    return re.compile(rf"\ACustomer\s+{escaped}\s+contacted\s+support\.", re.IGNORECASE)


def has_marker_at_start(text: str, name: str) -> bool:
    return marker_pattern(name).match(text) is not None


def leading_marker_name(text: str) -> str | None:
    """The name in a marker at the very start of the text, whoever it names."""
    found = _ANY_MARKER.match(text)
    return display_name(found.group("name")) if found else None


def marker_position(text: str) -> int | None:
    """Where the first marker (whoever it names) starts in the text, or None."""
    found = _ANY_MARKER.search(text)
    return found.start() if found else None


def judge(text: str, tags: list[str] | tuple[str, ...], customer: str) -> Admission:
    """Is this recalled record admissible as `customer`'s legacy history? Always says why."""
    pattern = marker_pattern(customer)
    own_tag = customer_tag(customer)
    if tags:
        shown = ", ".join(tags)
        if own_tag in tags:
            return Admission(
                verdict=Verdict.TAGGED_FOR_THIS_CUSTOMER,
                reason=f"tagged ({shown}): tagged records are served by the tagged recall, not the legacy fallback",
            )
        return Admission(verdict=Verdict.TAGGED_FOR_OTHER, reason=f"tagged for someone else ({shown}), not {own_tag}")
    if pattern.match(text):
        return Admission(
            verdict=Verdict.ADMITTED,
            reason=f"untagged and starts with the marker '{marker(customer)}'",
        )
    named = leading_marker_name(text)
    if named is not None:
        return Admission(
            verdict=Verdict.OTHER_CUSTOMER_MARKER,
            reason=f"starts with another customer's marker (names '{named}', not '{display_name(customer)}')",
        )
    inner = _ANY_MARKER.search(text)
    if inner is not None:
        where = "this customer's" if pattern.match(text[inner.start() :]) else "a"
        return Admission(
            verdict=Verdict.MARKER_NOT_AT_START,
            reason=f"{where} marker appears at character {inner.start()}, not at the start: ownership not proven",
        )
    return Admission(
        verdict=Verdict.NO_MARKER,
        reason="no 'Customer <name> contacted support.' marker (e.g. a summary): ownership cannot be proven",
    )


def admits(text: str, tags: list[str] | tuple[str, ...], customer: str) -> bool:
    return judge(text, tags, customer).admitted


def judge_document(original_start: str | None, tags: list[str] | tuple[str, ...], customer: str) -> Admission:
    """`judge` on a document's ORIGINAL text (its first chunk): with an LLM the server rewrites a document into
    facts that no longer start with the marker, so a fact's text proves nothing. No readable original text:
    rejected, and the reason says so."""
    if original_start is None and not tags:
        return Admission(
            verdict=Verdict.UNREADABLE,
            reason="its original text could not be read (no document, or the server keeps no text): ownership cannot be proven",
        )
    return judge(original_start or "", tags, customer)


def observation_on_legacy_path() -> Admission:
    return Admission(
        verdict=Verdict.OBSERVATION,
        reason="an observation Hindsight consolidated from several records: it has no original text to prove whose it is",
    )


def owns(admission: Admission) -> bool:
    """Does this verdict prove the document is the customer's: tagged for them, or admitted by the marker rule?
    (The verdict `whose` reads.)"""
    return admission.verdict in (Verdict.ADMITTED, Verdict.TAGGED_FOR_THIS_CUSTOMER)


class Ownership(StrEnum):
    """How a record is proven a customer's: its customer tag, or (an old untagged record) its first sentence."""

    TAG = "tag"
    FIRST_SENTENCE = "first_sentence"


OWNERSHIP_WORDS = {
    Ownership.TAG: "by its customer tag",
    Ownership.FIRST_SENTENCE: "by its first sentence (an old untagged record that names this customer first)",
}


def whose(original_start: str | None, tags: list[str] | tuple[str, ...], customer: str) -> Ownership | None:
    """THE answer to "is this the customer's record?", asked by the ticket's recall, the trace, why-not and the agents'
    incidents alike: tagged for them, or untagged with their marker at the start of its ORIGINAL text. None: not
    provably theirs. A tagged record needs no text (`original_start` may be None)."""
    verdict = judge_document(original_start, tags, customer).verdict
    return {Verdict.TAGGED_FOR_THIS_CUSTOMER: Ownership.TAG, Verdict.ADMITTED: Ownership.FIRST_SENTENCE}.get(verdict)


def judge_observation(sources: list[tuple[str, bool]], unresolved: int, customer: str) -> Admission:
    """An observation on the tagged path, judged by its provenance: `sources` is (document ref, proven this
    customer's) per source fact. It is used only when every source is `customer`'s: tagged for them, or
    untagged and proven theirs by the ownership rule on its original text."""
    name = display_name(customer)
    foreign = [ref for ref, owned in sources if not owned]
    if not sources and not unresolved:
        return Admission(
            verdict=Verdict.OBSERVATION_MIXES,
            reason="an observation whose sources were not returned: its provenance cannot be checked",
        )
    if foreign or unresolved:
        missing = f"{unresolved} source(s) not returned" if unresolved else ""
        named = (
            f"{len(foreign)} source document(s) not proven {name}'s ({', '.join(dict.fromkeys(foreign))})"
            if foreign
            else ""
        )
        return Admission(
            verdict=Verdict.OBSERVATION_MIXES,
            reason=f"an observation that mixes another customer's records: {'; '.join(x for x in (named, missing) if x)}",
        )
    documents = ", ".join(dict.fromkeys(ref for ref, _ in sources))
    return Admission(
        verdict=Verdict.OBSERVATION_OWN, reason=f"an observation whose every source is {name}'s ({documents})"
    )
