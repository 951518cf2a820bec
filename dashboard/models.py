"""Domain models: finance exceptions, support tickets, memory records and reviewer decisions."""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

ExceptionType = Literal[
    "price_variance",
    "quantity_mismatch",
    "missing_receipt",
    "duplicate_invoice",
    "tax_mismatch",
]
EXCEPTION_TYPES: tuple[str, ...] = ExceptionType.__args__
Outcome = Literal["approve", "reject", "escalate"]
OUTCOMES: tuple[str, ...] = Outcome.__args__

# Vendor codes become tags (`vendor:V06`): keep them to a plain, tag-safe alphabet.
VENDOR_CODE = re.compile(r"^[A-Z0-9][A-Z0-9_-]{0,19}$")
MAX_TAG_LENGTH = 200


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)


class MemoryRecord(_Strict):
    """One text retained into Hindsight under its own document id (re-retaining replaces it)."""

    document_id: str = Field(min_length=1, max_length=200)
    content: str = Field(min_length=1)
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, str] = Field(default_factory=dict)
    timestamp: datetime | None = None
    context: str | None = None

    @field_validator("tags")
    @classmethod
    def _tags_are_clean(cls, tags: list[str]) -> list[str]:
        for tag in tags:
            if not tag or len(tag) > MAX_TAG_LENGTH or any(ch.isspace() and ch != " " for ch in tag):
                raise ValueError(f"invalid tag {tag!r}: 1-{MAX_TAG_LENGTH} characters, no tabs or newlines")
        return tags

    def as_retain_item(self) -> dict:
        item: dict = {"content": self.content, "document_id": self.document_id, "tags": self.tags}
        if self.metadata:
            item["metadata"] = self.metadata
        if self.timestamp:
            item["timestamp"] = self.timestamp.isoformat()
        if self.context:
            item["context"] = self.context
        return item


def vendor_tag(code: str) -> str:
    return f"vendor:{code}"


def type_tag(exception_type: str) -> str:
    return f"type:{exception_type}"


class _HasVendor(_Strict):
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

    id: str = Field(min_length=1)
    vendor_name: str = Field(min_length=1)
    invoice: str = Field(min_length=1)
    po: str = Field(min_length=1)
    invoice_amount: float = Field(ge=0)
    po_amount: float = Field(ge=0)
    description: str = Field(min_length=1, max_length=2000)
    opened_on: date

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


class Customer(_Strict):
    name: str = Field(min_length=1, max_length=120)
    segment: str = ""


class Ticket(_Strict):
    id: str = Field(min_length=1)
    customer: str = Field(min_length=1, max_length=120)
    issue: str = Field(min_length=1, max_length=4000)
    drafted_response: str = Field(min_length=1, max_length=8000)
    opened_on: date


class SupportInteraction(_Strict):
    """A past support interaction, as seeded; `tagged` False means the legacy untagged format."""

    id: str
    customer: str
    text: str
    tagged: bool
    note: str = ""  # what the record is in the demo (e.g. a decoy), for people reading the data


class ReviewerDecision(_Strict):
    """A reviewer's approve/override of an agent recommendation; retained back as memory."""

    case_id: str = Field(min_length=1)
    case_kind: Literal["exception", "ticket"]
    reviewer: str = Field(min_length=1, max_length=120)
    authenticated: bool
    outcome: Outcome
    overridden: bool
    reason_code: str | None = None
    note: str = Field(default="", max_length=4000)
    agent_recommendation: Outcome | None = None
    cited_evidence: list[str] = Field(default_factory=list)
    decided_at: datetime
    # Support tickets: what the reviewer did with the drafted response, and the response that was approved.
    ticket_action: Literal["approve", "edit_and_approve", "override"] | None = None
    final_response: str | None = Field(default=None, max_length=8000)
