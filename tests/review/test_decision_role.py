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


def test_the_audit_page_says_the_role_each_decision_was_made_with(point_app, tmp_path):
    from streamlit.testing.v1 import AppTest

    from dashboard.processes import free_port
    from tests.conftest import APP
    from tests.helpers import service_on

    outbox = point_app(
        {
            "RECALL_REVIEW_DATA_DIR": str(tmp_path),
            "RECALL_REVIEW_API_PORT": str(free_port()),
            "RECALL_REVIEW_DELIVERY_WORKER": "false",
        }
    )
    service_on(outbox.engine).decide(BANK, "lead", _proposal("E-83"))
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("views/audit.py").run()
    assert not at.exception
    (line,) = [t.value for t in at.text if t.value.startswith("#") and "E-83" in t.value]
    assert ", by Dana as lead, " in line
    assert list(next(d.value for d in at.dataframe if "role" in d.value.columns)["role"]) == ["lead"]
