"""Inputs a team deployment meets, and what each gets: the command line (exit 2 naming the field),
queue-file ids at import, roles, and the audit row's "decided on evidence"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from dashboard.access.roles import allowed, require, role_for
from dashboard.cli import main
from dashboard.delivery.outbox import Outbox
from dashboard.finance.models import ExceptionCase
from dashboard.hindsight.wire import MemoryRecord
from dashboard.queue_files import QueueFileError, load_rows
from dashboard.reporting.audit_export import audit_row
from dashboard.settings import RoleMap
from dashboard.store.decision import EvidenceItem, EvidenceSnapshot, ReviewerDecision
from dashboard.store.errors import NotAllowed
from dashboard.support.models import Ticket

CLI_INPUTS = [
    # (what, argv, the message on stderr)
    (
        "empty bank",
        ["recall-exception", "--vendor", "V01", "--type", "price_variance", "--bank", ""],
        "argument --bank: must not be empty",
    ),
    (
        "blank bank",
        ["recall-ticket", "--customer", "Ann Lee", "--issue", "x", "--bank", "  "],
        "argument --bank: must not be empty",
    ),
    ("bank with a slash", ["migrate", "--dry-run", "--bank", "a/../b"], "argument --bank: a bank id is"),
    (
        "10,000-character query",
        ["recall-exception", "--vendor", "V01", "--type", "price_variance", "--query", "q" * 10_000],
        "argument --query: 10,000 characters; the limit is 5,000",
    ),
    ("worker idle out of range", ["worker", "--idle", "0"], "--idle: must be from 0.05 to 3600 seconds"),
]


@pytest.mark.parametrize("what, argv, expected", CLI_INPUTS, ids=[c[0] for c in CLI_INPUTS])
def test_command_line_input_errors_exit_2_naming_the_field(what, argv, expected, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own input errors
        code = exc.code
    assert code == 2
    assert expected in capsys.readouterr().err


@pytest.mark.parametrize(
    "env, expected",
    [
        ({"HINDSIGHT_API_URL": "https://admin:hunter2@hindsight.example"}, "must not contain credentials"),
        ({"HINDSIGHT_API_URL": "http://10.1.2.3:8888", "HINDSIGHT_API_KEY": "k"}, "RECALL_REVIEW_ALLOW_INSECURE_HTTP"),
        ({"RECALL_REVIEW_ROLE": "admin"}, "RECALL_REVIEW_ROLE"),
    ],
)
def test_a_bad_setting_exits_2_naming_it_without_its_value(env, expected, capsys, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert main(["worker", "--once"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: settings: ") and expected in err and "hunter2" not in err


def test_over_long_ids_are_refused_at_import_naming_the_field(tmp_path):
    path = tmp_path / "exceptions.csv"
    path.write_text(
        "id,vendor_code,vendor_name,exception_type,invoice,po,invoice_amount,po_amount,description,opened_on\n"
        f"{'E' * 250},V01,Northwind,price_variance,INV-1,PO-1,10,9,Billed over,2026-11-02\n"
    )
    with pytest.raises(QueueFileError) as error:
        load_rows(path, ExceptionCase)
    assert "id" in str(error.value) and "64" in str(error.value)
    with pytest.raises(ValueError, match="64"):
        Ticket(id="T" * 65, customer="Ann Lee", issue="x", drafted_response="y", opened_on="2026-11-02")


def test_roles_come_from_e_mail_or_groups_and_gate_every_action():
    roles = RoleMap(lead=["Lee@Example.com"], reviewer=["group:ap-team"], signed_in="viewer")
    assert role_for("lee@example.com", [], roles) == "lead"
    assert role_for("sam@example.com", ["ap-team"], roles) == "reviewer"
    assert role_for("pat@example.com", ["sales"], roles) == "viewer"
    assert not allowed("viewer", "decide") and allowed("reviewer", "decide")
    assert not allowed("reviewer", "apply_migration") and allowed("lead", "apply_migration")
    assert not allowed("reviewer", "manage_deliveries") and not allowed("reviewer", "trace_any_query")
    with pytest.raises(NotAllowed, match="apply migration needs lead"):
        require("reviewer", "apply_migration")


def test_the_audit_row_says_what_evidence_the_decision_was_made_on(tmp_path):
    outbox = Outbox(tmp_path / "store.sqlite3")
    decision = ReviewerDecision(
        case_id="E-1",
        case_kind="exception",
        reviewer="Dana",
        authenticated=False,
        outcome="approve",
        overridden=False,
        decided_at=datetime.now(UTC),
    )
    memory = MemoryRecord(document_id="decision-E-1", content="approved")
    seen = EvidenceSnapshot(
        available=True,
        recommendation="approve",
        items=[
            EvidenceItem(id="PREC-1", text_sha256="a" * 64, relevant=True),
            EvidenceItem(id="PREC-9", text_sha256="b" * 64, relevant=False),
        ],
    )
    first, _ = outbox.submit("fin", decision, memory, None, evidence=seen)
    offline, _ = outbox.submit(
        "fin", decision, memory, None, evidence=EvidenceSnapshot(available=False), base_revision=1
    )
    assert (
        audit_row(first).decided_on_evidence == "2 shown, relevant: PREC-1; recommended approve for payment"
    )  # the buttons' words
    assert audit_row(offline).decided_on_evidence == "no evidence (recall unavailable)"
    assert (audit_row(first).revision, audit_row(offline).revision) == (1, 2)
