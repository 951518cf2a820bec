"""The reads behind the causes of then != now: each changed document as the bank holds it now, its memories'
state, our curation log's sentence, its place under the agent's own requests sent again, the bank's config.
No Streamlit here."""

from __future__ import annotations

from datetime import datetime

from dashboard.agents.causes import CauseInputs, DocumentNow, causes
from dashboard.agents.then_now import RecallThen, ThenNow, evidence_refs
from dashboard.hindsight.documents import RecalledDocuments, group
from dashboard.review.curation import DocumentCuration

WIDE_TOKENS = 4096  # the same request, sent again with room for far more than k documents


def recall_config(gateway, bank_id: str) -> dict:
    """The bank's resolved config, as recorded with an agent run."""
    return dict(gateway.bank_config(bank_id).get("config", {}))


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _document(gateway, bank_id: str, document_id: str, curation: DocumentCuration | None, changed: bool) -> DocumentNow:
    """The document as the bank holds it; for a changed one, also whether Hindsight holds it only as invalidated."""
    stored = gateway.document(bank_id, document_id)
    sentence = curation.sentence if curation else None
    if stored is None:
        return DocumentNow(document_id=document_id, stored=False, curation=sentence)
    retired = (
        changed
        and not gateway.list_memories(bank_id, document_id=document_id, limit=1).get("total", 0)
        and bool(gateway.list_memories(bank_id, document_id=document_id, state="invalidated", limit=1).get("total", 0))
    )
    metadata = stored.retain_params.get("metadata") or {}
    return DocumentNow(
        document_id=document_id,
        created_at=_when(stored.created_at),
        updated_at=_when(stored.updated_at),
        tags=stored.tags,
        migrated=bool(metadata.get("migrated_from")),
        invalidated=retired,
        curation=sentence,
    )


def _sent_again(gateway, bank_id: str, recall: RecallThen) -> RecalledDocuments:
    """One of the agent's requests sent again now, with room for far more than the documents it kept."""
    return group(
        gateway.recall(
            bank_id,
            recall.query,
            tags=recall.tags or None,
            tags_match=recall.tags_match or "any",
            budget=recall.budget or "mid",
            max_tokens=max(recall.max_tokens or 0, WIDE_TOKENS),
        )
    )


def _placed(doc: DocumentNow, found: RecalledDocuments) -> DocumentNow:
    """The document's best place so far, and the observations built from it."""
    order = [d.ref for d in found.documents]
    rank = order.index(doc.document_id) + 1 if doc.document_id in order else None
    observations = [o.ref for o in found.observations if doc.document_id in o.source_documents]
    best = min((r for r in (rank, doc.rank) if r is not None), default=None)
    merged = list(dict.fromkeys([*doc.observations, *observations]))
    return doc.model_copy(update={"rank": best, "observations": merged})


def cause_inputs(gateway, statuses: dict[str, DocumentCuration], view: ThenNow) -> CauseInputs | None:
    """None when there is nothing to explain: no "then" (a recompute), or nothing changed."""
    if view.run is None or view.source == "recompute":
        return None
    bank = view.run.bank_id
    changed = {r.ref for r in [*view.left, *view.appeared]}
    if not changed:
        return None
    again = [_sent_again(gateway, bank, recall) for recall in view.then]
    documents = {}
    # the evidence now too: a document kept but migrated (or retained again) explains what left around it
    for ref in dict.fromkeys(r.ref for r in [*view.left, *view.appeared, *view.now] if r.kind == "document"):
        doc = _document(gateway, bank, ref, statuses.get(ref), ref in changed)
        if ref in changed:  # its best place under the requests that returned it then (an appeared one: any of them)
            mine = [
                found
                for recall, found in zip(view.then, again, strict=True)
                if any(r.ref == ref for r in recall.results)
            ]
            for found in mine or again:
                doc = _placed(doc, found)
        documents[ref] = doc
    return CauseInputs(
        recalled_at=view.run.started_at,
        kept=len(evidence_refs(view.run)),
        config_then=view.run.output.get("bank_config"),
        config_now=recall_config(gateway, bank),
        documents=documents,
    )


def explained(gateway, statuses: dict[str, DocumentCuration], view: ThenNow) -> ThenNow:
    """The view with a cause for each document that entered or left the evidence, and which of those that entered
    did not exist when the agent ran."""
    inputs = cause_inputs(gateway, statuses, view)
    if inputs is None:
        return view
    created = {ref: doc.created_at for ref, doc in inputs.documents.items() if doc.created_at is not None}
    same_request = (
        view.run.variant != "submitted"
    )  # an agent's own request: what differs only because of it is no change
    found = causes(view.appeared, view.left, inputs, same_request=same_request)
    update: dict = {"causes": found}
    if not same_request:
        changed = {cause.document_id for cause in found}
        update |= {
            "appeared": [r for r in view.appeared if r.ref in changed],
            "left": [r for r in view.left if r.ref in changed],
        }
    return view.model_copy(update=update).with_created(created)
