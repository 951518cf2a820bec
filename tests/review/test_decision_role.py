"""The role a decision was made with is on its row in the review store and in the audit exports (page, CSV, JSON)."""

import csv
import io
import json

from dashboard.reporting.audit_export import audit_row, to_csv, to_json
from tests.review.test_webhooks import BANK, _proposal


def test_the_role_a_decision_was_made_with_is_on_its_row_and_in_the_exports(scratch_service):
    service = scratch_service()
    by_lead = service.decide(BANK, "lead", _proposal("E-81")).stored
    by_reviewer = service.decide(BANK, "reviewer", _proposal("E-82")).stored
    stored = {d.case_id: d for d in service.outbox.history()}  # read back from the store
    assert (stored["E-81"].decision.role, stored["E-82"].decision.role) == ("lead", "reviewer")
    rows = [audit_row(by_lead), audit_row(by_reviewer)]
    assert [r.role for r in rows] == ["lead", "reviewer"]
    assert [line["role"] for line in csv.DictReader(io.StringIO(to_csv(rows)))] == ["lead", "reviewer"]
    assert [line["role"] for line in json.loads(to_json(rows))] == ["lead", "reviewer"]
