"""The AP finance agent of seed 000, deterministic (no LLM), recalling through the real gateway.

- `reviewed`: the two-stage recall with human decisions first and its own decision excluded, relevance
  flags, the guard and the recommendation policy (dashboard.finance.policy).
- `seed`: the two-stage recall exactly as the AP seed (pass 1 all_strict on vendor + type, pass 2
  any_strict only to fill k, dedupe), then the same relevance, guard and policy.
- `naive`: one any_strict pass, top k documents, no relevance filter: every recalled document votes (the
  seed's failure mode: another vendor's precedents decide), and every record is taken as it presents itself (a
  record tagged `source:reviewer` has a reviewer's authority: the poisoning Hindsight's users reported).

Every variant's run records, for each record it recalled, who wrote it as far as its signature proves, what the screen
found in its text and whether it was set aside (finance.trust), and the untrusted records its recommendation turned
on (`swung_by`): the incidents are judged on them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, datetime

from dashboard.agents.snapshots import RecordingRecall, label_for
from dashboard.finance.decisions import document_id_for
from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import Recommendation, as_they_claim, assess, is_relevant, recommend, swung_by
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
from dashboard.finance.trust import mark_trust
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import group
from dashboard.store.agent_runs import AgentRun
from dashboard.trust.bursts import AskServer
from dashboard.trust.origin import OriginOf

VARIANTS = ("reviewed", "seed", "naive")


def _naive(
    recall: RecallFn,
    bank_id: str,
    key: CaseKey,
    query: str,
    k: int,
    origin: OriginOf | None,
    ask_server: AskServer | None,
) -> tuple[TwoStageResult, Recommendation]:
    req = {"tags": key.tags, "tags_match": "any_strict", "max_tokens": max_tokens_for(k), "budget": LEAN_BUDGET}
    grouped = group(recall(bank_id, query, **req))
    found = grouped.documents[:k]
    # No relevance filter: each document is taken as a precedent for this case.
    records = [
        PrecedentEvidence.of(d, "broader", i + 1).model_copy(update={"relevant": True}) for i, d in enumerate(found)
    ]
    result = TwoStageResult(
        bank_id=bank_id,
        query=query,
        key=key,
        k=k,
        exact=[],
        broader=records,
        pass1=PassInfo(returned=len(found), facts=grouped.facts, **req),
        calls=1,
    )
    judged = mark_trust(
        result, origin, ask_server
    )  # what the run records of each record; the naive agent itself trusts them all
    return judged, recommend(as_they_claim(judged), untrusted_decides=True)  # nor does it escalate what they swing


def _single_label(tags, tags_match) -> str:
    return "single" if tags_match == "any_strict" else label_for(tags, tags_match)


def run_finance_agent(
    recall: RecallFn,
    bank_id: str,
    case: ExceptionCase,
    variant: str = "reviewed",
    *,
    k: int = DEFAULT_K,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    origin: OriginOf | None = None,
    ask_server: AskServer | None = None,
) -> AgentRun:
    """One run on one case; audit ids are filled in afterwards (audit_sync.resolve_audit_ids). `origin`: the review
    store's check of a record's signature (origin.provenance.Provenance.origin); `ask_server`: the bank's server on bursts
    (hindsight/write_facts.asker), as on the case page."""
    if variant not in VARIANTS:
        raise ValueError(f"variant: must be one of {', '.join(VARIANTS)}, got {variant!r}")
    started = clock()
    key, query = CaseKey.of(case), case.recall_query()
    recorder = RecordingRecall(recall, _single_label if variant == "naive" else label_for, origin)
    if variant == "naive":
        result, rec = _naive(recorder, bank_id, key, query, k, origin, ask_server)
    else:
        own = document_id_for(case.id) if variant == "reviewed" else None
        raw = two_stage_recall(
            recorder, bank_id, key, query, k=k, own_document=own, decisions_first=variant == "reviewed"
        )
        result, rec = assess(raw, origin, ask_server=ask_server)
    return AgentRun(
        run_id=uuid.uuid4().hex,
        bank_id=bank_id,
        case_kind="exception",
        case_id=case.id,
        agent="finance",
        variant=variant,
        started_at=started,
        ended_at=clock(),
        audit_log=False,
        recalls=recorder.snapshots,
        cited=list(rec.cited),
        output={
            "action": rec.action,
            "confidence": rec.confidence,
            "cited": list(rec.cited),
            "rationale": rec.rationale,
            "policy": rec.policy,
            "vendor_code": case.vendor_code,
            "exception_type": case.exception_type,
            "k": k,
            "evidence": [
                # relevance as the record's tags say, whatever the variant believed
                {
                    "ref": r.ref,
                    "id": r.id,
                    "pass": r.pass_,
                    "relevant": is_relevant(r, key),
                    "human": r.human,
                    "origin": r.origin.kind,
                    "forged": r.origin.forged,
                    "flags": [f.rule for f in r.flags],
                    "set_aside": r.set_aside,
                }
                for r in result.records
            ],
            "swung_by": swung_by(result, rec),
        },
    )
