"""Why each document entered or left the agent's evidence since its recall: one typed cause per document.

The rules read only what `cause_inputs` gathered (the document as the bank holds it now, our curation log,
the observations and the ranking the same request gives now, the bank's config then and now). A cause is
"unknown" only when none of them explains the change. No Streamlit here.
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.store.agent_runs import ResultRef

Change = Literal["appeared", "left"]
# Settings that do not change what recall returns.
CONFIG_NOISE = frozenset({"audit_log_enabled", "audit_log_actions", "audit_log_retention_days"})


class CauseKind(StrEnum):
    RETAINED_AFTER = "retained after the recall"
    INVALIDATED = "invalidated"
    CONSOLIDATED = "consolidated into an observation"
    TAGS_CHANGED = "tags changed"
    MIGRATED = "migrated to tags"
    CONFIG_CHANGED = "bank config changed"
    OUTRANKED = "outranked by a newer record"
    RANKING_SHIFTED = "the ranking shifted"
    UNKNOWN = "cause unknown"


class Cause(BaseModel):
    document_id: str
    change: Change
    kind: CauseKind
    sentence: str  # for a person: what happened, when, by whom


class DocumentNow(BaseModel):
    """One changed document as the adapter found it now."""

    document_id: str
    stored: bool = True  # the bank still holds it
    created_at: datetime | None = None
    updated_at: datetime | None = None
    tags: list[str] = Field(default_factory=list)
    migrated: bool = False  # re-retained by the legacy -> tags migration
    invalidated: bool = False  # Hindsight holds it only as invalidated memories
    curation: str | None = None  # our curation log's sentence
    observations: list[str] = Field(default_factory=list)  # observations the same request returns now, built from it
    rank: int | None = None  # its place (from 1) under the agent's same request sent again now; None: not found


class CauseInputs(BaseModel):
    recalled_at: datetime
    kept: int = 0  # documents the agent took as evidence then
    config_then: dict | None = None  # None: the run did not record it
    config_now: dict | None = None
    documents: dict[str, DocumentNow] = Field(default_factory=dict)


def config_changes(then: dict | None, now: dict | None) -> list[str]:
    """e.g. ["enable_graph_retrieval: True -> False"]; [] when either side is unknown."""
    if then is None or now is None:
        return []
    keys = sorted((set(then) | set(now)) - CONFIG_NOISE)
    return [f"{key}: {then.get(key)} -> {now.get(key)}" for key in keys if then.get(key) != now.get(key)]


def _day(when: datetime) -> str:
    return f"{when:%Y-%m-%d %H:%M} UTC"


def _changed_after(doc: DocumentNow, at: datetime) -> datetime | None:
    when = doc.updated_at or doc.created_at
    return when if when is not None and when > at else None


def _new(doc: DocumentNow, at: datetime) -> bool:
    return doc.created_at is not None and doc.created_at > at


def _cause(doc: DocumentNow, change: Change, kind: CauseKind, sentence: str) -> Cause:
    return Cause(document_id=doc.document_id, change=change, kind=kind, sentence=sentence)


def _own_sentence(
    doc: DocumentNow, change: Change, at: datetime, tags_then: list[str] | None
) -> tuple[CauseKind, str] | None:
    """What happened to the document itself: curated, migrated, retained again, retagged, consolidated."""
    when = _changed_after(doc, at)
    left = change == "left"
    if doc.curation:
        return CauseKind.INVALIDATED, doc.curation[0].upper() + doc.curation[1:] + "."
    if left and doc.invalidated:
        return CauseKind.INVALIDATED, (
            "Its memories are invalidated in Hindsight (not through this dashboard's curation)."
        )
    if doc.migrated and when:
        return CauseKind.MIGRATED, (
            f"Migrated from untagged legacy to {', '.join(doc.tags)} on {_day(when)}, "
            f"after the agent's recall on {_day(at)}."
        )
    if not left and when:
        done = "Retained" if _new(doc, at) else "Retained again"
        return CauseKind.RETAINED_AFTER, f"{done} on {_day(when)}, after the agent's recall on {_day(at)}."
    if left and doc.stored and tags_then is not None and sorted(tags_then) != sorted(doc.tags):
        before, now = ", ".join(tags_then) or "none", ", ".join(doc.tags) or "none"
        return CauseKind.TAGS_CHANGED, f"Its tags changed from {before} to {now}."
    if left and doc.observations and doc.rank is None:
        through = ", ".join(doc.observations)
        return CauseKind.CONSOLIDATED, f"Its memories now reach recall through observation {through}."
    return None


def _observation(ref: ResultRef, change: Change) -> Cause:
    """An observation is derived: consolidation builds it from facts, and rebuilds or prunes it when one changes."""
    if change == "appeared":
        sources = ", ".join(ref.sources) or "facts the response did not name"
        sentence = f"Hindsight consolidated it since the recall from {sources}: it reaches recall in their place."
    else:
        sentence = (
            "Hindsight rebuilt or pruned it since the recall (consolidation does so when a fact under it changes)."
        )
    return Cause(document_id=ref.ref, change=change, kind=CauseKind.CONSOLIDATED, sentence=sentence)


def _own_change(doc: DocumentNow, change: Change, at: datetime, tags_then: list[str] | None) -> Cause | None:
    found = _own_sentence(doc, change, at, tags_then)
    return None if found is None else _cause(doc, change, *found)


class _Context(BaseModel):
    """What explains a change from outside the document."""

    kept: int
    config_known: bool  # the run kept the bank's config it ran under
    newer: list[DocumentNow]  # documents retained (or re-retained) after the recall
    appeared: set[str]
    config: list[str]  # the bank's config changes
    freed: list[Cause]  # documents that left for a known reason

    @property
    def migrated(self) -> list[str]:
        return [d.document_id for d in self.newer if d.migrated]


def causes(
    appeared: list[ResultRef], left: list[ResultRef], inputs: CauseInputs, *, same_request: bool = True
) -> list[Cause]:
    """One cause per left, then appeared, document (or observation). `same_request` False: "then" is an agent's own
    recall, not the request the evidence now comes from (an agent that handed its case in): a document differs
    there because the requests differ, so only what happened to the document itself since is a cause, and a document
    nothing happened to has none (it did not change; the agent's part says where the two differ)."""
    at = inputs.recalled_at
    docs = inputs.documents
    own: list[tuple[DocumentNow, Change, Cause | None]] = []
    for change, refs in (("left", left), ("appeared", appeared)):
        for ref in refs:
            doc = docs.get(ref.ref) or DocumentNow(document_id=ref.ref)
            found = _observation(ref, change) if ref.kind == "observation" else None
            # its tags then are known only from a response the dashboard read (an agent reports document ids alone)
            tags_then = ref.tags if change == "left" and same_request else None
            own.append((doc, change, found or _own_change(doc, change, at, tags_then)))
    if not same_request:
        return [
            cause or (_unknown(doc, change, None) if not doc.stored else None)
            for doc, change, cause in own
            if cause is not None or not doc.stored
        ]
    context = _Context(
        kept=inputs.kept,
        config_known=inputs.config_then is not None and inputs.config_now is not None,
        newer=[d for d in docs.values() if d.stored and _changed_after(d, at)],
        appeared={r.ref for r in appeared},
        config=config_changes(inputs.config_then, inputs.config_now),
        freed=[cause for _, change, cause in own if change == "left" and cause is not None],
    )
    return [cause or _outside(doc, change, context) or _unknown(doc, change, context) for doc, change, cause in own]


def _outside(doc: DocumentNow, change: Change, context: _Context) -> Cause | None:
    """A migration changed the agent's path, the config changed, a newer record outranks it or shifted the ranking."""
    if change == "left" and context.migrated and doc.stored:
        return _cause(
            doc,
            change,
            CauseKind.MIGRATED,
            f"{', '.join(context.migrated)} migrated to tags since the recall: "
            "the tagged recall answers now, "
            "so the fallback that found this one is not made.",
        )
    if context.config:
        changes = "; ".join(context.config)
        return _cause(doc, change, CauseKind.CONFIG_CHANGED, f"The bank's config changed since the recall: {changes}.")
    outranked = _outranked(doc, context) if change == "left" else None
    if outranked is not None:
        return outranked
    # Held since before and still found: the bank changed only by these, which free places and shift every score
    # (a document added or retired changes the keyword statistics and the links).
    why = [f"{c.document_id} left ({c.kind.value})" for c in context.freed if c.document_id != doc.document_id]
    why += [f"{d.document_id} was retained after the recall" for d in context.newer if d.document_id != doc.document_id]
    if not doc.stored or not why or (change == "left" and doc.rank is None):
        return None
    moved = "it moved up" if change == "appeared" else f"it moved down (place {doc.rank} under the same request)"
    because = "; ".join(why)
    return _cause(doc, change, CauseKind.RANKING_SHIFTED, f"Held since before the recall; {moved} because {because}.")


def _outranked(doc: DocumentNow, context: _Context) -> Cause | None:
    """Still found by the same request, but a record retained after the recall now holds a place in the evidence."""
    above = [d.document_id for d in context.newer if d.document_id in context.appeared]
    if doc.rank is None or not above:
        return None
    return _cause(
        doc,
        "left",
        CauseKind.OUTRANKED,
        f"Still found by the same request (place {doc.rank}), but no longer among the {context.kept} kept: "
        f"{', '.join(above)}, retained after the recall, now ranks above it.",
    )


def _unknown(doc: DocumentNow, change: Change, context: _Context | None) -> Cause:
    config = (
        "the bank's config is unchanged"
        if context and context.config_known
        else "the bank's config then was not recorded"
    )
    sentence = f"Cause unknown: not retained, curated, retagged, migrated or consolidated since the recall; {config}."
    if not doc.stored:
        sentence += " The bank no longer holds this document, and no log here says who removed it."
    return _cause(doc, change, CauseKind.UNKNOWN, sentence)
