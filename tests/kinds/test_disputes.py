"""A third queue kind through the whole product, registered by one line: purchase-order disputes (tests/kinds/disputes)
exist only in the tests, and nothing outside their package names them. Against the real server, in both modes: the
queue and the case page (exact and broader evidence, each flagged), a decision on the form, its delivery into
Hindsight, the next recall finding it as a reviewer's precedent, the Home and Overview figures, the audit export,
and `decide --kind disputes`."""

import json
import os
import uuid
from datetime import UTC, date, datetime
from pathlib import Path

from dashboard.cli.seed import seed_bank
from dashboard.delivery.outbox import Outbox
from dashboard.reporting.audit_export import audit_rows, to_csv
from dashboard.review.queue_kind import Choice
from tests.conftest import APP, PROVEN, seeded
from tests.helpers import open_page, service_on
from tests.kinds.disputes import DISPUTES, SEED, Dispute

REGISTRY_LINE = {"RECALL_REVIEW_KINDS": "tests.kinds.disputes:DISPUTES"}  # the one line that registers the kind
PAGE = os.path.relpath(DISPUTES.page, Path(APP).parent)  # AppTest opens a page by its path from the app's folder


def seeded_disputes(server) -> str:
    """A fresh disputes bank on `server` holding five past decisions."""
    bank = f"disputes-{uuid.uuid4().hex[:8]}"
    seed_bank(server.gateway, bank, list(SEED), sign=seeded)
    server.settle(bank)
    return bank


def app_on_disputes(server, point_app, tmp_path) -> tuple[str, Outbox]:
    """The app pointed at a seeded disputes bank on `server`, the kind registered by its one line, the finance and
    support queues empty (their pages have nothing to measure here): (the bank, the app's decision log)."""
    bank = seeded_disputes(server)
    (tmp_path / "none.csv").write_text("id\n")
    outbox = point_app(
        {
            **server.env(finance=bank + "-fin", support=bank + "-sup"),
            **REGISTRY_LINE,
            "RECALL_REVIEW_QUEUES": json.dumps({"disputes": {"bank": bank}}),
            "RECALL_REVIEW_EXCEPTIONS_FILE": str(tmp_path / "none.csv"),
            "RECALL_REVIEW_TICKETS_FILE": str(tmp_path / "none.csv"),
        }
    )
    return bank, outbox


def _texts(at) -> list[str]:
    return [t.value for t in at.text]


def test_a_dispute_is_recalled_decided_delivered_and_recalled_as_a_precedent(live, point_app, tmp_path):
    bank, outbox = app_on_disputes(live, point_app, tmp_path)
    at = open_page(PAGE)
    queue = at.dataframe(key="disputes_queue").value
    assert list(queue["case"]) == ["D-3001", "D-3002", "D-3003", "D-3004"] and set(queue["status"]) == {"open"}
    assert at.query_params["case"] in (["D-3001"], "D-3001")
    assert [s.value for s in at.subheader] == ["Exact evidence (2)", "Broader evidence (2)"]
    texts = _texts(at)
    exact = {t.split(":")[0] for t in texts if t.endswith("(same supplier and dispute)")}
    broader = {t.split(":")[0] for t in texts if t.endswith("(another supplier or dispute)")}
    assert exact == {"DISPUTE-PREC-001", "DISPUTE-PREC-002"} and broader == {"DISPUTE-PREC-003", "DISPUTE-PREC-004"}
    assert any(t.startswith("The agent recommends: accept the dispute: ask for a credit note.") for t in texts)

    # an override without a reason is refused where it was made; nothing is recorded
    at.text_input(key="disputes_reviewer").input("Pat Buyer")
    at.radio(key="disputes_outcome_D-3001").set_value("reject")
    next(b for b in at.button if b.label == "Record the decision").click().run()
    assert [e.value for e in at.error] == ["Not recorded: an override needs a reason code"]
    assert outbox.latest_decided(bank, "dispute", "D-3001") is None

    at.selectbox(key="disputes_reason_D-3001").set_value("OTHER")
    at.text_area(key="disputes_note_D-3001").input("The signed delivery note shows the full count.")
    next(b for b in at.button if b.label == "Record the decision").click().run()
    assert not at.exception, at.exception
    stored = outbox.latest_decided(bank, "dispute", "D-3001")
    decided = stored.decision
    assert (
        decided.outcome,
        decided.overridden,
        decided.agent_recommendation,
        decided.reason_code,
        decided.reviewer,
    ) == ("reject", True, "credit", "OTHER", "Pat Buyer")
    assert decided.note == "The signed delivery note shows the full count." and stored.state == "delivered"
    assert sorted(i.id for i in stored.evidence.items) == [
        "DISPUTE-PREC-001",
        "DISPUTE-PREC-002",
        "DISPUTE-PREC-003",
        "DISPUTE-PREC-004",
    ]
    assert any(s.value.startswith("D-3001 recorded: reject the dispute: pay in full") for s in at.success)
    assert at.query_params["case"] in (["D-3002"], "D-3002")  # on to the next open dispute
    assert live.gateway.document(bank, "dispute-decision-D-3001") is not None

    # the next dispute of that supplier and type recalls the decision as an exact precedent a reviewer is proven to
    # have made, and it outweighs the two older precedents that credited
    live.settle(bank)
    again = Dispute(
        id="D-3099",
        supplier="S01",
        supplier_name="Northwind Packaging",
        dispute_type="short_shipment",
        po="PO-7099",
        amount=500,
        description="Five cartons short.",
        opened_on=date(2026, 12, 1),
    )
    view = DISPUTES.recall(live.gateway.recall, bank, again, origin=PROVEN)
    assert "dispute-decision-D-3001" in [e.ref for e in view.exact]
    assert view.recommendation == "reject" and "dispute-decision-D-3001" in view.rationale

    export = audit_rows(outbox.history(), {}, {})
    row = next(r for r in export if r.case_id == "D-3001")
    assert (row.case_kind, row.decision, row.overridden, row.bank_id) == (
        "dispute",
        "reject the dispute: pay in full",
        True,
        bank,
    )
    assert "D-3001" in to_csv(export)


def test_the_home_overview_and_audit_pages_count_disputes_as_they_count_every_queue(hindsight, point_app, tmp_path):
    bank, outbox = app_on_disputes(hindsight, point_app, tmp_path)
    case = DISPUTES.load(DISPUTES.default_cases)[2]  # D-3003, S02 damaged goods: one credit precedent
    view = DISPUTES.recall(hindsight.gateway.recall, bank, case, origin=PROVEN)
    choice = Choice(
        reviewer="Pat Buyer", outcome="credit", decided_at=datetime.now(UTC), shown=view.shown(), base_revision=0
    )
    outbox.submit(
        bank, (proposal := DISPUTES.propose(case, view, choice)).decision, proposal.record, hindsight.gateway.retain
    )

    home = open_page()
    assert any(link.label == "Review purchase-order disputes" for link in home.get("page_link"))
    assert f"{bank}: audit log on" in _texts(home) or f"{bank}: audit log off" in _texts(home)

    overview = open_page("views/overview.py")
    assert not overview.exception, overview.exception
    headline = [s.value for s in overview.subheader if "disputes" in s.value]
    assert headline and headline[0].startswith("4 cases (0 exceptions, 0 tickets, 4 disputes): 1 decided, 3 open"), (
        headline
    )

    audit = open_page("views/audit.py")
    assert "Purchase-order disputes: 4 cases, 1 decided, 3 open." in _texts(audit)
    assert any(
        t.startswith("#1 D-3003: accept the dispute: ask for a credit note (as the agent recommended)")
        for t in _texts(audit)
    )


def test_decide_kind_disputes_records_through_the_same_service(hindsight, monkeypatch, capsys, tmp_path):
    from dashboard.cli import main

    bank = seeded_disputes(hindsight)
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    for key, value in {
        **hindsight.env(),
        **REGISTRY_LINE,
        "RECALL_REVIEW_QUEUES": json.dumps({"disputes": {"bank": bank}}),
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
    }.items():
        monkeypatch.setenv(key, value)
    assert main(["decide", "--kind", "disputes", "--case", "D-3002", "--outcome", "credit", "--reviewer", "Dana"]) == 2
    assert (
        "--reason: an override needs a reason code" in capsys.readouterr().err
    )  # the agent rejects: S01 price precedent
    assert main(["decide", "--kind", "disputes", "--case", "E-1001", "--outcome", "credit", "--reviewer", "Dana"]) == 2
    assert "--case: 'E-1001' is not in the dispute queue" in capsys.readouterr().err
    code = main(
        [
            "decide",
            "--kind",
            "disputes",
            "--case",
            "D-3002",
            "--outcome",
            "credit",
            "--reason",
            "OTHER",
            "--note",
            "Contract amended in November.",
            "--reviewer",
            "Dana",
            "--json",
        ]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == 0 and (payload["state"], payload["overridden"], payload["document_id"]) == (
        "delivered",
        True,
        "dispute-decision-D-3002",
    )
    assert hindsight.gateway.document(bank, "dispute-decision-D-3002") is not None
    assert main(["decide", "--kind", "purchase", "--case", "D-3002", "--outcome", "credit", "--reviewer", "Dana"]) == 2
    assert "unknown queue kind 'purchase'; one of finance, support, disputes" in capsys.readouterr().err


def test_a_dispute_decided_meanwhile_by_another_reviewer_is_a_conflict_never_an_overwrite(
    hindsight, point_app, tmp_path
):
    bank, outbox = app_on_disputes(hindsight, point_app, tmp_path)
    first, second = open_page(PAGE), open_page(PAGE)  # two reviewers with D-3001 open
    for at, name in ((first, "Ann"), (second, "Bo")):
        at.text_input(key="disputes_reviewer").input(name)
    next(b for b in first.button if b.label == "Record the decision").click().run()  # Ann: credit, as recommended
    assert outbox.latest_decided(bank, "dispute", "D-3001").decision.reviewer == "Ann"

    second.radio(key="disputes_outcome_D-3001").set_value("escalate")
    second.selectbox(key="disputes_reason_D-3001").set_value("OTHER")
    second.text_area(key="disputes_note_D-3001").input("Needs procurement.")
    next(b for b in second.button if b.label == "Record the decision").click().run()
    assert not second.exception, second.exception
    assert [e.value for e in second.error] == [
        "Not recorded: Ann decided D-3001 meanwhile (accept the dispute: ask for a credit note). The case now shows their "
        "decision; revise it, with a reason, if you still disagree."
    ]
    assert [(e.decision.reviewer, e.decision.outcome) for e in outbox.history("dispute", "D-3001")] == [
        ("Ann", "credit")
    ]
    second.text_input(key="disputes_revise_D-3001").input(
        "Procurement disagrees"
    )  # decided: only a revision changes it
    next(b for b in second.button if b.label == "Revise decision").click().run()  # on what it shows now
    assert [(e.decision.reviewer, e.decision.revision_reason) for e in outbox.history("dispute", "D-3001")] == [
        ("Bo", "Procurement disagrees"),
        ("Ann", None),
    ]


def test_the_page_recalls_a_case_once_until_a_decision_changes_its_scope(hindsight, point_app, tmp_path, monkeypatch):
    bank, outbox = app_on_disputes(hindsight, point_app, tmp_path)
    recalls = []
    recall = DISPUTES.recall
    monkeypatch.setattr(
        type(DISPUTES), "recall", lambda self, *args, **kwargs: recalls.append(args[2].id) or recall(*args, **kwargs)
    )
    at = open_page(PAGE)
    at.text_input(key="disputes_reviewer").input("Ann").run()  # typing reruns the page: nothing is recalled again
    at.text_input(key="disputes_reviewer").input("Ann Lee").run()
    assert recalls == ["D-3001"]
    case = DISPUTES.load(DISPUTES.default_cases)[0]
    view = recall(hindsight.gateway.recall, bank, case)
    choice = Choice(reviewer="Bo", outcome="credit", decided_at=datetime.now(UTC), shown=view.shown(), base_revision=0)
    proposal = DISPUTES.propose(case, view, choice)
    service_on(outbox.engine, hindsight.gateway.retain).decide(
        bank, "reviewer", proposal
    )  # another instance decides it
    at.run()
    assert recalls == ["D-3001", "D-3001"]  # the scope changed: recalled again
