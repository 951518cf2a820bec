"""A what-if setting as an A/B variant: what the agent would get back under other fusion settings,
predicted from the server's own traces (`traces.scoring.predict`), without changing the server.

Each distinct recall the queue makes is sent once, with `trace=True`; every variant's answer is then
the server's response (the server as it is) or the returned list predicted from that one trace. A
memory the prediction returns but the server did not is read from the bank (listed under the recall's
own tag filter), so the rules downstream (exact precedents, recommendation, legacy admission) see it
as a recall would have returned it. Plain Python.

Which trace a knob needs: arm weights and per-arm caps work on any trace (its arm lists are taken
before the server's cap); a BM25 gate needs an UNGATED trace (a server without
HINDSIGHT_API_BM25_MIN_SCORE), because the lists are taken after the server's own gate.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, field_validator

from dashboard.hindsight.wire import SOURCES, RecalledMemory, RecallResponse, Scores
from dashboard.strict import StrictModel
from dashboard.traces.replay import DEFAULT_RERANKER_MAX_CANDIDATES, ReplaySettings
from dashboard.traces.scoring import predict

WEIGHTS = (0.0, 0.5, 1.0)  # the evidence grid's
CAPS = (10, 20, 50)
MEMORY_PAGE = 1000
MAX_PAGES = 20
KNOB_TRACES = (
    "Arm weights and per-arm caps: predicted from any trace (its arm lists are taken before the server's cap). "
    "A BM25 gate: only from an ungated trace, i.e. a server without HINDSIGHT_API_BM25_MIN_SCORE "
    "(its lists are taken after the server's own gate, so a gate below it cannot be predicted)."
)


class WhatIf(StrictModel):
    """The evidence grid's knobs: a weight per arm (absent = 1, 0 = off), one cap for every arm, a BM25 gate;
    and the reranker's candidate limit (absent = the server's 300)."""

    weights: dict[str, float] = Field(default_factory=dict)
    cap: int | None = Field(default=None, ge=1)
    min_bm25: float | None = Field(default=None, ge=0)
    reranker_max_candidates: int | None = Field(default=None, ge=1)

    @field_validator("weights")
    @classmethod
    def _arms(cls, value: dict[str, float]) -> dict[str, float]:
        unknown = set(value) - set(SOURCES)
        if unknown:
            raise ValueError(f"unknown arm(s) {sorted(unknown)}; expected some of {list(SOURCES)}")
        if any(w < 0 for w in value.values()):
            raise ValueError("arm weights must not be negative")
        if value and all(value.get(s, 1.0) == 0 for s in SOURCES):
            raise ValueError("at least one arm needs a weight above 0")
        return {s: float(w) for s, w in value.items() if w != 1.0}

    @property
    def is_default(self) -> bool:
        return not self.weights and self.cap is None and self.min_bm25 is None and self.reranker_max_candidates is None

    def settings(self) -> ReplaySettings:
        return ReplaySettings(
            weights=dict(self.weights),
            caps=dict.fromkeys(SOURCES, self.cap) if self.cap else {},
            min_bm25=self.min_bm25,
            reranker_max_candidates=self.reranker_max_candidates or DEFAULT_RERANKER_MAX_CANDIDATES,
        )

    @classmethod
    def of(cls, settings: ReplaySettings) -> WhatIf:
        """The what-if of replay settings that cap every arm alike (as the server's per-source cap does)."""
        caps = {settings.cap(s) for s in SOURCES}
        if len(caps) > 1:
            raise ValueError("a what-if caps every arm alike")
        reranker = settings.reranker_max_candidates
        return cls(
            weights=dict(settings.weights),
            cap=caps.pop() or None,
            min_bm25=settings.min_bm25,
            reranker_max_candidates=None if reranker == DEFAULT_RERANKER_MAX_CANDIDATES else reranker,
        )

    def describe(self) -> str:
        parts = [f"{s} arm weight {self.weights[s]:g}" for s in SOURCES if s in self.weights]
        if self.cap:
            parts.append(f"each arm capped at {self.cap}")
        if self.min_bm25 is not None:
            parts.append(f"BM25 gate {self.min_bm25:g}")
        if self.reranker_max_candidates is not None:
            parts.append(f"reranker candidates {self.reranker_max_candidates}")
        return "what-if: " + (", ".join(parts) or "the server's settings")

    @classmethod
    def parse(cls, spec: str) -> WhatIf:
        """`graph=0,bm25=0.5,cap=20,min_bm25=1.5` (empty or `default`: the server's settings)."""
        fields: dict[str, Any] = {"weights": {}}
        text = spec.strip()
        if text in ("", "default"):
            return cls()
        for part in text.split(","):
            name, sep, value = part.partition("=")
            name = name.strip()
            if not sep:
                raise ValueError(f"{part.strip()!r}: expected name=value (an arm, cap or min_bm25)")
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"{name}: {value.strip()!r} is not a number") from None
            if name in SOURCES:
                fields["weights"][name] = number
            elif name == "cap":
                fields["cap"] = int(number) or None
            elif name == "min_bm25":
                fields["min_bm25"] = number
            else:
                raise ValueError(f"{name!r}: expected an arm ({', '.join(SOURCES)}), cap or min_bm25")
        return cls(**fields)


def _memory(item: dict) -> RecalledMemory:
    """A listed memory unit as a recall would return it."""
    return RecalledMemory.model_validate({**item, "type": item.get("type") or item.get("fact_type")})


class TracedQueue:
    """Sends each distinct recall once with a trace; answers it as the server did or under a what-if.

    `prediction_checks` counts, per traced recall, whether the prediction with the server's settings
    returns exactly the server's list (it should: it is the model the what-ifs rest on)."""

    def __init__(self, gateway):
        self.gateway = gateway
        self._responses: dict[str, RecallResponse] = {}
        self._memories: dict[str, dict[str, RecalledMemory]] = {}  # bank -> memory id -> memory
        self.prediction_checks: list[bool] = []

    def traced(self, bank_id: str, query: str, **kwargs: Any) -> RecallResponse:
        key = json.dumps([bank_id, query, kwargs], sort_keys=True, default=str)
        if key not in self._responses:
            response = self.gateway.recall(bank_id, query, trace=True, **kwargs)
            self._responses[key] = response
            if response.trace is not None:
                self.prediction_checks.append(
                    self._predicted_ids(response, WhatIf()) == [m.id for m in response.results]
                )
        return self._responses[key]

    @staticmethod
    def _predicted_ids(response: RecallResponse, whatif: WhatIf) -> list[str]:
        return [c.node_id for c in predict(response.trace, whatif.settings()).returned]

    def _lookup(
        self, bank_id: str, wanted: set[str], tags: list[str] | None, tags_match: str
    ) -> dict[str, RecalledMemory]:
        known = self._memories.setdefault(bank_id, {})
        missing = wanted - set(known)
        offset = 0
        for _ in range(MAX_PAGES):
            if not missing:
                break
            page = self.gateway.list_memories(
                bank_id, tags=tags, tags_match=tags_match if tags else None, limit=MEMORY_PAGE, offset=offset
            )
            items = page.get("items") or []
            for item in items:
                known[item["id"]] = _memory(item)
                missing.discard(item["id"])
            offset += len(items)
            if not items or offset >= int(page.get("total") or 0):
                break
        return known

    def answer(self, whatif: WhatIf | None, bank_id: str, query: str, **kwargs: Any) -> RecallResponse:
        """The server's response (whatif None) or the list the what-if predicts from its trace."""
        response = self.traced(bank_id, query, **kwargs)
        if whatif is None or response.trace is None:
            return response
        prediction = predict(response.trace, whatif.settings())
        own = {m.id: m for m in response.results}
        ids = [c.node_id for c in prediction.returned]
        others = {n for n in ids if n not in own}
        known = self._lookup(bank_id, others, kwargs.get("tags"), kwargs.get("tags_match", "any")) if others else {}
        results = []
        for cand in prediction.returned:
            memory = own.get(cand.node_id) or known.get(cand.node_id)
            if memory is not None:  # a memory deleted since the trace is simply gone
                results.append(memory.model_copy(update={"scores": Scores(final=cand.score)}))
        # The original chunks and observations' sources the server sent stay available to the rules (a memory
        # the prediction adds has none here: its document's text is read from the server where a rule needs it).
        return RecallResponse(results=results, chunks=response.chunks, source_facts=response.source_facts)

    def recall_fn(self, whatif: WhatIf | None):
        """A RecallFn for the domain rules: each call answered under `whatif` (None: as the server answered)."""

        def recall(bank_id: str, query: str, **kwargs: Any) -> RecallResponse:
            return self.answer(whatif, bank_id, query, **kwargs)

        return recall
