"""What a suggested fix also lets in, and the safe fix first. Plain Python, no Streamlit.

A "Why not this one?" answer (traces.why_not) names the setting changes that bring a document in. A looser tag filter
also lets other records into the recall's pool (counted on the bank: `WhyNot.filter_admits`), and a larger k or budget
other documents into the top k (predicted on the trace: `WhyNot.also_returned`). Each of those is judged against the
case the question came from, by the rule its page uses: a ticket's customer by `support.admission.whose` (tag, or an
old record's first sentence), a finance case by its vendor and exception type tags. Whatever is not the case's is
counted by kind ("other customers' untagged records", "other vendors' precedents"), so a fix that leaks says so.

The safe fix comes first: an old untagged record proven the ticket's customer's is migrated to its tag (the
migration's own path); then it passes the customer's strict tag filter and nothing else is let in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Literal

from pydantic import BaseModel

from dashboard.traces.why_not import BankDocument, WhyNot

OTHER_CUSTOMERS_UNTAGGED = "other customers' untagged records (or with no provable owner)"
OTHER_CUSTOMERS_TAGGED = "records tagged for other customers"
OTHER_VENDORS = "other vendors' precedents"
OTHER_TYPES = "this vendor's precedents of other exception types"
UNTAGGED = "untagged records"
TAGGED = "tagged records"

Classify = Callable[
    [list[BankDocument]], dict[str, str | None]
]  # documents -> id -> kind of stranger (None: the case's)


class LetsIn(BaseModel):
    """What a change lets in besides the document asked about, grouped: the case's own, and each kind of stranger."""

    own: list[str] = []
    strangers: dict[str, list[str]] = {}  # kind ("other vendors' precedents") -> document ids

    @property
    def foreign(self) -> int:
        return sum(len(ids) for ids in self.strangers.values())

    def sentence(self) -> str:
        if not self.foreign and not self.own:
            return "lets in nothing else"
        parts = [f"{len(ids)} {kind}" for kind, ids in sorted(self.strangers.items(), key=lambda kv: -len(kv[1]))]
        own = f"{len(self.own)} of the case's own" if self.own else ""
        return "also lets in " + " and ".join(p for p in (*parts, own) if p)


class Suggestion(BaseModel):
    action: str
    safe: bool  # lets in nothing that is not the case's
    lets_in: LetsIn
    kind: Literal["migrate", "settings"]

    def sentence(self) -> str:
        return f"{self.action}: {self.lets_in.sentence()}."


def ticket_classifier(owned_of: Callable[[list[BankDocument]], set[str]]) -> Classify:
    """A ticket's: `owned_of` says which are the customer's (support.recall.customers_records, the page's rule)."""

    def classify(documents: list[BankDocument]) -> dict[str, str | None]:
        owned = owned_of(documents)
        return {
            d.id: None if d.id in owned else (OTHER_CUSTOMERS_TAGGED if d.tags else OTHER_CUSTOMERS_UNTAGGED)
            for d in documents
        }

    return classify


def case_classifier(exact_tags: Iterable[str]) -> Classify:
    """A finance case's: its exact precedents hold every exact tag (vendor AND type); the rest are another vendor's,
    or this vendor's of another type."""
    exact = set(exact_tags)
    vendor = {t for t in exact if t.startswith("vendor:")}

    def classify(documents: list[BankDocument]) -> dict[str, str | None]:
        def kind(tags: set[str]) -> str | None:
            if exact <= tags:
                return None
            return OTHER_TYPES if vendor and vendor <= tags else OTHER_VENDORS

        return {d.id: kind(set(d.tags)) for d in documents}

    return classify


def plain_classifier(documents: list[BankDocument]) -> dict[str, str | None]:
    """No case to judge against (a trace of the console): untagged and tagged, each counted."""
    return {d.id: UNTAGGED if not d.tags else TAGGED for d in documents}


def lets_in(documents: list[BankDocument], classify: Classify) -> LetsIn:
    kinds = classify(documents) if documents else {}
    found = LetsIn()
    for d in documents:
        kind = kinds.get(d.id)
        if kind is None:
            found.own.append(d.id)
        else:
            found.strangers.setdefault(kind, []).append(d.id)
    return found


def suggestions(answer: WhyNot, classify: Classify, migrate_to: str | None = None) -> list[Suggestion]:
    """The fixes for `answer`, the safe one first. `migrate_to` ("customer:ann-lee") when the document is an old record
    proven the ticket's customer's: migrating it to that tag is offered first."""
    found: list[Suggestion] = []
    if migrate_to is not None and answer.stage == "tag_filter":
        found.append(
            Suggestion(
                action=f"Tag {answer.document_id} for this customer ({migrate_to}), as the migration does; then the customer's "
                "own tag filter reaches it",
                safe=True,
                lets_in=LetsIn(),
                kind="migrate",
            )
        )
    if answer.changes:
        seen = {d.id for d in answer.filter_admits}
        extra = answer.filter_admits + [d for d in answer.also_returned if d.id not in seen]
        reach = lets_in(extra, classify)
        found.append(
            Suggestion(
                action=f"Change the settings ({answer.fix})", safe=reach.foreign == 0, lets_in=reach, kind="settings"
            )
        )
    return sorted(found, key=lambda s: not s.safe)  # stable: the migration, then a change that admits no stranger
