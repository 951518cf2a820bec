"""What a person calls a trace's candidates: their document id and tags, not their memory id (a hash).

The trace names candidates by memory id only. The response's results carry document id and tags for
what was returned; the rest are looked up by listing the bank's memories under the recall's own tag
filter (the pool the recall drew from), page by page, until every candidate is named. Plain Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from dashboard.hindsight.wire import RecallResponse

PAGE = 1000
MAX_PAGES = 20  # 20,000 memories: beyond that the unnamed rest keep their short memory id
CHART_SAFE = re.compile(r"[^A-Za-z0-9._:/@ -]")  # chart text is pseudo-HTML: keep ids to a plain alphabet


class CandidateLabel(BaseModel):
    model_config = ConfigDict(frozen=True)

    document_id: str | None = None
    tags: tuple[str, ...] = ()


def labels_from_response(response: RecallResponse) -> dict[str, CandidateLabel]:
    return {m.id: CandidateLabel(document_id=m.document_id, tags=tuple(m.tags)) for m in response.results}


def missing(response: RecallResponse, labels: dict[str, CandidateLabel]) -> set[str]:
    if response.trace is None:
        return set()
    return {c.node_id for c in response.trace.rrf_merged} - set(labels)


def label_candidates(
    response: RecallResponse, list_page: Callable[[int, int], dict], max_pages: int = MAX_PAGES
) -> dict[str, CandidateLabel]:
    """Labels for every fused candidate. `list_page(limit, offset)` lists the recall's pool
    (`{"items": [{"id", "document_id", "tags"}], "total"}`); it is called only while some are unnamed."""
    labels = labels_from_response(response)
    wanted = missing(response, labels)
    offset = 0
    for _ in range(max_pages):
        if not wanted:
            break
        page = list_page(PAGE, offset)
        items = page.get("items") or []
        for item in items:
            if item.get("id") in wanted:
                labels[item["id"]] = CandidateLabel(
                    document_id=item.get("document_id"), tags=tuple(item.get("tags") or ())
                )
                wanted.discard(item["id"])
        offset += len(items)
        if not items or offset >= int(page.get("total") or 0):
            break
    return labels


def display_name(node_id: str, labels: dict[str, CandidateLabel]) -> str:
    """The document id when known, else a short memory id (marked as such)."""
    label = labels.get(node_id)
    if label is not None and label.document_id:
        return label.document_id
    return f"memory {node_id[:8]}"


def chart_name(node_id: str, labels: dict[str, CandidateLabel], max_chars: int = 32) -> str:
    """display_name made safe for chart text: plotly reads tags such as <a href> in labels."""
    name = CHART_SAFE.sub("?", display_name(node_id, labels))
    return name if len(name) <= max_chars else name[: max_chars - 1] + "…"
