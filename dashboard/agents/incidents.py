"""Incidents: what went wrong in what an agent recalled and did, as plain functions over agent runs
(and, when the audit log is on, over what the log says those recalls returned). No Streamlit, no I/O.

- other_customer: a bank-wide or untagged recall put documents of another customer (or of no provable
  owner) into a support agent's evidence; says which, and whether the answer used them.
- observation_mix: a tagged recall returned an observation Hindsight consolidated from another
  customer's (or unproven untagged) records; says which, and whether the agent used it or excluded it.
- non_relevant_citation: a finance recommendation cites a precedent of another vendor or type.
- crowded_out: a single-pass recall whose top k missed exact precedents that existed then (proved by one
  all_strict recall now, passed in as `exact_ids`; a precedent retained after the run is left out of the proof).
- no_relevant_no_escalation: no relevant precedent in the evidence, and the agent did not escalate.
- newer_human_missing: a human decision for the same vendor and type, in memory before the run, that was
  not in the agent's evidence (its own case's decision excepted).
- forged_claim: a record in the agent's evidence claimed to be a reviewer's decision this dashboard never recorded
  (its signature, origin/provenance.py, as the run recorded it).
- untrusted_swing: the agent's recommendation rested on an untrusted record (removing it alone changes it): one of
  unknown origin, or one that should have been set aside (the naive agent counts every record as it claims).

A run is judged only on what existed when it ran: nothing retained after it counts against it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from dashboard.review.flag_counts import INCIDENTS as INCIDENTS_KEY  # the store key of a case's incident kinds
from dashboard.store.agent_runs import AgentRun, AuditRecall, ResultRef

Kind = Literal[
    "other_customer",
    "observation_mix",
    "non_relevant_citation",
    "crowded_out",
    "no_relevant_no_escalation",
    "newer_human_missing",
    "forged_claim",
    "untrusted_swing",
]
KIND_LABELS: dict[str, str] = {
    "other_customer": "another customer's records reached the answer",
    "observation_mix": "observation mixes another customer's records",
    "non_relevant_citation": "cites a precedent of another vendor or type",
    "crowded_out": "a broad recall missed this vendor's precedents",
    "no_relevant_no_escalation": "not escalated with no relevant precedent",
    "newer_human_missing": "a newer human decision was not in the evidence",
    "forged_claim": "a record claims a reviewer's decision this dashboard never recorded",
    "untrusted_swing": "recommendation swung by an untrusted record",
}


SHORT_LABELS: dict[str, str] = {  # for a queue's "incident" column
    "other_customer": "another customer's records",
    "observation_mix": "observation mixes customers",
    "non_relevant_citation": "cites another vendor or type",
    "crowded_out": "crowd-out",
    "no_relevant_no_escalation": "not escalated",
    "newer_human_missing": "missed a human decision",
    "forged_claim": "forged reviewer claim",
    "untrusted_swing": "swung by an untrusted record",
}


class Incident(BaseModel):
    kind: Kind
    case_kind: str
    case_id: str
    run_id: str
    agent: str
    variant: str
    bank_id: str
    at: datetime
    summary: str
    records: list[str] = Field(default_factory=list)  # refs of the records concerned
    used_in_answer: list[str] = Field(default_factory=list)
    audit_ids: list[str] = Field(default_factory=list)

    @property
    def label(self) -> str:
        return KIND_LABELS[self.kind]


class HumanDecision(BaseModel):
    document_id: str
    case_id: str
    vendor_code: str
    exception_type: str
    decided_at: datetime
    in_memory_since: datetime | None = None  # first delivered to memory; None: decided_at stands in for it

    @property
    def existed_at(self) -> datetime:
        """When an agent's recall could first have found it."""
        return self.in_memory_since or self.decided_at


def existed_then(document_ids: Iterable[str], created: Mapping[str, datetime] | None, at: datetime) -> list[str]:
    """The documents that existed at `at`, in order: `created`, document id -> when the bank first held it as it is
    (None: every one counts, as when no creation time was read). One whose creation is unknown is not proven to have
    existed then, so it is left out."""
    if created is None:
        return list(document_ids)
    return [d for d in document_ids if d in created and created[d] <= at]


def _incident(run: AgentRun, kind: Kind, summary: str, **extra) -> Incident:
    return Incident(
        kind=kind,
        case_kind=run.case_kind,
        case_id=run.case_id,
        run_id=run.run_id,
        agent=run.agent,
        variant=run.variant,
        bank_id=run.bank_id,
        at=run.started_at,
        summary=summary,
        audit_ids=run.audit_ids,
        **extra,
    )


def results_then(run: AgentRun, entries: dict[str, AuditRecall] | None = None) -> list[tuple[str, list[ResultRef]]]:
    """(label, results) per recall of the run: from the audit log when the entry is known, else as the agent saw it."""
    entries = entries or {}
    return [(s.label, entries[s.audit_id].results if s.audit_id in entries else s.results) for s in run.recalls]


# -- support ---------------------------------------------------------------------------------
def other_customer(run: AgentRun, entries: dict[str, AuditRecall] | None = None) -> Incident | None:
    if run.agent != "support":
        return None
    own = run.output.get("customer_tag")
    evidence = set(run.output.get("evidence", [])) | set(
        run.output.get("evidence_ids", [])
    )  # ids: runs of older versions
    foreign: list[ResultRef] = []
    for label, results in results_then(run, entries):
        if label != "bank_wide":
            continue
        foreign += [
            r
            for r in results
            if (r.ref in evidence or r.id in evidence) and r.owner != own and r.ref not in {f.ref for f in foreign}
        ]
    if not foreign:
        return None
    cited = set(run.output.get("cited", []))
    names = ", ".join(f"{r.ref} ({r.marker_name or r.owner or 'no provable owner'})" for r in foreign)
    used = [r.ref for r in foreign if r.ref in cited]
    return _incident(
        run,
        "other_customer",
        f"A bank-wide recall for {run.output.get('customer')} put {len(foreign)} record(s) of someone else into the "
        f"agent's evidence: {names}. The answer used {len(used)} of them.",
        records=[r.ref for r in foreign],
        used_in_answer=used,
    )


def observation_mix(run: AgentRun) -> Incident | None:
    """The agent judged its tagged recall's observations (output `mixing_observations`): any that mixes customers."""
    mixing = run.output.get("mixing_observations") or []
    if run.agent != "support" or not mixing:
        return None
    used = [m["ref"] for m in mixing if m.get("used")]
    sources = sorted({s for m in mixing for s in m.get("sources", [])})
    fate = f"the agent used {len(used)} of them" if used else "the agent excluded them"
    return _incident(
        run,
        "observation_mix",
        f"The tagged recall for {run.output.get('customer')} returned {len(mixing)} observation(s) consolidated from "
        f"records that are not provably theirs ({', '.join(sources) or 'sources not returned'}): {fate}.",
        records=[m["ref"] for m in mixing],
        used_in_answer=used,
    )


# -- finance ---------------------------------------------------------------------------------
def is_relevant_ref(ref: ResultRef, vendor: str, etype: str) -> bool:
    def value(prefix: str, key: str) -> str | None:
        tag = next((t.split(":", 1)[1] for t in ref.tags if t.startswith(prefix + ":")), None)
        return tag if tag is not None else ref.metadata.get(key)

    return value("vendor", "vendor_code") == vendor and value("type", "exception_type") == etype


def ownership(ref: ResultRef, own_tag: str) -> str:
    if ref.owner == own_tag:
        return "this customer's"
    return "no provable owner" if ref.owner is None else "another customer's"


def non_relevant_citation(run: AgentRun, entries: dict[str, AuditRecall] | None = None) -> Incident | None:
    if run.agent != "finance":
        return None
    vendor, etype = run.output["vendor_code"], run.output["exception_type"]
    by_ref = {r.ref: r for _, results in results_then(run, entries) for r in results}
    wrong = [ref for ref in run.cited if ref in by_ref and not is_relevant_ref(by_ref[ref], vendor, etype)]
    if not wrong:
        return None
    return _incident(
        run,
        "non_relevant_citation",
        f"The recommendation ({run.output.get('action')}) cites {len(wrong)} precedent(s) that are not about vendor "
        f"{vendor} with a {etype.replace('_', ' ')} exception: {', '.join(wrong)}.",
        records=wrong,
        used_in_answer=wrong,
    )


def crowded_out(run: AgentRun, exact_ids: list[str], entries: dict[str, AuditRecall] | None = None) -> Incident | None:
    """`exact_ids`: the documents one all_strict recall on vendor + type returns now (the proof), those that existed
    when the run recalled (existed_then)."""
    if run.agent != "finance":
        return None
    k = int(run.output.get("k", 5))
    exact = set(exact_ids)
    for label, results in results_then(run, entries):
        if label != "single":
            continue
        top = [r.ref for r in results if r.kind == "document"][:k]
        held, expected = sum(1 for i in top if i in exact), min(k, len(exact_ids))
        if held < expected:
            missed = [i for i in exact_ids if i not in top][: expected - held]
            return _incident(
                run,
                "crowded_out",
                f"The agent's one broad recall kept {k} records and held {held} precedent(s) of vendor "
                f"{run.output['vendor_code']} with this exception type while {len(exact_ids)} existed then: {expected - held} "
                "were pushed out by other vendors' or types' records.",
                records=missed,
            )
    return None


def no_relevant_no_escalation(run: AgentRun) -> Incident | None:
    if run.agent != "finance" or run.output.get("action") == "escalate":
        return None
    if any(e.get("relevant") for e in run.output.get("evidence", [])):
        return None
    return _incident(
        run,
        "no_relevant_no_escalation",
        f"No relevant precedent was in the evidence, yet the agent recommended {run.output.get('action')} instead of escalating.",
        records=[e["ref"] for e in run.output.get("evidence", [])],
    )


def newer_human_missing(run: AgentRun, decisions: list[HumanDecision]) -> Incident | None:
    if run.agent != "finance":
        return None
    seen = {e["ref"] for e in run.output.get("evidence", [])}
    missing = [
        d
        for d in decisions
        if d.vendor_code == run.output["vendor_code"]
        and d.exception_type == run.output["exception_type"]
        and d.case_id != run.case_id
        and d.existed_at < run.started_at
        and d.document_id not in seen
    ]
    if not missing:
        return None
    latest = max(missing, key=lambda d: d.decided_at)
    return _incident(
        run,
        "newer_human_missing",
        f"{len(missing)} human decision(s) for this vendor and type were in memory before the run and not in its evidence; "
        f"the latest is {latest.document_id} ({latest.decided_at:%Y-%m-%d %H:%M} UTC).",
        records=[d.document_id for d in missing],
    )


def forged_claim(run: AgentRun) -> Incident | None:
    forged = [e["ref"] for e in run.output.get("evidence", []) if e.get("forged")] if run.agent == "finance" else []
    if not forged:
        return None
    return _incident(
        run,
        "forged_claim",
        f"{len(forged)} record(s) in the agent's evidence claim to be a reviewer's decision that this dashboard never "
        f"recorded: {', '.join(forged)}. Anyone who can write to the bank can write such a tag.",
        records=forged,
        used_in_answer=[ref for ref in forged if ref in run.cited],
    )


def untrusted_swing(run: AgentRun) -> Incident | None:
    swung = (run.output.get("swung_by") or []) if run.agent == "finance" else []
    if not swung:
        return None
    return _incident(
        run,
        "untrusted_swing",
        f"The recommendation ({run.output.get('action')}) rests on {len(swung)} untrusted record(s): {', '.join(swung)} "
        "(without any one of them it would change; none is proven written by this dashboard).",
        records=list(swung),
        used_in_answer=[ref for ref in swung if ref in run.cited],
    )


def incidents_for(
    runs: list[AgentRun],
    *,
    entries: dict[str, AuditRecall] | None = None,
    exact_ids: dict[tuple[str, str, str], list[str]] | None = None,
    decisions: list[HumanDecision] | None = None,
    created: Mapping[str, datetime] | None = None,
) -> list[Incident]:
    """Every incident of these runs. `exact_ids` maps (bank, vendor, type) to its all_strict proof, made now; `created`
    says when each of its documents was retained (existed_then), so each run's proof holds only what existed then."""
    found: list[Incident | None] = []
    for run in runs:
        if run.variant == "submitted":  # its recall names documents, not their tags: the rules below judge tags
            continue
        found += [
            other_customer(run, entries),
            observation_mix(run),
            non_relevant_citation(run, entries),
            no_relevant_no_escalation(run),
            forged_claim(run),
            untrusted_swing(run),
        ]
        if run.agent == "finance":
            proof = (exact_ids or {}).get((run.bank_id, run.output["vendor_code"], run.output["exception_type"]))
            if proof is not None:
                found.append(crowded_out(run, existed_then(proof, created, run.started_at), entries))
            found.append(newer_human_missing(run, decisions or []))
    return sorted((i for i in found if i is not None), key=lambda i: i.at, reverse=True)


def runs_needing_proof(runs: list[AgentRun]) -> set[tuple[str, str, str]]:
    """(bank, vendor, type) of the runs with a single-pass recall: each needs one all_strict recall as proof."""
    return {
        (r.bank_id, r.output["vendor_code"], r.output["exception_type"])
        for r in runs
        if r.agent == "finance" and any(s.label == "single" for s in r.recalls)
    }


def kinds_by_case(runs: list[AgentRun], incidents: list[Incident]) -> dict[tuple[str, str, str], list[str]]:
    """(bank, case kind, case id) -> the kinds of its incidents, sorted; [] for a case whose runs had none."""
    return {key: list(found.kinds) for key, found in by_case(runs, incidents).items()}


class CaseIncidents(NamedTuple):
    """One case's incidents: their kinds, and the variants of the agent runs that had them."""

    case_kind: str
    case_id: str
    kinds: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()


def by_case(runs: list[AgentRun], incidents: list[Incident]) -> dict[tuple[str, str, str], CaseIncidents]:
    """(bank, case kind, case id) -> its incidents' kinds and variants, sorted; none for a case whose runs had none."""
    kinds: dict[tuple[str, str, str], set[str]] = {(r.bank_id, r.case_kind, r.case_id): set() for r in runs}
    variants: dict[tuple[str, str, str], set[str]] = {}
    for i in incidents:
        key = (i.bank_id, i.case_kind, i.case_id)
        kinds.setdefault(key, set()).add(i.kind)
        variants.setdefault(key, set()).add(i.variant)
    return {
        key: CaseIncidents(key[1], key[2], tuple(sorted(k)), tuple(sorted(variants.get(key, ()))))
        for key, k in kinds.items()
    }


NAIVE = "naive"  # the variant the demo runs on a few cases on purpose, to show what goes wrong (agents.runner)


class IncidentFigures(BaseModel):
    """The cases with incidents: how many, where (kind -> cases), and how many rest only on naive runs."""

    cases: int = 0
    where: dict[str, list[tuple[str, str]]] = Field(default_factory=dict)  # kind -> (case kind, case id), sorted
    alike: list[tuple[tuple[str, ...], list[tuple[str, str]]]] = Field(
        default_factory=list
    )  # the same kinds -> their cases, most first
    naive_only: int = 0  # of the cases, those whose incidents all come from runs of the naive variant

    def count(self, kind: str, case_kind: str | None = None) -> int:
        return sum(1 for k, _ in self.where.get(kind, []) if case_kind is None or k == case_kind)


def incident_figures(cases: Iterable[CaseIncidents]) -> IncidentFigures:
    """The figures every page says of incidents (the Overview from the kinds kept per case, the Incidents page from
    its check), counted once here."""
    with_incidents = [c for c in cases if c.kinds]
    where: dict[str, list[tuple[str, str]]] = {}
    for c in with_incidents:
        for kind in c.kinds:
            where.setdefault(kind, []).append((c.case_kind, c.case_id))
    alike: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for c in with_incidents:
        alike.setdefault(tuple(sorted(c.kinds)), []).append((c.case_kind, c.case_id))
    return IncidentFigures(
        cases=len(with_incidents),
        where={kind: sorted(found) for kind, found in sorted(where.items())},
        alike=sorted(
            ((kinds, sorted(found)) for kinds, found in alike.items()), key=lambda group: (-len(group[1]), group)
        ),
        naive_only=sum(1 for c in with_incidents if c.variants and set(c.variants) == {NAIVE}),
    )


def found_figures(found: list[Incident]) -> IncidentFigures:
    """The figures of the incidents one check found (the Incidents page)."""
    return incident_figures(by_case([], found).values())


def naive_words(figures: IncidentFigures) -> str:
    """Whether the incidents come from the deliberately naive agents, in plain words ("" when none do)."""
    if not figures.naive_only:
        return ""
    share = "all" if figures.naive_only == figures.cases else f"{figures.naive_only} of the {figures.cases}"
    return (
        f"{share} from the deliberately naive agents the demo runs on a few cases to show what goes wrong "
        "(one broad search, no relevance or ownership check)"
    )


def incident_text(flags: dict | None) -> str:
    """A queue's "incident" cell from a case's stored flags: blank when never checked, "none" when checked clean."""
    kinds = (flags or {}).get(INCIDENTS_KEY)
    if kinds is None:
        return ""
    return ", ".join(SHORT_LABELS.get(k, k) for k in kinds) or "none"


def incidents_count(shown: list[Incident], found: list[Incident]) -> str:
    """The Incidents page's count, in the Overview's words: cases first (a case can have several incidents)."""
    text = f"{found_figures(shown).cases} case(s) with incidents ({len(shown)} incident(s))"
    return text + (f", of {len(found)} incident(s) in all." if len(shown) != len(found) else ".")


VARIANT_WORDS = {  # whose run an incident came from, in a reader's words
    "naive": "the deliberately naive {agent} agent, which the demo runs to show what goes wrong",
    "reviewed": "the {agent} agent",
    "seed": "the {agent} agent that seeded the demo",
    "submitted": "an outside {agent} agent that handed this case in",
}


def whose_run(incident: Incident) -> str:
    """ "a run of the support agent (run 3f2a9c1b, 2026-12-07 10:02 UTC)" """
    agent = VARIANT_WORDS.get(incident.variant, "the {agent} agent (" + incident.variant + ")").format(
        agent=incident.agent
    )
    return f"a run of {agent} (run {incident.run_id[:8]}, {incident.at:%Y-%m-%d %H:%M} UTC)"


class Banner(BaseModel):
    """An incident as a case's page says it: whose run, what went wrong, and whether what the page shows is affected."""

    affected: list[str]  # of the incident's records, those the page shows as used now
    sentence: str


def banner(incident: Incident, shown: Iterable[str]) -> Banner:
    """`shown`: the refs (document ids) of the records the page uses now, e.g. a ticket's evidence."""
    affected = [r for r in incident.records if r in set(shown)]
    head = f"Incident in {whose_run(incident)}: {incident.label}."
    if affected:
        tail = f" {len(affected)} of its records are used on this page too ({', '.join(affected)}): check them before deciding."
    elif incident.records:
        tail = (
            f" What this page shows is not affected: none of its records ({', '.join(incident.records)}) is used here."
        )
    else:
        tail = " What this page shows is not affected: the incident is about that run, not about the records used here."
    return Banner(affected=affected, sentence=head + tail)
