"""Purchase-order disputes: a third queue kind that exists only in the tests, registered by one line
(RECALL_REVIEW_KINDS=tests.kinds.disputes:DISPUTES). It proves the contract (dashboard/review/queue_kind.py) carries
a kind through the whole product without an edit outside this package, declared as data on the tag-scoped base
(dashboard/review/tag_scoped.py): recall on `supplier:S01` + `dispute:short_shipment` (pass 1 all_strict, pass 2
any_strict to fill k), relevant = same supplier AND dispute type, an override needs a reason code."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.tag_scoped import TagScopedKind
from dashboard.strict import StrictModel

HERE = Path(__file__).resolve().parent


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


def precedent(n: int, supplier: str, dispute_type: str, outcome: str, text: str) -> MemoryRecord:
    """A past dispute's decision, as the seed writes it."""
    return MemoryRecord(
        document_id=f"DISPUTE-PREC-{n:03d}",
        content=f"Supplier {supplier}, {dispute_type.replace('_', ' ')}: {text} Decision: {outcome}.",
        tags=[f"supplier:{supplier}", f"dispute:{dispute_type}", "kind:decision"],
        metadata={"outcome": outcome, "decided_on": f"2026-10-{n:02d}"},
    )


class DisputesKind(TagScopedKind):
    name, key, title, nouns = "dispute", "disputes", "Purchase-order disputes", ("dispute", "disputes")
    icon, url_path, page = ":material/gavel:", "disputes", HERE / "page.py"
    default_bank, default_cases, holds = (
        "recall-review-disputes",
        HERE / "disputes.csv",
        "purchase-order dispute decisions",
    )
    model, amount_field = Dispute, "amount"
    scope_tags = {"supplier": "supplier", "dispute": "dispute_type"}
    query_fields = ("dispute_type", "supplier", "supplier_name", "description")
    column_fields = {"supplier": "supplier", "type": "dispute_type", "amount": "amount"}
    outcomes = {
        "credit": "accept the dispute: ask for a credit note",
        "reject": "reject the dispute: pay in full",
        "escalate": "escalate to procurement",
    }
    reason_codes = {
        "SHORTAGE_CONFIRMED": "Shortage confirmed by the warehouse",
        "PRICE_PER_CONTRACT": "The price is the contract's",
        "DAMAGE_SHOWN": "Damage shown on delivery",
        "OTHER": "Other (explain in the note)",
    }
    seed = (
        precedent(
            1,
            "S01",
            "short_shipment",
            "credit",
            "Twelve cartons short on delivery; warehouse count confirmed the shortage.",
        ),
        precedent(2, "S01", "short_shipment", "credit", "Two pallets missing from the shipment; credit note agreed."),
        precedent(3, "S01", "price_dispute", "reject", "Supplier billed the list price; the contract price applied."),
        precedent(
            4, "S02", "short_shipment", "reject", "Shortage claimed but the signed delivery note showed the full count."
        ),
        precedent(
            5, "S02", "damaged_goods", "credit", "Crushed boxes photographed on arrival; credit for the damaged units."
        ),
    )


DISPUTES = DisputesKind()
SEED = DISPUTES.seed
