"""A trace in one sentence a non-expert can read: which arm filled what the agent got back, what the
returned top is mostly about, and (opened from a case) how many of the case's exact precedents made it.
Plain Python, no Streamlit.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from dashboard.hindsight.wire import SOURCES, RecallResponse
from dashboard.traces.analysis import TraceAnalysis
from dashboard.traces.labels import CandidateLabel

ARM_NAMES = {
    "semantic": "the meaning-match arm (semantic)",
    "bm25": "the keyword arm (BM25)",
    "graph": "the linked-memories arm (graph)",
    "temporal": "the date arm (temporal)",
}
SHORT_ARM_NAMES = {"semantic": "meaning match", "bm25": "keywords", "graph": "linked memories", "temporal": "dates"}
ENTITY_TAGS = ("vendor", "customer")  # what a top list is "about" first, when its tags say
TOPIC_TAGS = (*ENTITY_TAGS, "type")  # then its kind of case; other tags (kind:decision, source:...) say little
TOP_N = 10


class CaseFocus(BaseModel):
    """The case a trace was opened from. A case's exact precedent holds every one of `exact_tags`; a ticket's own
    records are those `owned` names (document id -> how it is proven the customer's, in words), which the app asks of
    the one ownership rule the ticket's page uses (support.admission.whose): its tag, or an old record's first sentence."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["case", "ticket"]  # the link's parameter that named the case
    id: str
    of: str = ""  # its kind's key (QueueKind.key)
    exact_tags: tuple[str, ...]
    about: str = ""  # plain words: "vendor V01, price variance"
    owned: dict[str, str] | None = None  # a ticket's: None until the trace's candidates are judged

    def is_exact(self, label: CandidateLabel | None) -> bool:
        if label is None:
            return False
        if self.owned is not None:
            return label.document_id in self.owned
        return bool(self.exact_tags) and set(self.exact_tags) <= set(label.tags)

    def why(self, label: CandidateLabel | None) -> str:
        """Why a starred candidate is starred, in words ("" when it is not)."""
        if not self.is_exact(label):
            return ""
        if self.owned is not None:
            return self.owned[label.document_id]
        return "holds " + ", ".join(plain_tag(t) for t in self.exact_tags)

    @property
    def noun(self) -> str:
        return "this case's exact precedents" if self.kind == "case" else "this customer's own records"


def plain_tag(tag: str) -> str:
    key, sep, value = tag.partition(":")
    if not sep:
        return tag.replace("_", " ")
    return f"{'of type' if key == 'type' else key} {value.replace('_', ' ')}"


def exact_ids(labels: dict[str, CandidateLabel], focus: CaseFocus | None) -> set[str]:
    if focus is None:
        return set()
    return {node for node, label in labels.items() if focus.is_exact(label)}


@dataclass(frozen=True)
class Verdict:
    top_n: int
    arm: str | None  # the arm with the largest share of the returned top's fusion score
    arm_share: float
    tag: str | None  # the tag most of the returned top shares
    tag_count: int
    exact_in_top: int | None = None  # None: not opened from a case
    exact_total: int | None = None  # exact precedents among every fused candidate

    def sentence(self, focus: CaseFocus | None = None) -> str:
        if self.top_n == 0:
            return "The recall returned nothing."
        parts = []
        if self.arm is not None:
            parts.append(
                f"{ARM_NAMES.get(self.arm, self.arm)} supplied {self.arm_share * 100:.0f} % of the top-{self.top_n} score"
            )
        if self.tag is not None:
            parts.append(f"{self.tag_count} of the top {self.top_n} are {plain_tag(self.tag)}")
        if focus is not None and self.exact_in_top is not None:
            parts.append(
                f"{self.exact_in_top} of the top {self.top_n} are {focus.noun} ({self.exact_total} among all candidates)"
            )
        text = "; ".join(parts) or f"{self.top_n} returned"
        return text[0].upper() + text[1:] + "."


def dominant_tag(tag_lists: list[tuple[str, ...]], pool: list[tuple[str, ...]] | None = None) -> tuple[str | None, int]:
    """The tag most of the list shares: a vendor or customer when one holds at least half of it (that is
    the flood a reviewer looks for), else the most common tag (entities first on a tie). A tag every
    candidate of the `pool` holds (such as `kind:decision`) says nothing and is skipped."""
    counts = Counter(tag for tags in tag_lists for tag in set(tags))
    if pool and len(pool) > len(tag_lists):
        everywhere = set.intersection(*(set(tags) for tags in pool))
        counts = Counter({t: n for t, n in counts.items() if t not in everywhere}) or counts
    if not counts:
        return None, 0

    def order(t: str) -> tuple:
        return (-counts[t], t.partition(":")[0] not in ENTITY_TAGS, t)

    entities = [t for t in counts if t.partition(":")[0] in ENTITY_TAGS]
    if entities:
        best = min(entities, key=order)
        if 2 * counts[best] >= len(tag_lists):
            return best, counts[best]
    topics = [t for t in counts if t.partition(":")[0] in TOPIC_TAGS]
    tag = min(topics or counts, key=order)
    return tag, counts[tag]


def verdict(
    response: RecallResponse,
    analysis: TraceAnalysis,
    labels: dict[str, CandidateLabel],
    focus: CaseFocus | None = None,
    n: int = TOP_N,
) -> Verdict:
    """The returned top `n` (what the agent got), read through the trace's fusion contributions."""
    top = [m.id for m in response.results[:n]]
    rows = {r.node_id: r for r in analysis.rows}
    totals = dict.fromkeys(SOURCES, 0.0)
    for node in top:
        row = rows.get(node)
        for source, value in row.contributions.items() if row else ():
            totals[source] = totals.get(source, 0.0) + value
    whole = sum(totals.values())
    arm = max(totals, key=lambda s: totals[s]) if whole > 0 else None
    pool = [labels[r.node_id].tags for r in analysis.rows if r.node_id in labels]
    tag, count = dominant_tag([labels[node].tags for node in top if node in labels], pool)
    exact = exact_ids(labels, focus)
    return Verdict(
        top_n=len(top),
        arm=arm,
        arm_share=(totals[arm] / whole) if arm else 0.0,
        tag=tag,
        tag_count=count,
        exact_in_top=sum(node in exact for node in top) if focus else None,
        exact_total=sum(1 for r in analysis.rows if r.node_id in exact) if focus else None,
    )
