"""The AP finance agent of seed 000, deterministic (no LLM), recalling through the real gateway.

- `reviewed`: the two-stage recall with human decisions first and its own decision excluded, relevance
  flags, the guard and the recommendation policy (dashboard.finance.policy).
- `seed`: the two-stage recall exactly as the AP seed (pass 1 all_strict on vendor + type, pass 2
  any_strict only to fill k, dedupe), then the same relevance, guard and policy.
- `naive`: one any_strict pass, top k documents, no relevance filter: every recalled document votes (the
  seed's failure mode: another vendor's precedents decide).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from dashboard.agents.snapshots import RecordingRecall, label_for
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation, assess, is_relevant, recommend
from dashboard.finance.recall import (
    DEFAULT_K,
    LEAN_BUDGET,
    CaseKey,
    PassInfo,
    PrecedentEvidence,
    TwoStageResult,
    max_tokens_for,
    two_stage_recall,
)
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import group
from dashboard.review.agent_runs import AgentRun

VARIANTS = ("reviewed", "seed", "naive")


def _naive(recall: RecallFn, bank_id: str, key: CaseKey, query: str, k: int) -> tuple[TwoStageResult, Recommendation]:
    req = {"tags": key.tags, "tags_match": "any_strict", "max_tokens": max_tokens_for(k), "budget": LEAN_BUDGET}
    grouped = group(recall(bank_id, query, **req))
    found = grouped.documents[:k]
    # No relevance filter: each document is taken as a precedent for this case.
    records = [PrecedentEvidence.of(d, "broader", i + 1).model_copy(update={"relevant": True}) for i, d in enumerate(found)]
    result = TwoStageResult(
        bank_id=bank_id, query=query, key=key, k=k, exact=[], broader=records,
        pass1=PassInfo(returned=len(found), facts=grouped.facts, **req), calls=1,
    )
    return result, recommend(result)


def _single_label(tags, tags_match) -> str:
    return "single" if tags_match == "any_strict" else label_for(tags, tags_match)


def run_finance_agent(
    recall: RecallFn, bank_id: str, case: ExceptionCase, variant: str = "reviewed", *, k: int = DEFAULT_K,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> AgentRun:
    """One run on one case; audit ids are filled in afterwards (audit_sync.resolve_audit_ids)."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {', '.join(VARIANTS)}, got {variant!r}")
    started = clock()
    key, query = CaseKey.of(case), case.recall_query()
    recorder = RecordingRecall(recall, _single_label if variant == "naive" else label_for)
    if variant == "naive":
        result, rec = _naive(recorder, bank_id, key, query, k)
    else:
        own = document_id_for(case.id) if variant == "reviewed" else None
        raw = two_stage_recall(recorder, bank_id, key, query, k=k, own_document=own, decisions_first=variant == "reviewed")
        result, rec = assess(raw)
    return AgentRun(
        run_id=uuid.uuid4().hex, bank_id=bank_id, case_kind="exception", case_id=case.id, agent="finance",
        variant=variant, started_at=started, ended_at=clock(), audit_log=False, recalls=recorder.snapshots,
        cited=list(rec.cited),
        output={
            "action": rec.action, "confidence": rec.confidence, "cited": list(rec.cited), "rationale": rec.rationale,
            "policy": rec.policy, "vendor_code": case.vendor_code, "exception_type": case.exception_type, "k": k,
            "evidence": [
                # relevance as the record's tags say, whatever the variant believed
                {"ref": r.ref, "id": r.id, "pass": r.pass_, "relevant": is_relevant(r, key), "human": r.human}
                for r in result.records
            ],
        },
    )
