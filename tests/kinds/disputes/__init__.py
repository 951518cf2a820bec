"""Purchase-order disputes: a third queue kind that exists only in the tests, registered by one line
(RECALL_REVIEW_KINDS=tests.kinds.disputes:DISPUTES). It proves the contract (dashboard/review/queue_kind.py) carries
a kind through the whole product without an edit outside this package.

A supplier disputes a purchase order (short shipment, price, damaged goods). Its recall is two-stage: pass 1
`all_strict` on `supplier:S01` + `dispute:short_shipment` (exact precedents), pass 2 `any_strict` on the same tags
only to fill the rest of k, deduplicated. Relevant = same supplier AND same dispute type. The newest relevant
decision a reviewer is proven to have made wins; else the relevant precedents' majority; none: escalate.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import RecalledDocument, recall_documents
from dashboard.hindsight.wire import MemoryRecord, tag_value
from dashboard.queue_files import shared_rows
from dashboard.review.decision import NOTE_MAX_CHARS, ReviewerDecision
from dashboard.review.decisions import Proposal
from dashboard.review.errors import InputError
from dashboard.review.queue_kind import CaseView, Choice, EvidenceRecord
from dashboard.strict import StrictModel

HERE = Path(__file__).resolve().parent
K = 5
OUTCOMES = {"credit": "accept the dispute: ask for a credit note", "reject": "reject the dispute: pay in full",
            "escalate": "escalate to procurement"}
REASONS = {"SHORTAGE_CONFIRMED": "Shortage confirmed by the warehouse", "PRICE_PER_CONTRACT": "The price is the contract's",
           "DAMAGE_SHOWN": "Damage shown on delivery", "OTHER": "Other (explain in the note)"}


class Dispute(StrictModel):
    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")
    supplier: str = Field(pattern=r"^S\d{2}$")
    supplier_name: str = Field(min_length=1, max_length=200)
    dispute_type: Literal["short_shipment", "price_dispute", "damaged_goods"]
    po: str = Field(min_length=1, max_length=64)
    amount: float = Field(ge=0)
    description: str = Field(min_length=1, max_length=2000)
    opened_on: date

    @property
    def tags(self) -> list[str]:
        return [f"supplier:{self.supplier}", f"dispute:{self.dispute_type}"]

    def query(self) -> str:
        return f"{self.dispute_type.replace('_', ' ')} dispute with supplier {self.supplier} {self.supplier_name} {self.description}"


def document_id_for(case_id: str) -> str:
    return f"dispute-decision-{case_id}"


def precedent(n: int, supplier: str, dispute_type: str, outcome: str, text: str) -> MemoryRecord:
    """A past dispute's decision, as the seed writes it."""
    return MemoryRecord(document_id=f"DISPUTE-PREC-{n:03d}", content=f"Supplier {supplier}, {dispute_type.replace('_', ' ')}: {text} Decision: {outcome}.",
                        tags=[f"supplier:{supplier}", f"dispute:{dispute_type}", "kind:decision"],
                        metadata={"outcome": outcome, "decided_on": f"2026-10-{n:02d}"})


def _relevant(document: RecalledDocument, case: Dispute) -> bool:
    return tag_value(document.tags, "supplier") == case.supplier and tag_value(document.tags, "dispute") == case.dispute_type


class DisputesKind:
    name, key, title, nouns = "dispute", "disputes", "Purchase-order disputes", ("dispute", "disputes")
    icon, url_path, page = ":material/gavel:", "disputes", HERE / "page.py"
    default_bank, default_cases, holds = "recall-review-disputes", HERE / "disputes.csv", "purchase-order dispute decisions"
    report_by = "supplier"
    outcomes = OUTCOMES
    kind_fields = ()
    model = Dispute

    def load(self, path: Path) -> tuple[Dispute, ...]:
        return shared_rows(path, Dispute)

    def columns(self, case: Dispute) -> dict[str, object]:
        return {"supplier": case.supplier, "type": case.dispute_type.replace("_", " "), "amount": case.amount}

    def describe(self, case: Dispute) -> str:
        return f"{case.id}: {case.supplier} {case.supplier_name}, {case.dispute_type.replace('_', ' ')}"

    def reasons(self, case: Dispute, configured: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
        return dict(REASONS)

    def label_groups(self, ids: set[str], cases: Sequence[Dispute], settings) -> dict[str, dict[str, str]]:
        return {c.id: {"supplier": c.supplier} for c in cases if c.id in ids}

    def scope(self, case: Dispute) -> str:
        return "+".join(case.tags)

    def focus(self, case: Dispute) -> tuple[tuple[str, ...], str]:
        return tuple(case.tags), f"supplier {case.supplier}, {case.dispute_type.replace('_', ' ')}"

    def recall(self, recall: RecallFn, bank_id: str, case: Dispute, origin: Callable | None = None) -> CaseView:
        own = document_id_for(case.id)
        passes = []
        for match in ("all_strict", "any_strict"):  # the second only fills what the first left of k
            found, _ = recall_documents(recall, bank_id, case.query(), want=K, max_tokens=4096, cap=16384, tags=case.tags, tags_match=match)
            passes.append(list(found.without(own).documents))
            if len(passes[0]) >= K:
                break
        exact = passes[0][:K]
        seen = {d.ref for d in exact}
        broader = [d for d in (passes[1] if len(passes) > 1 else []) if d.ref not in seen][: K - len(exact)]
        relevant = [d for d in [*exact, *broader] if _relevant(d, case)]
        proven = [d for d in relevant if origin is not None and origin(d.document_id, d.tags, d.metadata).reviewer]
        votes = Counter(d.metadata.get("outcome") for d in relevant if d.metadata.get("outcome") in OUTCOMES)
        if proven:
            newest = max(proven, key=lambda d: d.metadata.get("decided_on", ""))
            recommendation, why = newest.metadata["outcome"], f"a reviewer decided this supplier's {case.dispute_type.replace('_', ' ')} ({newest.ref})"
        elif votes:
            recommendation, why = votes.most_common(1)[0][0], f"{votes.most_common(1)[0][1]} of {len(relevant)} relevant precedents"
        else:
            recommendation, why = "escalate", "no precedent of this supplier and dispute type"

        def shown(d: RecalledDocument) -> EvidenceRecord:
            ok = _relevant(d, case)
            return EvidenceRecord(ref=d.ref, text=d.text, tags=d.tags, relevant=ok, why="same supplier and type" if ok else "another supplier or type")

        return CaseView(case_id=case.id, exact=[shown(d) for d in exact], broader=[shown(d) for d in broader],
                        recommendation=recommendation, rationale=f"Because: {why}.", native=[d.ref for d in relevant])

    def propose(self, case: Dispute, view: CaseView, choice: Choice, reasons: Mapping[str, str] = REASONS) -> Proposal:
        reviewer, note = choice.reviewer.strip(), choice.note.strip()
        if not reviewer:
            raise InputError("reviewer", "a reviewer name is required")
        if choice.outcome not in OUTCOMES:
            raise InputError("outcome", f"one of {', '.join(OUTCOMES)}")
        overridden = choice.outcome != view.recommendation
        if choice.reason_code is not None and choice.reason_code not in reasons:
            raise InputError("reason_code", f"one of {', '.join(reasons)}")
        if overridden and choice.reason_code is None:
            raise InputError("reason_code", "an override needs a reason code")
        if choice.reason_code == "OTHER" and not note:
            raise InputError("note", "reason OTHER needs a note that explains it")
        if len(note) > NOTE_MAX_CHARS:
            raise InputError("note", f"the note is {len(note):,} characters; the limit is {NOTE_MAX_CHARS:,}")
        decision = ReviewerDecision(
            case_id=case.id, case_kind=self.name, reviewer=reviewer, authenticated=choice.authenticated, outcome=choice.outcome,
            overridden=overridden, reason_code=choice.reason_code, note=note, agent_recommendation=view.recommendation,
            cited_evidence=list(view.native or []), decided_at=choice.decided_at, action_words=OUTCOMES[choice.outcome],
            report_by=self.report_by,
        )
        text = (f"Supplier {case.supplier} ({case.supplier_name}), {case.dispute_type.replace('_', ' ')} on {case.po}, "
                f"dispute {case.id}. {case.description} Decision: {choice.outcome}, by reviewer {reviewer}."
                + (f" Reason: {reasons[choice.reason_code]}." if choice.reason_code else "") + (f" Note: {note}" if note else ""))
        record = MemoryRecord(
            document_id=document_id_for(case.id), content=text, tags=[*case.tags, "kind:decision", "source:reviewer"],
            metadata={"outcome": choice.outcome, "decided_on": choice.decided_at.date().isoformat(), "dispute_id": case.id,
                      "reviewer": reviewer, "source": "reviewer"},
            timestamp=choice.decided_at, context="purchase-order dispute decision",
        )
        return Proposal(decision=decision, record=record, scope=self.scope(case), base_revision=choice.base_revision,
                        evidence=view.snapshot(), amount=case.amount, shown=choice.shown)


DISPUTES = DisputesKind()
SEED: Sequence[MemoryRecord] = (
    precedent(1, "S01", "short_shipment", "credit", "Twelve cartons short on delivery; warehouse count confirmed the shortage."),
    precedent(2, "S01", "short_shipment", "credit", "Two pallets missing from the shipment; credit note agreed."),
    precedent(3, "S01", "price_dispute", "reject", "Supplier billed the list price; the contract price applied."),
    precedent(4, "S02", "short_shipment", "reject", "Shortage claimed but the signed delivery note showed the full count."),
    precedent(5, "S02", "damaged_goods", "credit", "Crushed boxes photographed on arrival; credit for the damaged units."),
)
