"""Customer returns: a fifth queue kind, only in the tests, declared as data on the tag-scoped base
(dashboard/review/tag_scoped.py) to show how little a kind of that shape is. Registered by one line:
RECALL_REVIEW_KINDS=tests.kinds.returns:RETURNS."""

from datetime import date
from pathlib import Path
from typing import Literal

from pydantic import ConfigDict, Field

from dashboard.hindsight.wire import MemoryRecord
from dashboard.review.tag_scoped import TagScopedKind
from dashboard.strict import StrictModel

HERE = Path(__file__).resolve().parent


class Return(StrictModel):
    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1, max_length=64, pattern=r"^[^\x00-\x1f\x7f]+$")
    product: str = Field(pattern=r"^P\d{2}$")
    reason: Literal["damaged", "wrong_item", "changed_mind"]
    customer: str = Field(min_length=1, max_length=200)
    value: float = Field(ge=0)
    story: str = Field(min_length=1, max_length=2000)
    opened_on: date


def past(n: int, product: str, reason: str, outcome: str, text: str) -> MemoryRecord:
    return MemoryRecord(
        document_id=f"RETURN-PREC-{n:03d}",
        content=f"Product {product}, returned {reason.replace('_', ' ')}: {text}",
        tags=[f"product:{product}", f"return:{reason}", "kind:decision"],
        metadata={"outcome": outcome, "decided_on": f"2026-09-{n:02d}"},
    )


class ReturnsKind(TagScopedKind):
    name, key, title, nouns = "return", "returns", "Customer returns", ("return", "returns")
    icon, url_path, page = ":material/assignment_return:", "returns", HERE / "page.py"
    default_bank, default_cases, holds = "recall-review-returns", HERE / "returns.csv", "customer return decisions"
    model, amount_field = Return, "value"
    scope_tags = {"product": "product", "return": "reason"}
    query_fields = ("reason", "product", "story")
    column_fields = {"product": "product", "reason": "reason", "customer": "customer", "value": "value"}
    outcomes = {"refund": "refund the customer", "replace": "send a replacement", "refuse": "refuse the return"}
    reason_codes = {"OUTSIDE_WINDOW": "Returned outside the return window", "OTHER": "Other (explain in the note)"}
    fallback = "refuse"
    seed = (
        past(1, "P01", "damaged", "replace", "Cracked screen on arrival; a replacement was sent."),
        past(2, "P01", "damaged", "replace", "Scratched casing out of the box; replaced."),
        past(3, "P01", "changed_mind", "refund", "Unopened, within the window; refunded."),
        past(4, "P02", "damaged", "refund", "Torn seam; the model is discontinued, so refunded."),
    )


RETURNS = ReturnsKind()
