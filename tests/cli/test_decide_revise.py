"""`decide` on a decided case refuses, naming the standing decision, unless told `--revise REASON`: then it records
the next revision with its reason, which the real Hindsight's next recall finds; both revisions stay in the export, and
the webhook event and the agents' API carry the revision and its reason."""

from __future__ import annotations

import json
import uuid

from fastapi.testclient import TestClient

from dashboard.api.context import ApiContext
from dashboard.api.routes import api
from dashboard.delivery.outbox import Outbox
from dashboard.delivery.webhooks import WebhookEvents, WebhookTarget
from dashboard.finance.decisions import document_id_for
from dashboard.store.db import make_engine
from tests.conftest import signed_as
from tests.finance_helpers import precedent
from tests.helpers import demo_case, run_command

CASE = demo_case("E-1001")  # V01 price variance


def test_decide_refuses_a_decided_case_unless_told_to_revise_it_with_a_reason(hindsight, monkeypatch, capsys, tmp_path):
    bank = f"cli-revise-{uuid.uuid4().hex[:8]}"
    hindsight.gateway.ensure_bank(bank)
    hindsight.gateway.retain(
        bank, [signed_as(precedent("PREC-C-1", CASE.vendor_code, CASE.exception_type, "approve", "2025-03-01"))]
    )
    env = {"RECALL_REVIEW_DATA_DIR": str(tmp_path), "RECALL_REVIEW_ROLE": "reviewer"}

    def decide(*argv: str) -> tuple[int, str, str]:
        return run_command(monkeypatch, capsys, hindsight, bank, "decide", "--case", CASE.id, *argv, env=env)

    # The finance webhook, configured before the first decision (its cursor starts there); nothing is posted here.
    target = WebhookTarget("finance", "http://127.0.0.1:9/hooks", "a-webhook-secret-of-the-tests", allow_private=True)
    events = WebhookEvents(make_engine(None, tmp_path), targets={(bank, "exception"): target})
    assert events.dispatch() == 0
    code, out, err = decide(
        "--outcome",
        "reject",
        "--reason",
        "CONTRACT_AMENDMENT",
        "--note",
        "Price not agreed",
        "--reviewer",
        "Dana",
        "--json",
    )
    assert code == 0, err
    first = json.loads(out)
    assert (first["revision"], first["revision_reason"], first["state"]) == (1, None, "delivered")

    code, out, err = decide("--outcome", "approve", "--reviewer", "Lee")
    assert code == 1 and out == ""
    assert (
        f"E-1001 is already decided: reject by Dana, revision 1 (decision #{first['audit_id']})" in err
        and "--revise REASON" in err
    )
    code, _, err = decide("--outcome", "approve", "--reviewer", "Lee", "--revise", "  ")
    assert code == 2 and "--revise" in err
    outbox = Outbox(make_engine(None, tmp_path))  # the store the command opens from the same settings
    assert [r.revision for r in outbox.history("exception", CASE.id)] == [1]

    code, out, err = decide("--outcome", "approve", "--reviewer", "Lee", "--revise", "The price amendment was signed")
    assert code == 0, err
    assert out.startswith("E-1001: approve revised (revision 2)")
    history = outbox.history("exception", CASE.id)
    assert [(r.revision, r.decision.reviewer, r.decision.revision_reason) for r in history] == [
        (2, "Lee", "The price amendment was signed"),
        (1, "Dana", None),
    ]
    events.dispatch()
    sent = [json.loads(events.get(e.event_id).body)["decision"] for e in events.deliveries()]
    assert {(d["revision"], d["revision_reason"], d["reviewer"]) for d in sent} >= {
        (2, "The price amendment was signed", "Lee")
    }
    assert all(d["revision_reason"] is None for d in sent if d["revision"] == 1)  # a first decision: none
    context = ApiContext.configured()  # the agents' API on the same settings and store
    token, _ = context.tokens.create("ap-agent", ["finance"], ["read"], "Lead Lee")
    answer = TestClient(api(lambda: context)).get(
        f"/cases/finance/{CASE.id}", headers={"Authorization": f"Bearer {token}"}
    )
    assert answer.status_code == 200, answer.text
    decided = answer.json()["decision"]
    assert (decided["revision"], decided["revision_reason"], decided["reviewer"]) == (
        2,
        "The price amendment was signed",
        "Lee",
    )
    memory = hindsight.gateway.document(bank, document_id_for(CASE.id))
    assert memory is not None and "by reviewer Lee " in memory.original_text and "Dana" not in memory.original_text

    code, out, err = run_command(monkeypatch, capsys, hindsight, bank, "export-audit", "--format", "json", env=env)
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["revision"], r["reviewer"], r["revision_reason"]) for r in rows] == [
        (2, "Lee", "The price amendment was signed"),
        (1, "Dana", ""),
    ]
