"""What the agent recalled then (the audit log's record of its recalls) beside what recall returns now.

With the audit log off, or no agent run for the case, there is no "then": the view is today's
recompute, labelled as such. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field

from dashboard.agents.causes import Cause
from dashboard.review.curation import DocumentCuration
from dashboard.store.agent_runs import AgentRun, AuditRecall, ResultRef

Source = Literal["audit", "agent_run", "recompute"]


class RecallThen(BaseModel):
    label: str
    query: str
    tags: list[str] = Field(default_factory=list)
    tags_match: str | None = None
    max_tokens: int | None = None
    budget: str | None = None
    audit_id: str | None = None
    results: list[ResultRef] = Field(default_factory=list)


class ThenNow(BaseModel):
    source: Source
    note: str
    run: AgentRun | None = None
    then: list[RecallThen] = Field(default_factory=list)
    now: list[ResultRef] = Field(default_factory=list)
    appeared: list[ResultRef] = Field(
        default_factory=list
    )  # in the evidence now, not then (e.g. a reviewer's decision)
    left: list[ResultRef] = Field(default_factory=list)  # in the agent's evidence then, not now
    kept_then: list[str] = Field(default_factory=list)  # the agent's evidence then
    new_since: list[str] = Field(
        default_factory=list
    )  # of the appeared, those retained after the run and not recalled then
    existed: list[str] = Field(default_factory=list)  # of the appeared, those the bank held when the agent ran
    curated: dict[str, str] = Field(default_factory=dict)  # document id -> "invalidated by Lee on ...: why"
    causes: list[Cause] = Field(
        default_factory=list
    )  # why each appeared or left document did (dashboard.agents.cause_inputs)

    def documents(self) -> set[str]:
        """Every document then and now (the ones curation may have touched)."""
        return {
            r.document_id for r in [*self.now, *(r for recall in self.then for r in recall.results)] if r.document_id
        }

    def recalled_then(self) -> set[str]:
        """Every record a recall of the run returned (whether the agent took it as evidence or not)."""
        return {key for recall in self.then for r in recall.results for key in (r.ref, r.id)}

    def with_created(self, created: Mapping[str, datetime]) -> ThenNow:
        """The view with the appeared records that did not exist when the agent ran (`created`: document id -> when
        the bank holds it since). A record a recall returned then existed then, whatever its date says now (a
        document retained again is dated anew): it is never "new since then"."""
        if self.run is None:
            return self
        then, at = self.recalled_then(), self.run.started_at
        known = [r.ref for r in self.appeared if r.ref in created]
        return self.model_copy(
            update={
                "new_since": [ref for ref in known if ref not in then and created[ref] > at],
                "existed": [ref for ref in known if ref in then or created[ref] <= at],
            }
        )

    def now_mark(self, ref: str) -> str:
        """What a record of the evidence now was then, in a few words ("" when it was in the agent's evidence)."""
        if ref in self.kept_then:
            return ""
        if ref in self.recalled_then():
            return "recalled then, not used by the agent"
        if ref in self.new_since:
            return "new since then"
        return "existed then, not recalled" if ref in self.existed else "not in the agent's evidence then"

    def with_curation(self, statuses: dict[str, DocumentCuration]) -> ThenNow:
        """The view with what curation did to its documents, said in a sentence each (a retired one left recall)."""
        curated = {doc: status.sentence for doc, status in sorted(statuses.items()) if status.sentence}
        return self.model_copy(update={"curated": curated})


# A recall's scope in a reviewer's words; the request itself (tags, tags_match) is on the Traces page.
SCOPE_NAMES = {
    "exact": "exact precedents",
    "decisions": "reviewer decisions",
    "broader": "broader precedents",
    "tagged": "this customer's tagged history",
    "bank_wide": "the whole bank",
}


def plain_scope(label: str, tags: list[str], tags_match: str | None) -> str:
    """e.g. "exact precedents: same vendor V01 and type price variance"; "the whole bank (no filter)"."""
    name = SCOPE_NAMES.get(label, label.replace("_", " "))
    words = [tag.replace(":", " ", 1).replace("_", " ") for tag in tags if not tag.startswith("source:")]
    if not words:
        return f"{name} (no filter)"
    joiner = " and " if (tags_match or "").startswith("all") else " or "
    return f"{name}: same {joiner.join(words)}"


def diff(then: list[ResultRef], now: list[ResultRef]) -> tuple[list[ResultRef], list[ResultRef]]:
    """(appeared, left), compared by document id (else memory id), in each list's order."""
    before, after = {r.ref for r in then}, {r.ref for r in now}
    return [r for r in now if r.ref not in before], [r for r in then if r.ref not in after]


def evidence_refs(run: AgentRun) -> set[str]:
    """What the agent took as evidence: finance its two-stage records ({"ref": ...}), support its admitted (or, naive,
    taken) records, an agent that handed its case in the documents it cited."""
    items = [*run.output.get("evidence", []), *run.output.get("evidence_ids", [])]
    return {item["ref"] if isinstance(item, dict) else item for item in items}


def _with_origins(logged: list[ResultRef], recorded: list[ResultRef]) -> list[ResultRef]:
    """The audit log's results of a call, each with who wrote it as the agent's own snapshot of that call says (the
    log keeps no signature check)."""
    origins = {r.ref: r.origin for r in recorded if r.origin}
    return [r if r.origin or r.ref not in origins else r.model_copy(update={"origin": origins[r.ref]}) for r in logged]


def then_vs_now(
    run: AgentRun | None, entries: dict[str, AuditRecall], now: list[ResultRef], audit_log_on: bool
) -> ThenNow:
    # an agent that handed its case in reported its recall itself: shown whether or not the bank's audit log is on
    if run is None or (not audit_log_on and run.variant != "submitted"):
        why = (
            "Hindsight keeps no log of the agents' searches here (its audit log is off)"
            if not audit_log_on
            else "No agent run is recorded for this case"
        )
        return ThenNow(
            source="recompute", note=f"{why}: showing today's recompute, not what the agent saw.", run=run, now=now
        )
    then = [
        RecallThen(
            label=s.label,
            query=s.query,
            tags=s.tags,
            tags_match=s.tags_match,
            max_tokens=s.max_tokens,
            budget=s.budget,
            audit_id=s.audit_id,
            results=_with_origins(entries[s.audit_id].results, s.results) if s.audit_id in entries else s.results,
        )
        for s in run.recalls
    ]
    from_log = all(s.audit_id in entries for s in run.recalls)
    # Like with like: the records the agent used (its evidence) against the evidence now, not whole responses.
    used = evidence_refs(run)
    seen: dict[str, ResultRef] = {}
    for recall in then:
        for r in recall.results:
            if r.ref in used or r.id in used:
                seen.setdefault(r.ref, r)
    appeared, left = diff(list(seen.values()), now)
    who = (
        f"submitting agent {run.output.get('agent_name', '')}".strip()
        if run.variant == "submitted"
        else f"{run.agent} agent ({run.variant})"
    )
    note = f"What the {who} recalled, " + (
        "as Hindsight's audit log recorded it."
        if from_log
        else "as the agent reported it"
        + (" (its audit entries not synced yet)." if any(s.audit_id for s in run.recalls) else ".")
    )
    return ThenNow(
        source="audit" if from_log else "agent_run",
        note=note,
        run=run,
        then=then,
        now=now,
        appeared=appeared,
        left=left,
        kept_then=list(seen),
    )
