"""The finance exception queue as a labelled evidence set, for free: for each case, the relevant
precedents are those of the same vendor and exception type. The query is the agent's own
(`CaseKey.default_query`) WITHOUT tags, so the arms compete as they do in a single untagged recall."""

from __future__ import annotations

from pathlib import Path

from dashboard import demo_data
from dashboard.finance.models import ExceptionCase, Precedent
from dashboard.finance.recall import CaseKey
from dashboard.queue_files import load_rows
from dashboard.traces.evidence import EvidenceCase

SHIPPED_SET = Path(demo_data.__file__).parent / "finance_evidence.jsonl"


def finance_cases(cases: list[ExceptionCase], precedents: list[Precedent]) -> list[EvidenceCase]:
    """One labelled case per queue case that has at least one precedent of its vendor and type."""
    by_key: dict[tuple[str, str], list[str]] = {}
    for p in precedents:
        by_key.setdefault((p.vendor_code, p.exception_type), []).append(p.id)
    out = []
    for case in cases:
        expected = by_key.get((case.vendor_code, case.exception_type))
        if expected:
            out.append(EvidenceCase(query=CaseKey.of(case).default_query(), expected_document_ids=sorted(expected)))
    return out


def demo_finance_cases(exceptions_file: Path | str = demo_data.EXCEPTIONS) -> list[EvidenceCase]:
    return finance_cases(load_rows(exceptions_file, ExceptionCase), load_rows(demo_data.PRECEDENTS, Precedent))
