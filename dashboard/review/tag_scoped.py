"""Bases for a queue kind (review.queue_kind.QueueKind), so a kind is declared as data and writes only what is its own.

`KindBase`: the parts every kind shares (its queue file read and validated by its model, no reason codes, no grouping
labels, no seed); finance and support build on it. `TagScopedKind`: the common shape of a kind whose case is named
by a few tags (a supplier and a dispute type; an employee and an expense category), declared by its `scope_tags`:

- recall in two stages on its tags: pass 1 `all_strict` (every tag: the exact precedents), pass 2 `any_strict` only
  to fill the rest of k, deduplicated, its own decision left out;
- relevance by its tags: a precedent is relevant when it carries every one of the case's scope tags;
- the recommendation: the newest relevant decision a reviewer is proven to have made (the review store's signature
  check), else the relevant precedents' majority outcome, else `fallback`;
- a decision: an outcome of `outcomes`; one that overrides the agent needs a reason code of `reason_codes`; OTHER
  needs a note; retained as `<name>-decision-<case id>` with the case's tags, so the next recall finds it.

tests/kinds/disputes is a kind declared on it; docs/adding-a-queue-kind.md walks through another."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from dashboard.hindsight.calls import RecallFn
from dashboard.hindsight.documents import RecalledDocument, recall_documents
from dashboard.hindsight.wire import MemoryRecord, tag_value
from dashboard.queue_files import shared_rows
from dashboard.review.decisions import Proposal
from dashboard.review.queue_kind import CaseView, Choice, EvidenceRecord, KindPage
from dashboard.store.decision import NOTE_MAX_CHARS, ReviewerDecision
from dashboard.store.errors import InputError


def _words(value: object) -> str:
    return str(value).replace("_", " ")


class KindBase:
    """What every kind does alike; a kind declares its data (QueueKind's attributes) and overrides what differs."""

    model: ClassVar[type[BaseModel]]
    kind_fields: ClassVar[Sequence[str]] = ()
    report_by: ClassVar[str | None] = None
    seed: ClassVar[Sequence[MemoryRecord]] = ()  # what `python -m dashboard seed` retains into its bank
    more_pages: ClassVar[Sequence[KindPage]] = ()  # the pages it offers beside its queue, listed after it
    pages_package: ClassVar[str | None] = None  # its pages' package, warmed before the app serves
    case_param: ClassVar[str] = "case"  # the address parameter its page opens a case by (`?case=<id>`)

    def load(self, path: Path) -> tuple[Any, ...]:
        return shared_rows(path, self.model)

    def reasons(self, case: Any, configured: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
        return {}

    def label_groups(self, ids: set[str], cases: Sequence[Any], settings: Any = None) -> dict[str, dict[str, str]]:
        return {}


class TagScopedKind(KindBase):
    """A kind whose cases are scoped by tags, declared as data: see the module's docstring for what it does."""

    scope_tags: ClassVar[Mapping[str, str]]  # tag name -> the case field holding its value, most general first
    query_fields: ClassVar[Sequence[str]]  # the case fields its recall query reads, in order
    column_fields: ClassVar[Mapping[str, str]]  # queue column -> case field
    outcomes: ClassVar[Mapping[str, str]]
    reason_codes: ClassVar[Mapping[str, str]]  # the codes an override gives (OTHER: explained in the note)
    fallback: ClassVar[str] = "escalate"  # the recommendation without a relevant precedent
    amount_field: ClassVar[str | None] = None  # the case field an approval limit is checked against
    k: ClassVar[int] = 5
    max_tokens: ClassVar[int] = 4096

    def tags(self, case: Any) -> list[str]:
        return [f"{tag}:{getattr(case, field)}" for tag, field in self.scope_tags.items()]

    def about(self, case: Any) -> str:
        """What the case is about, in plain words: "supplier S01, dispute short shipment"."""
        return ", ".join(f"{tag} {_words(getattr(case, field))}" for tag, field in self.scope_tags.items())

    def query(self, case: Any) -> str:
        return " ".join(_words(getattr(case, field)) for field in self.query_fields)

    def document_id(self, case_id: str) -> str:
        return f"{self.name}-decision-{case_id}"

    @property
    def report_by(self) -> str:  # its overrides, grouped by its most general tag
        return next(iter(self.scope_tags))

    def columns(self, case: Any) -> dict[str, object]:
        return {column: getattr(case, field) for column, field in self.column_fields.items()}

    def describe(self, case: Any) -> str:
        return f"{case.id}: {self.about(case)}"

    def reasons(self, case: Any, configured: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
        return dict(self.reason_codes)

    def label_groups(self, ids: set[str], cases: Sequence[Any], settings: Any = None) -> dict[str, dict[str, str]]:
        return {
            c.id: {tag: str(getattr(c, field)) for tag, field in self.scope_tags.items()} for c in cases if c.id in ids
        }

    def scope(self, case: Any) -> str:
        return "+".join(self.tags(case))

    def focus(self, case: Any) -> tuple[tuple[str, ...], str]:
        return tuple(self.tags(case)), self.about(case)

    def relevant(self, document: RecalledDocument, case: Any) -> bool:
        return all(tag_value(document.tags, tag) == str(getattr(case, field)) for tag, field in self.scope_tags.items())

    def _shown(self, document: RecalledDocument, case: Any) -> EvidenceRecord:
        ok, names = self.relevant(document, case), list(self.scope_tags)
        why = f"same {' and '.join(names)}" if ok else f"another {' or '.join(names)}"
        return EvidenceRecord(ref=document.ref, text=document.text, tags=document.tags, relevant=ok, why=why)

    def recall(self, recall: RecallFn, bank_id: str, case: Any, origin: Callable | None = None) -> CaseView:
        own, tags, passes = self.document_id(case.id), self.tags(case), []
        for match in ("all_strict", "any_strict"):  # the second only fills what the first left of k
            found, _ = recall_documents(
                recall,
                bank_id,
                self.query(case),
                want=self.k,
                max_tokens=self.max_tokens,
                cap=4 * self.max_tokens,
                tags=tags,
                tags_match=match,
            )
            passes.append(list(found.without(own).documents))
            if len(passes[0]) >= self.k:
                break
        exact = passes[0][: self.k]
        seen = {d.ref for d in exact}
        broader = [d for d in (passes[1] if len(passes) > 1 else []) if d.ref not in seen][: self.k - len(exact)]
        relevant = [d for d in [*exact, *broader] if self.relevant(d, case)]
        recommendation, why = self.recommend(relevant, case, origin)
        return CaseView(
            case_id=case.id,
            exact=[self._shown(d, case) for d in exact],
            broader=[self._shown(d, case) for d in broader],
            recommendation=recommendation,
            rationale=f"Because: {why}.",
            query=self.query(case),
            native=[d.ref for d in relevant],
        )

    def recommend(self, relevant: list[RecalledDocument], case: Any, origin: Callable | None) -> tuple[str, str]:
        """(the outcome, why): the newest proven reviewer's decision, else the majority, else the fallback."""
        proven = [d for d in relevant if origin is not None and origin(d.document_id, d.tags, d.metadata).reviewer]
        votes = Counter(d.metadata.get("outcome") for d in relevant if d.metadata.get("outcome") in self.outcomes)
        if proven:
            newest = max(proven, key=lambda d: d.metadata.get("decided_on", ""))
            return newest.metadata["outcome"], f"a reviewer decided a case of {self.about(case)} ({newest.ref})"
        if votes:
            ((outcome, n),) = votes.most_common(1)
            return outcome, f"{n} of {len(relevant)} relevant precedents"
        return self.fallback, f"no precedent of {self.about(case)}"

    def checked(self, view: CaseView, choice: Choice, reasons: Mapping[str, str]) -> tuple[str, str, bool]:
        """(reviewer, note, overridden) of a valid choice; InputError names the field that is not."""
        reviewer, note = choice.reviewer.strip(), choice.note.strip()
        if not reviewer:
            raise InputError("reviewer", "a reviewer name is required")
        if choice.outcome not in self.outcomes:
            raise InputError("outcome", f"one of {', '.join(self.outcomes)}")
        overridden = choice.outcome != view.recommendation
        if choice.reason_code is not None and choice.reason_code not in reasons:
            raise InputError("reason_code", f"one of {', '.join(reasons)}")
        if overridden and choice.reason_code is None:
            raise InputError("reason_code", "an override needs a reason code")
        if choice.reason_code == "OTHER" and not note:
            raise InputError("note", "reason OTHER needs a note that explains it")
        if len(note) > NOTE_MAX_CHARS:
            raise InputError("note", f"the note is {len(note):,} characters; the limit is {NOTE_MAX_CHARS:,}")
        return reviewer, note, overridden

    def propose(self, case: Any, view: CaseView, choice: Choice, reasons: Mapping[str, str] | None = None) -> Proposal:
        reasons = self.reason_codes if reasons is None else reasons
        reviewer, note, overridden = self.checked(view, choice, reasons)
        decision = ReviewerDecision(
            case_id=case.id,
            case_kind=self.name,
            reviewer=reviewer,
            authenticated=choice.authenticated,
            outcome=choice.outcome,
            overridden=overridden,
            reason_code=choice.reason_code,
            note=note,
            agent_recommendation=view.recommendation,
            recompute_recommendation=view.recommendation,
            cited_evidence=list(view.native or []),
            decided_at=choice.decided_at,
            action_words=self.outcomes[choice.outcome],
            report_by=self.report_by,
            words=dict(self.outcomes),
        ).against(choice.agent)
        reason = f" Reason: {reasons[choice.reason_code]}." if choice.reason_code else ""
        text = (
            f"{self.nouns[0].capitalize()} {case.id} ({self.about(case)}): {self.query(case)}. Decision: "
            f"{choice.outcome}, by reviewer {reviewer}.{reason}" + (f" Note: {note}" if note else "")
        )
        record = MemoryRecord(
            document_id=self.document_id(case.id),
            content=text,
            tags=[*self.tags(case), "kind:decision", "source:reviewer"],
            metadata={
                "outcome": choice.outcome,
                "decided_on": choice.decided_at.date().isoformat(),
                f"{self.name}_id": case.id,
                "reviewer": reviewer,
                "source": "reviewer",
            },
            timestamp=choice.decided_at,
            context=f"{self.nouns[0]} decision",
        )
        amount = float(getattr(case, self.amount_field)) if self.amount_field else None
        return Proposal(
            decision=decision,
            record=record,
            scope=self.scope(case),
            base_revision=choice.base_revision,
            evidence=view.snapshot(),
            amount=amount,
            shown=choice.shown,
        )
