"""One queue kind as a contract: what every shared room (the review store, reporting, the agents' runner, the CLI,
settings, navigation) needs of a kind of case, so none of them names one. Finance exceptions and support tickets
implement it in their own packages (finance/kind.py, support/kind.py); dashboard/kinds.py lists the kinds;
docs/adding-a-queue-kind.md walks through a third. No Streamlit here: a kind names its pages by their scripts' paths (its `pages` package), and the app's navigation
runs them; neither the app nor the kind's domain imports them.

A kind answers, for one case: its queue columns, its recall as exact and broader evidence with a relevance flag each
(`CaseView`), and its proposal: what a reviewer's `Choice` records and the memory it is retained as (`Proposal`,
recorded by the decision service like every other). Its own fields (a ticket's sent response) travel in
`Choice.details` and are validated by the kind, which raises `store.errors.DecisionInputError` naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from dashboard.hindsight.calls import RecallFn
from dashboard.review.decisions import Proposal
from dashboard.store.agent_part import AgentPart
from dashboard.store.decision import EvidenceItem, EvidenceSnapshot, Shown, text_hash


class Case(Protocol):
    """A case of any kind: an id, and whatever fields its kind reads."""

    id: str


class EvidenceRecord(BaseModel):
    """One recalled record as the case page shows it: never rendered as markdown (its text is untrusted)."""

    ref: str  # the document id (or the memory id of a record without one)
    text: str
    tags: list[str] = Field(default_factory=list)
    relevant: bool  # by the kind's rule (finance: same vendor and type)
    why: str = ""  # the rule's reason, in a reviewer's words


class CaseView(BaseModel):
    """A case's recall as its kind judged it: the exact evidence (pass 1), the broader (pass 2, filling the rest of k),
    the agent's recommendation and why."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    case_id: str
    available: bool = True  # False: Hindsight did not answer
    exact: list[EvidenceRecord] = Field(default_factory=list)
    broader: list[EvidenceRecord] = Field(default_factory=list)
    recommendation: str | None = None  # an outcome, None when the kind drafts instead (tickets)
    rationale: str = ""
    query: str = ""  # the recall's query: a trace opened from the case recalls it again with the kind's focus tags
    native: Any = Field(default=None, exclude=True, repr=False)  # the kind's own result, for its propose()

    def snapshot(self) -> EvidenceSnapshot:
        """What the reviewer saw, kept with the decision."""
        items = [
            EvidenceItem(id=e.ref, text_sha256=text_hash(e.text), relevant=e.relevant)
            for e in [*self.exact, *self.broader]
        ]
        return EvidenceSnapshot(
            available=self.available, items=items if self.available else [], recommendation=self.recommendation
        )

    def shown(self) -> Shown:
        return Shown.of(self.case_id, self.snapshot())


class Choice(BaseModel):
    """What a reviewer chose on a case, from a form or a command line, before its kind validates it."""

    reviewer: str
    authenticated: bool = False
    outcome: str
    reason_code: str | None = None
    note: str = ""
    details: dict[str, str] = Field(default_factory=dict)  # the kind's own fields, e.g. {"response": ...}
    decided_at: datetime
    shown: Shown | None = None  # what the screen showed; None: no screen (the CLI)
    base_revision: int | None = None  # the case revision the reviewer saw; None appends (the CLI)
    agent: AgentPart | None = None  # the part of the agent that handed the case in: the decision is compared with it


@dataclass(frozen=True)
class KindPage:
    """A page a kind offers beside its queue (support: the migration to tags): its script, named by path, and how the
    navigation lists it."""

    script: Path
    title: str
    icon: str  # a ":material/...:" icon
    url_path: str


@runtime_checkable
class QueueKind(Protocol):
    """A kind of case the dashboard reviews. Attributes are plain data; methods are plain functions of their inputs."""

    name: str  # the case kind the review store keeps, e.g. "exception"
    key: str  # its settings key and `decide --kind`, e.g. "finance"
    title: str  # its queue's name, e.g. "Finance exceptions"
    nouns: tuple[str, str]  # ("exception", "exceptions")
    icon: str  # a ":material/...:" icon
    url_path: str  # its page's address
    page: Path  # its page script (the case view and form): relative to dashboard/app, or absolute; it may be a few
    # lines that call dashboard/app/kind_page.py's render(kind), the generic case page
    default_bank: str
    default_cases: Path | None
    holds: str  # what its bank holds, e.g. "finance precedents"
    report_by: str | None  # the tag the Overview groups its overrides by (finance: "vendor"); None: not grouped
    outcomes: Mapping[
        str, str
    ]  # outcome -> its words ("approve" -> "approve for payment"): its buttons, the decision's
    # confirmation, the Audit log, the exports and the Overview all say an outcome so (ReviewerDecision.words)
    kind_fields: Sequence[str]  # the names of its own detail fields a decision may carry (Choice.details)
    model: type[BaseModel]  # a case as a row of its queue file or the `case` an agent hands in (frozen, with an `id`)
    # Optional, read with getattr: `seed`, the records `python -m dashboard seed` retains into its bank (a sequence of
    # hindsight.wire.MemoryRecord); `more_pages`, the pages it offers beside its queue (KindPage), listed after
    # it; `pages_package`, the dotted name of the package its pages live in ("dashboard.finance.pages"): the served
    # app's warm-up imports its helper modules (never a page script) and calls its `warm(cases)`, if it has one, with
    # the queue's cases; `case_param`, the address parameter its page opens a case by ("case" unless it says).
    # review/tag_scoped.py's bases give every attribute a kind need not declare.

    def load(self, path: Path) -> Sequence[Case]: ...

    def columns(self, case: Any) -> dict[str, Any]: ...  # its row in the queue

    def describe(self, case: Any) -> str: ...  # one line naming the case ("E-1003: V03 Acme, price variance")

    def reasons(self, case: Any, configured: Mapping[str, Mapping[str, str]]) -> dict[str, str]: ...

    def scope(self, case: Any) -> str: ...  # what recalls a decision on it changes (review.freshness)

    # what label quality groups each of these cases by ({"E-1002": {"vendor": "V02", "type": "price_variance"}})
    def label_groups(self, ids: set[str], cases: Sequence[Any], settings: Any) -> dict[str, dict[str, str]]: ...

    # a trace opened from the case: the tags of its exact evidence, and what it is about ("vendor V01, price variance")
    def focus(self, case: Any) -> tuple[tuple[str, ...], str]: ...

    # `origin`: the review store's check of a record's signature (origin.provenance.Provenance.origin): only a proven
    # reviewer's decision has a human's authority.
    def recall(self, recall: RecallFn, bank_id: str, case: Any, origin: Callable | None = None) -> CaseView: ...

    def propose(self, case: Any, view: CaseView, choice: Choice, reasons: Mapping[str, str]) -> Proposal: ...
