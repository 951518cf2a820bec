"""Finance exceptions as a queue kind (review.queue_kind.QueueKind): the accounts-payable agent's two-stage recall,
relevance (same vendor AND type), the recommendation, and the precedent a decision is retained as. Its pages live beside it
(finance/pages/, on top of this domain: nothing here imports them or Streamlit); this is what the shared rooms and
`decide --kind finance` use."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from dashboard.demo_data import EXCEPTIONS, PRECEDENTS
from dashboard.finance.decisions import (
    REASON_CODES,
    document_id_for,
    exception_decision,
    exception_proposal,
    reasons_for,
)
from dashboard.finance.models import OUTCOME_WORDS, VENDOR_PREFIX, ExceptionCase, Precedent, decision_scope, vendor_tag
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, PrecedentEvidence, TwoStageResult, two_stage_recall
from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.wire import MemoryRecord
from dashboard.queue_files import load_rows
from dashboard.review.decisions import Proposal
from dashboard.review.queue_kind import CaseView, Choice, EvidenceRecord
from dashboard.review.tag_scoped import KindBase


def _shown(record: PrecedentEvidence, case: ExceptionCase) -> EvidenceRecord:
    if record.relevant:
        why = "same vendor and type"
    elif vendor_tag(case.vendor_code) not in record.tags:
        why = "another vendor's precedent"
    else:
        why = "a precedent of another exception type"
    return EvidenceRecord(ref=record.ref, text=record.text, tags=record.tags, relevant=record.relevant, why=why)


def evidence_records(result: TwoStageResult, case: ExceptionCase) -> list[EvidenceRecord]:
    """The case's exact and broader evidence as any kind's page judges it (what an agent's citations are held against)."""
    return [_shown(r, case) for r in [*result.exact, *result.broader]]


PAGES = Path(__file__).parent / "pages"  # its page scripts, named by path: the domain never imports them


class FinanceKind(KindBase):
    name, key, title, nouns = "exception", "finance", "Finance exceptions", ("exception", "exceptions")
    icon, url_path, page = ":material/receipt_long:", "exceptions", PAGES / "exceptions.py"
    pages_package = "dashboard.finance.pages"
    default_bank, default_cases = "recall-review-finance", EXCEPTIONS
    holds, report_by = "finance precedents", VENDOR_PREFIX
    outcomes = OUTCOME_WORDS
    kind_fields = ()
    model = ExceptionCase

    @property
    def seed(self) -> list[MemoryRecord]:
        """The demo precedents (demo_data/precedents.csv) `python -m dashboard seed` retains."""
        return [p.to_record() for p in load_rows(PRECEDENTS, Precedent)]

    def columns(self, case: ExceptionCase) -> dict[str, object]:
        return {
            "vendor": case.vendor_code,
            "type": case.exception_type.replace("_", " "),
            "amount": case.invoice_amount,
        }

    def describe(self, case: ExceptionCase) -> str:
        return f"{case.id}: {case.vendor_code} {case.vendor_name}, {case.exception_type.replace('_', ' ')}"

    def reasons(self, case: ExceptionCase, configured: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
        return reasons_for(case.exception_type, configured)

    def label_groups(self, ids: set[str], cases: Sequence[ExceptionCase], settings=None) -> dict[str, dict[str, str]]:
        return {c.id: {"vendor": c.vendor_code, "type": c.exception_type} for c in cases if c.id in ids}

    def scope(self, case: ExceptionCase) -> str:
        return decision_scope(case.vendor_code, case.exception_type)

    def focus(self, case: ExceptionCase) -> tuple[tuple[str, ...], str]:
        return tuple(CaseKey.of(case).tags), f"vendor {case.vendor_code}, {case.exception_type.replace('_', ' ')}"

    def recall(self, recall: RecallFn, bank_id: str, case: ExceptionCase, origin: Callable | None = None) -> CaseView:
        result = two_stage_recall(
            recall, bank_id, CaseKey.of(case), case.recall_query(), own_document=document_id_for(case.id)
        )
        result, rec = assess(result, origin)
        return CaseView(
            case_id=case.id,
            exact=[_shown(r, case) for r in result.exact],
            broader=[_shown(r, case) for r in result.broader],
            recommendation=rec.action,
            rationale=rec.rationale,
            native=(result, rec),
        )

    def propose(
        self, case: ExceptionCase, view: CaseView, choice: Choice, reasons: Mapping[str, str] = REASON_CODES
    ) -> Proposal:
        result, rec = view.native
        action = "accept_recommendation" if choice.outcome == rec.action else "override"
        decision = exception_decision(
            case,
            rec,
            reviewer=choice.reviewer,
            authenticated=choice.authenticated,
            action=action,
            outcome=choice.outcome,
            reason_code=choice.reason_code,
            note=choice.note,
            now=lambda: choice.decided_at,
            reasons=reasons,
            agent=choice.agent,
        )  # DecisionInputError names the field
        return exception_proposal(
            case, decision, rec, result, reasons, base_revision=choice.base_revision, shown=choice.shown
        )


FINANCE = FinanceKind()
__all__ = ["FINANCE", "FinanceKind"]
