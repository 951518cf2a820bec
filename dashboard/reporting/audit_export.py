"""The decision audit log as rows for people and files. No Streamlit here.

Blind means blind here too: while a case awaits its blind second review, its first decision's reviewer, outcome,
reason, note, cited evidence and role are in no row (the page, its export and `export-audit` alike); they are once
the second reviewer has decided. Each row carries its case's status now (review/figures.py), so the export says the
same decided and held figures as the Overview and the Audit log.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from datetime import date

from pydantic import BaseModel

from dashboard.delivery.outbox import StoredDecision
from dashboard.review.second_review import FIRST, LEAD, SECOND, ReviewStep
from dashboard.store.decision import outcome_words
from dashboard.store.schema import AWAITING_SECOND


class AuditRow(BaseModel):
    audit_id: int
    decided_at: str
    reviewer: str
    authenticated: bool
    reviewer_subject: str = ""  # signed in: the OpenID provider's subject and issuer (docs/sign-in.md)
    reviewer_issuer: str = ""
    case_kind: str
    case_id: str
    revision: int
    revision_reason: str = ""  # why the case's standing decision was revised (revision 2 on); "" for a first decision
    outcome: str
    decision: str  # the outcome in the words the page's buttons used: "approve for payment", "the draft sent as it is"
    overridden: bool | None  # None: hidden until the blind second review
    reason_code: str
    note: str
    agent_recommendation: str
    agent_recommendation_words: str = ""  # the same in its kind's words ("accept the dispute: ask for a credit note")
    cited_evidence: str
    decided_on_evidence: str
    bank_id: str
    document_id: str
    delivery: str
    attempts: int
    last_error: str
    delivered_at: str
    review_step: str = ""  # first | second | lead under a blind second review; "" for a single review
    role: str = ""  # the role the decision was made with ("" on decisions recorded before it was kept)
    provenance: str = ""  # delivered, held, audit only or superseded by the lead, in plain words
    case_status: str = ""  # the case's status now, as every page counts it (review.figures.case_status)


def evidence_summary(entry: StoredDecision) -> str:
    """What the reviewer saw when deciding, in one line ("decided on this evidence")."""
    snapshot = entry.evidence
    if snapshot is None:
        return ""
    if not snapshot.available:
        return "no evidence (recall unavailable)"
    relevant = [item.id for item in snapshot.items if item.relevant]
    shown = f"{len(snapshot.items)} shown, relevant: {', '.join(relevant) or 'none'}"
    return shown + (f"; recommended {entry.decision.said(snapshot.recommendation)}" if snapshot.recommendation else "")


def audit_row(entry: StoredDecision) -> AuditRow:
    d = entry.decision
    return AuditRow(
        audit_id=entry.id,
        decided_at=d.decided_at.isoformat(timespec="seconds"),
        reviewer=d.reviewer,
        authenticated=d.authenticated,
        reviewer_subject=d.reviewer_subject or "",
        reviewer_issuer=d.reviewer_issuer or "",
        case_kind=entry.case_kind,
        case_id=entry.case_id,
        revision=entry.revision,
        revision_reason=d.revision_reason or "",
        outcome=d.outcome,
        decision=outcome_words(d),
        overridden=d.overridden,
        reason_code=d.reason_code or "",
        note=d.note,
        agent_recommendation=d.agent_recommendation or "",
        agent_recommendation_words=d.said(d.agent_recommendation, ""),
        cited_evidence=", ".join(d.cited_evidence),
        decided_on_evidence=evidence_summary(entry),
        bank_id=entry.bank_id,
        document_id=entry.document_id,
        delivery=entry.state,
        attempts=entry.attempts,
        last_error=entry.last_error or "",
        delivered_at=entry.delivered_at.isoformat(timespec="seconds") if entry.delivered_at else "",
        role=d.role or "",
    )


def _provenance(step: ReviewStep, steps: list[ReviewStep], first: StoredDecision) -> str:
    lead = next((s for s in steps if s.step == LEAD), None)
    if lead is not None and step.step != LEAD:
        return f"superseded by the lead {lead.actor}"
    if step.step == SECOND:
        second_agrees = step.outcome == first.decision.outcome
        return (
            "audit only: agreed with the first decision" if second_agrees else "audit only: disagreed, awaiting a lead"
        )
    return first.state


def audit_rows(
    history: list[StoredDecision],
    trail: dict[int, list[ReviewStep]],
    statuses: Mapping[tuple[str, str, str], str] | None = None,
) -> list[AuditRow]:
    """Every reviewer's decision on a case with its provenance: the decisions rows, and after a first decision held
    for a blind second review, the second reviewer's (`trail`: first decision id -> its steps); blind until the second
    review (blind_until_reviewed). `statuses`: (bank, case kind, case id) -> the case's status now."""
    rows = []
    for entry in history:
        row = audit_row(entry)
        steps = trail.get(entry.id, [])
        first = next((s for s in steps if s.step == FIRST), None)
        if first is not None:
            row = row.model_copy(
                update={"review_step": FIRST, "role": first.role, "provenance": _provenance(first, steps, entry)}
            )
        rows.append(row)
        for step in (s for s in steps if s.step == SECOND):
            d = step.decision
            rows.append(
                row.model_copy(
                    update={
                        "decided_at": d.decided_at.isoformat(timespec="seconds"),
                        "reviewer": d.reviewer,
                        "authenticated": d.authenticated,
                        "reviewer_subject": d.reviewer_subject or "",
                        "reviewer_issuer": d.reviewer_issuer or "",
                        "outcome": d.outcome,
                        "overridden": d.overridden,
                        "reason_code": d.reason_code or "",
                        "note": d.note,
                        "delivery": "audit only",
                        "attempts": 0,
                        "last_error": "",
                        "delivered_at": "",
                        "review_step": SECOND,
                        "role": step.role,
                        "provenance": _provenance(step, steps, entry),
                    }
                )
            )
    lead_rows = {s.lead_decision_id: s for steps in trail.values() for s in steps if s.step == LEAD}
    for row in rows:
        if row.audit_id in lead_rows and not row.review_step:
            row.review_step, row.role, row.provenance = (
                LEAD,
                lead_rows[row.audit_id].role,
                f"the lead's decision: {row.delivery}",
            )
        row.case_status = (statuses or {}).get((row.bank_id, row.case_kind, row.case_id), "")
    return blind_until_reviewed(rows)


HIDDEN = "(hidden until the blind second review)"


def blind_until_reviewed(rows: list[AuditRow]) -> list[AuditRow]:
    """A first decision still awaiting its blind second review names no reviewer, outcome, override, reason, note,
    evidence cited or role, so the second reviewer cannot read it in the audit log or an export."""
    secret = {
        "reviewer": HIDDEN,
        "outcome": HIDDEN,
        "decision": HIDDEN,
        "overridden": None,
        "reason_code": "",
        "note": "",
        "role": "",
        "cited_evidence": "",
        "reviewer_subject": "",
        "reviewer_issuer": "",
        "revision_reason": "",
    }
    return [row.model_copy(update=secret) if row.delivery == AWAITING_SECOND else row for row in rows]


class AuditFilter(BaseModel):
    case_kinds: list[str] = []
    reviewers: list[str] = []
    deliveries: list[str] = []
    start: date | None = None
    end: date | None = None

    def keeps(self, row: AuditRow) -> bool:
        day = date.fromisoformat(row.decided_at[:10])
        return (
            (not self.case_kinds or row.case_kind in self.case_kinds)
            and (not self.reviewers or row.reviewer in self.reviewers)
            and (not self.deliveries or row.delivery in self.deliveries)
            and (self.start is None or day >= self.start)
            and (self.end is None or day <= self.end)
        )


def to_csv(rows: list[AuditRow]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(AuditRow.model_fields))
    writer.writeheader()
    for row in rows:
        # A leading =, +, - or @ makes a spreadsheet evaluate the cell: neutralise it.
        writer.writerow({k: _inert(v) for k, v in row.model_dump().items()})
    return out.getvalue()


def _inert(value: object) -> object:
    return "'" + value if isinstance(value, str) and value[:1] in ("=", "+", "-", "@") else value


def to_json(rows: list[AuditRow]) -> str:
    return json.dumps([row.model_dump() for row in rows], indent=2)
