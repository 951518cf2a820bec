"""The banner and the audit page, through AppTest, with Hindsight unreachable."""

from streamlit.testing.v1 import AppTest

from dashboard.delivery.outbox import Outbox
from dashboard.processes import free_port
from dashboard.reporting.audit_export import AuditFilter, audit_row, to_csv
from tests.conftest import APP
from tests.helpers import numbered_decision


def test_unreachable_server_keeps_decisions_and_shows_them(point_app, tmp_path):
    outbox = point_app({"RECALL_REVIEW_DATA_DIR": str(tmp_path), "RECALL_REVIEW_API_PORT": str(free_port())})
    for i in range(3):
        outbox.record("fin", *numbered_decision(i))

    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any("unreachable" in w.value for w in at.warning)
    assert any("3 decision(s) saved and waiting" in i.value for i in at.info)
    at.button(key="deliver_now").click().run()  # still down: nothing lost, nothing delivered
    assert not at.exception and outbox.pending_count() == 3

    # AppTest's switch_page runs the page alone (no banner from app.py): the browser test covers that.
    at.switch_page("views/audit.py").run()
    assert not at.exception
    table = at.dataframe[0].value
    assert list(table["case_id"]) == ["E-0002", "E-0001", "E-0000"]
    assert set(table["delivery"]) == {"waiting to be stored"}


def test_audit_filter_and_csv_are_inert(tmp_path):
    outbox = Outbox(tmp_path / "d.sqlite3")
    decision, memory = numbered_decision(1)
    outbox.record("fin", decision.model_copy(update={"note": '=HYPERLINK("http://x")'}), memory)
    rows = [audit_row(e) for e in outbox.history()]
    assert AuditFilter(case_kinds=["ticket"]).keeps(rows[0]) is False
    assert AuditFilter(reviewers=["Dana Reviewer"], deliveries=["pending"]).keeps(rows[0]) is True
    assert "'=HYPERLINK" in to_csv(rows)
