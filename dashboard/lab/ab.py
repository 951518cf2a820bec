"""A/B on the same queue: run the finance exception queue and the support tickets under two recall
configurations and say, per case, what changes for the agent. Plain Python, no Streamlit.

A variant is the server as it is, a bank configuration applied to CLONES of the finance and support
banks (`enable_graph_retrieval`, `enable_text_search`, `enable_temporal_retrieval`, recall budgets),
another Hindsight URL (another version or other server settings), or a what-if setting (arm weights,
per-arm cap, BM25 gate; `lab.whatif`): then each recall is sent once with a trace and both variants'
answers come from it (the server's own, or predicted). Clones are named `ab-<variant>-<bank>-<stamp>`
and deleted when the comparison is closed (`with Comparison(...)`). Precedents and legacy records are
compared by DOCUMENT id: a clone's memories get new memory ids.
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from dashboard.finance.models import ExceptionCase
from dashboard.finance.policy import assess
from dashboard.finance.recall import CaseKey, two_stage_recall
from dashboard.hindsight.errors import HindsightError
from dashboard.lab.whatif import TracedQueue, WhatIf
from dashboard.strict import StrictModel
from dashboard.support.models import Ticket
from dashboard.support.recall import recall_for_ticket

BANK_SETTINGS = (
    "enable_graph_retrieval",
    "enable_text_search",
    "enable_temporal_retrieval",
    "recall_budget_fixed_low",
    "recall_budget_fixed_mid",
    "recall_budget_fixed_high",
)


class Variant(StrictModel):
    name: str = Field(min_length=1, max_length=20, pattern=r"^[a-z0-9-]+$")
    kind: Literal["server", "bank_config", "url", "whatif"] = "server"
    bank_config: dict[str, bool | int] = Field(default_factory=dict)
    url: str | None = None
    whatif: WhatIf | None = None

    def describe(self) -> str:
        if self.kind == "bank_config":
            return "clone with " + ", ".join(f"{k}={v}" for k, v in sorted(self.bank_config.items()))
        if self.kind == "whatif":
            return (self.whatif or WhatIf()).describe()
        return f"Hindsight at {self.url}" if self.kind == "url" else "the server as it is"


@dataclass
class CaseOutcome:
    case_id: str
    kind: Literal["exception", "ticket"]
    latency_ms: float
    exact: list[str] = field(default_factory=list)  # finance: exact precedents (document ids)
    recommendation: str | None = None
    legacy_admitted: list[str] = field(default_factory=list)  # support: admitted legacy records
    path: str | None = None
    error: str | None = None


@dataclass
class OpenVariant:
    variant: Variant
    gateway: object  # a HindsightGateway
    finance_bank: str
    support_bank: str
    clones: list[str] = field(default_factory=list)
    recall: Callable | None = None  # a RecallFn; None: the gateway's own recall

    def recall_fn(self) -> Callable:
        return self.recall or self.gateway.recall


class Comparison:
    """Opens both variants (cloning banks where asked) and deletes its clones when closed."""

    def __init__(
        self,
        gateway,
        finance_bank: str,
        support_bank: str,
        a: Variant,
        b: Variant,
        open_gateway: Callable[[str], object] | None = None,
    ):
        if a.name == b.name:
            raise ValueError("the two variants need different names")
        kinds = {a.kind, b.kind}
        if "whatif" in kinds and not kinds <= {"whatif", "server"}:
            raise ValueError(
                "a what-if is predicted from the traces of the server as it is: compare it with the server as it is "
                "or with another what-if"
            )
        self.gateway, self.finance_bank, self.support_bank = gateway, finance_bank, support_bank
        self.variants = (a, b)
        self.open_gateway = open_gateway
        self.stamp = uuid.uuid4().hex[:6]
        self.opened: list[OpenVariant] = []
        self._own_gateways: list = []
        # With a what-if, both variants answer from one traced recall per request.
        self.traced = TracedQueue(gateway) if "whatif" in kinds else None

    def _open(self, variant: Variant) -> OpenVariant:
        if self.traced is not None:
            whatif = (variant.whatif or WhatIf()) if variant.kind == "whatif" else None
            return OpenVariant(
                variant, self.gateway, self.finance_bank, self.support_bank, recall=self.traced.recall_fn(whatif)
            )
        if variant.kind == "url":
            if not variant.url or self.open_gateway is None:
                raise ValueError(f"variant {variant.name}: a URL variant needs a url")
            other = self.open_gateway(variant.url)
            self._own_gateways.append(other)
            return OpenVariant(variant, other, self.finance_bank, self.support_bank)
        if variant.kind == "server":
            return OpenVariant(variant, self.gateway, self.finance_bank, self.support_bank)
        unknown = set(variant.bank_config) - set(BANK_SETTINGS)
        if unknown:
            raise ValueError(f"variant {variant.name}: unknown bank setting(s) {sorted(unknown)}")
        opened = OpenVariant(variant, self.gateway, "", "")
        self.opened.append(opened)  # registered first: a failed clone is still cleaned up
        for bank, attr in ((self.finance_bank, "finance_bank"), (self.support_bank, "support_bank")):
            clone = f"ab-{variant.name}-{bank}-{self.stamp}"
            opened.clones.append(clone)
            self.gateway.clone_bank(bank, clone)
            self.gateway.update_bank_config(clone, **variant.bank_config)
            setattr(opened, attr, clone)
        return opened

    def __enter__(self) -> tuple[OpenVariant, OpenVariant]:
        try:
            a, b = (self._open(v) for v in self.variants)
        except BaseException:
            self.close()
            raise
        return a, b

    def close(self) -> list[str]:
        """Delete every clone this comparison made; returns their names."""
        deleted = []
        for opened in self.opened:
            for clone in opened.clones:
                try:
                    self.gateway.delete_bank(clone)
                    deleted.append(clone)
                except HindsightError:
                    pass  # never made (the clone failed before it existed)
        self.opened.clear()
        for other in self._own_gateways:
            other.close()
        self._own_gateways.clear()
        return deleted

    def __exit__(self, *exc) -> None:
        self.close()


def _message(exc: Exception) -> str:
    return str(exc) or "the recall failed"  # the server's words, never an error class name


def run_queue(opened: OpenVariant, cases: list[ExceptionCase], tickets: list[Ticket]) -> list[CaseOutcome]:
    recall = opened.recall_fn()
    out = []
    for case in cases:
        start = time.perf_counter()
        try:
            result, recommendation = assess(
                two_stage_recall(recall, opened.finance_bank, CaseKey.of(case), case.recall_query())
            )
            outcome = CaseOutcome(
                case.id,
                "exception",
                0.0,
                exact=sorted(e.ref for e in result.exact),
                recommendation=recommendation.action,
            )
        except (HindsightError, ValueError) as exc:
            outcome = CaseOutcome(case.id, "exception", 0.0, error=_message(exc))
        outcome.latency_ms = (time.perf_counter() - start) * 1000
        out.append(outcome)
    for ticket in tickets:
        start = time.perf_counter()
        try:
            found = recall_for_ticket(
                recall, opened.support_bank, ticket.customer, ticket.issue, read_document=opened.gateway.document
            )
            outcome = CaseOutcome(
                ticket.id,
                "ticket",
                0.0,
                legacy_admitted=sorted(e.ref for e in found.legacy_admitted),
                path=found.path,
            )
        except (HindsightError, ValueError) as exc:
            outcome = CaseOutcome(ticket.id, "ticket", 0.0, error=_message(exc))
        outcome.latency_ms = (time.perf_counter() - start) * 1000
        out.append(outcome)
    return out


@dataclass
class CaseDiff:
    case_id: str
    kind: str
    gained: list[str]
    lost: list[str]
    recommendation_a: str | None
    recommendation_b: str | None
    legacy_gained: list[str]
    legacy_lost: list[str]
    latency_a_ms: float
    latency_b_ms: float
    error: str | None = None
    exact_a: list[str] = field(default_factory=list)  # finance: the exact precedents under A, and under B
    exact_b: list[str] = field(default_factory=list)

    @property
    def recommendation_changed(self) -> bool:
        return self.recommendation_a != self.recommendation_b

    @property
    def changed(self) -> bool:
        """A case whose recall failed on either side did not change: it could not be compared (see `error`)."""
        if self.error:
            return False
        return bool(self.gained or self.lost or self.recommendation_changed or self.legacy_gained or self.legacy_lost)

    def row(self) -> dict:
        return {
            "case": self.case_id,
            "kind": self.kind,
            "changed": self.changed,
            "exact gained": ", ".join(self.gained),
            "exact lost": ", ".join(self.lost),
            "recommendation A": self.recommendation_a,
            "recommendation B": self.recommendation_b,
            "legacy admitted gained": ", ".join(self.legacy_gained),
            "legacy admitted lost": ", ".join(self.legacy_lost),
            "latency A ms": round(self.latency_a_ms, 1),
            "latency B ms": round(self.latency_b_ms, 1),
            "error": self.error or "",
        }


@dataclass
class ABReport:
    a: Variant
    b: Variant
    diffs: list[CaseDiff]
    clones_deleted: list[str] = field(default_factory=list)
    prediction_checks: list[bool] | None = None  # with a what-if: per traced recall, default prediction == server

    @property
    def predicted(self) -> bool:
        return "whatif" in (self.a.kind, self.b.kind)

    @property
    def recommendations_changed(self) -> int:
        return sum(d.recommendation_changed for d in self.diffs if d.kind == "exception")

    @property
    def exact_lost(self) -> int:
        return sum(len(d.lost) for d in self.diffs)

    @property
    def exact_gained(self) -> int:
        return sum(len(d.gained) for d in self.diffs)

    @property
    def legacy_changed(self) -> int:
        return sum(bool(d.legacy_gained or d.legacy_lost) for d in self.diffs if d.kind == "ticket")

    @property
    def p50_change(self) -> float | None:
        if self.predicted:  # a prediction's time says nothing about the server's
            return None
        a = [d.latency_a_ms for d in self.diffs if not d.error]
        b = [d.latency_b_ms for d in self.diffs if not d.error]
        if not a or not b or statistics.median(a) == 0:
            return None
        return statistics.median(b) / statistics.median(a) - 1.0

    def summary(self) -> str:
        p50 = self.p50_change
        latency = "p50 n/a" if p50 is None else f"p50 {p50 * 100:+.0f} %"
        if self.predicted:
            latency = "latency not compared (predicted)"
        errors = sum(1 for d in self.diffs if d.error)
        return (
            f"under B ({self.b.describe()}): {self.recommendations_changed} recommendation(s) change, "
            f"{self.exact_lost} exact precedent(s) lost, {self.exact_gained} gained, "
            f"{self.legacy_changed} ticket(s) with different legacy admissions, {latency}"
            + (f", {errors} case(s) failed" if errors else "")
        )

    def as_json(self) -> dict:
        return {
            "a": self.a.model_dump(),
            "b": self.b.model_dump(),
            "summary": self.summary(),
            "recommendations_changed": self.recommendations_changed,
            "exact_lost": self.exact_lost,
            "exact_gained": self.exact_gained,
            "legacy_changed": self.legacy_changed,
            "p50_change": self.p50_change,
            "cases": [d.row() for d in self.diffs],
            "clones_deleted": self.clones_deleted,
            "prediction_checks": None
            if self.prediction_checks is None
            else {"recalls": len(self.prediction_checks), "default_equals_server": sum(self.prediction_checks)},
        }


def diff(a: list[CaseOutcome], b: list[CaseOutcome]) -> list[CaseDiff]:
    by_id = {o.case_id: o for o in b}
    out = []
    for x in a:
        y = by_id[x.case_id]
        out.append(
            CaseDiff(
                x.case_id,
                x.kind,
                gained=sorted(set(y.exact) - set(x.exact)),
                lost=sorted(set(x.exact) - set(y.exact)),
                recommendation_a=x.recommendation,
                recommendation_b=y.recommendation,
                legacy_gained=sorted(set(y.legacy_admitted) - set(x.legacy_admitted)),
                legacy_lost=sorted(set(x.legacy_admitted) - set(y.legacy_admitted)),
                latency_a_ms=x.latency_ms,
                latency_b_ms=y.latency_ms,
                error=x.error or y.error,
                exact_a=x.exact,
                exact_b=y.exact,
            )
        )
    return out


def compare(
    gateway,
    finance_bank: str,
    support_bank: str,
    cases: list[ExceptionCase],
    tickets: list[Ticket],
    a: Variant,
    b: Variant,
    open_gateway: Callable[[str], object] | None = None,
) -> ABReport:
    """Open both variants, run the queue under each, close (clones deleted) and report per case."""
    comparison = Comparison(gateway, finance_bank, support_bank, a, b, open_gateway)
    try:
        opened_a, opened_b = comparison.__enter__()
        diffs = diff(run_queue(opened_a, cases, tickets), run_queue(opened_b, cases, tickets))
    finally:
        deleted = comparison.close()
    checks = None if comparison.traced is None else list(comparison.traced.prediction_checks)
    return ABReport(a, b, diffs, deleted, checks)
