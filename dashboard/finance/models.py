"""Finance domain models: the AP exceptions in the queue and the seeded precedents."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Literal

from pydantic import ConfigDict, Field, field_validator

from dashboard.hindsight.wire import MemoryRecord
from dashboard.store.decision import Outcome
from dashboard.strict import StrictModel

# An outcome as a finance clerk reads it: to them "approve" means "pay the invoice", so it says so.
OUTCOME_WORDS: dict[str, str] = {"approve": "approve for payment", "reject": "reject", "escalate": "escalate"}

ExceptionType = Literal[
    "price_variance",
    "quantity_mismatch",
    "missing_receipt",
    "duplicate_invoice",
    "tax_mismatch",
]
EXCEPTION_TYPES: tuple[str, ...] = ExceptionType.__args__
# Vendor codes become tags (`vendor:V06`): keep them to a plain, tag-safe alphabet.
VENDOR_CODE = re.compile(r"^[A-Z0-9][A-Z0-9_-]{0,19}$")

# Reviewer decisions carry this tag besides `vendor:`/`type:`/`kind:decision` (seeded precedents do not),
# so one all_strict recall finds the latest human decisions however many older precedents exist.
REVIEWER_TAG = "source:reviewer"


VENDOR_PREFIX = "vendor"  # a record's vendor tag, `vendor:V01`; what the Overview groups finance overrides by


def vendor_tag(code: str) -> str:
    return f"{VENDOR_PREFIX}:{code}"


def type_tag(exception_type: str) -> str:
    return f"type:{exception_type}"


def decision_scope(vendor_code: str, exception_type: str) -> str:
    """What a decision changes in memory: the recalls of its vendor AND type (review.freshness)."""
    return f"{vendor_tag(vendor_code)}+{type_tag(exception_type)}"


class _HasVendor(StrictModel):
    vendor_code: str
    exception_type: ExceptionType

    @field_validator("vendor_code")
    @classmethod
    def _vendor_code(cls, code: str) -> str:
        if not VENDOR_CODE.match(code):
            raise ValueError(f"vendor code {code!r} must be 1-20 of A-Z, 0-9, '_' or '-', starting alphanumeric")
        return code


class Precedent(_HasVendor):
    """A past AP decision, as seeded into the finance bank."""

    id: str
    vendor_name: str
    outcome: Outcome
    decided_on: date
    invoice: str
    summary: str
    rationale: str

    def to_record(self) -> MemoryRecord:
        text = (
            f"Vendor {self.vendor_code} ({self.vendor_name}) {self.exception_type.replace('_', ' ')} "
            f"on invoice {self.invoice}. {self.summary} Decision: {self.outcome}. Rationale: {self.rationale}"
        )
        return MemoryRecord(
            document_id=self.id,
            content=text,
            tags=[vendor_tag(self.vendor_code), type_tag(self.exception_type), "kind:decision"],
            metadata={
                "vendor_code": self.vendor_code,
                "exception_type": self.exception_type,
                "outcome": self.outcome,
                "decided_on": self.decided_on.isoformat(),
                "source": "seed",
            },
            timestamp=datetime.combine(self.decided_on, datetime.min.time()),
            context="AP exception decision",
        )


class ExceptionCase(_HasVendor):
    """An open AP exception waiting for review."""

    model_config = ConfigDict(frozen=True)  # shared by every run that reads the same queue file (load_rows)

    # Ids and names are limited at import: they reach headers, document ids and the review store.
    id: str = Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")
    vendor_name: str = Field(min_length=1, max_length=200)
    invoice: str = Field(min_length=1, max_length=64)
    po: str = Field(min_length=1, max_length=64)
    invoice_amount: float = Field(ge=0)
    po_amount: float = Field(ge=0)
    description: str = Field(min_length=1, max_length=2000)
    opened_on: date
    # Optional columns for the match status (finance/matching.py); absent means not known, never guessed.
    invoiced_quantity: float | None = Field(default=None, ge=0)
    received_quantity: float | None = Field(default=None, ge=0)
    received_amount: float | None = Field(default=None, ge=0)
    tolerance_pct: float | None = Field(default=None, ge=0, le=100)  # allowed difference, % of the PO or receipt

    @property
    def variance(self) -> float:
        return round(self.invoice_amount - self.po_amount, 2)

    @property
    def variance_pct(self) -> float | None:
        return round(100 * self.variance / self.po_amount, 1) if self.po_amount else None

    def recall_query(self) -> str:
        # No "Label:" prefix: Hindsight 1.1.0's temporal analyser fails on `Vendor V01: ...`.
        return f"{self.exception_type.replace('_', ' ')} for vendor {self.vendor_code} {self.vendor_name} {self.description}"

    @property
    def tags(self) -> list[str]:
        return [vendor_tag(self.vendor_code), type_tag(self.exception_type)]
