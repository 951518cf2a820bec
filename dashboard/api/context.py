"""What the API reads and writes, built once per process from the settings: the registered kinds, the handed-in
cases, the tokens, and the decision log as the pages read it (the same statuses, holds and blind reviews)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

from dashboard.access.api_tokens import ApiTokens
from dashboard.delivery.outbox import Outbox
from dashboard.kinds import bank_of, cases_of, configured, handed_in, registered
from dashboard.review.case_queue import CaseQueue
from dashboard.review.decisions import DecisionService, decision_service
from dashboard.review.queue_kind import QueueKind
from dashboard.settings import Settings, load_settings
from dashboard.store.agent_runs import AgentRunStore


@dataclass
class ApiContext:
    settings: Settings
    _file_ids: dict = field(default_factory=dict, repr=False)  # kind key -> (the file's rows, their ids)

    @classmethod
    def configured(cls) -> ApiContext:
        return cls(configured(load_settings()))

    @cached_property
    def kinds(self) -> dict[str, QueueKind]:
        """kind key (the API's path segment, `decide --kind`) -> kind."""
        return {kind.key: kind for kind in registered(self.settings)}

    @cached_property
    def cases(self) -> CaseQueue:
        return handed_in(self.settings)

    @cached_property
    def outbox(self) -> Outbox:
        return Outbox(self.cases.engine, signing_key=self.settings.signing_secret)

    @cached_property
    def tokens(self) -> ApiTokens:
        return ApiTokens(self.cases.engine)

    @cached_property
    def runs(self) -> AgentRunStore:
        return AgentRunStore(self.cases.engine)

    @cached_property
    def decisions(self) -> DecisionService:
        return decision_service(self.outbox)

    def bank(self, kind: QueueKind) -> str:
        return bank_of(self.settings, kind)

    def queue(self, kind: QueueKind):
        """The kind's whole queue as its page shows it (the file's rows and the handed-in cases)."""
        return cases_of(self.settings, kind)

    def in_file(self, kind: QueueKind, case_id: str) -> bool:
        """Whether the kind's queue file has a row with this id (its ids kept while the file's rows are the same)."""
        path = self.settings.queue(kind.key).cases or kind.default_cases
        rows = kind.load(path) if path is not None else ()
        kept = self._file_ids.get(kind.key)
        if kept is None or kept[0] is not rows:
            kept = (rows, frozenset(case.id for case in rows))
            self._file_ids[kind.key] = kept
        return case_id in kept[1]
