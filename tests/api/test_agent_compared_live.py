"""The agent that handed a case in is the one a decision is compared with, end to end on the real Hindsight (both
modes): cases handed in through the API, decided with `python -m dashboard decide`, sent by `worker --once` to the bank
and to a signed webhook. `overridden` says whether the person decided otherwise than that agent recommended, in the
API, the webhook and the bank's record; whether they agreed with the dashboard's recompute is said apart; the memory
text names the agent, its recommendation and the person's decision (the next recall reads it)."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from dashboard.api.context import ApiContext
from dashboard.api.routes import api
from dashboard.cli import main
from dashboard.delivery.webhook_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from dashboard.processes import free_port
from tests.helpers import exception_case
from tests.review.test_webhooks import Receiver

SECRET = "a-webhook-secret-of-the-tests"
# V02 price variances: the demo bank's two precedents were rejected, so the dashboard's recompute recommends reject.
AGENT = {
    "name": "ap-agent",
    "version": "2.0",
    "recommendation": "approve",
    "confidence": 0.55,
    "cited": ["PREC-V02-PRI-01"],
}


@pytest.fixture
def receiver():
    running = Receiver(free_port()).start()
    yield running
    running.stop()


def test_overridden_compares_the_person_with_the_agent_that_handed_the_case_in(
    live, live_demo_banks, receiver, monkeypatch, tmp_path, capsys
):
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    env = {
        **live.env(finance=live_demo_banks.finance, support=live_demo_banks.support),
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
        "RECALL_REVIEW_QUEUES": json.dumps(
            {"finance": {"webhook_url": receiver.url, "webhook_secret": SECRET, "webhook_allow_private": True}}
        ),
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    context = ApiContext.configured()
    token, _ = context.tokens.create("ap-agent", ["finance"], ["submit", "read"], "Lead Lee")
    client, auth = TestClient(api(lambda: context)), {"Authorization": f"Bearer {token}"}
    for case_id in ("E-9201", "E-9202"):
        body = {"case": exception_case(case_id, "V02").model_dump(mode="json"), "agent": AGENT}
        assert client.post("/cases/finance", json=body, headers=auth).status_code == 201

    # The person rejects what the agent approved (as the recompute recommends); then approves as the agent did.
    assert (
        main(["decide", "--kind", "finance", "--case", "E-9201", "--outcome", "reject", "--reviewer", "Dana", "--json"])
        == 0
    )
    assert json.loads(capsys.readouterr().out)["overridden"] is True
    assert (
        main(
            [
                "decide",
                "--kind",
                "finance",
                "--case",
                "E-9202",
                "--outcome",
                "approve",
                "--reason",
                "PRICE_AGREED",
                "--reviewer",
                "Dana",
                "--json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["overridden"] is False
    assert main(["worker", "--once", "--json"]) == 0  # the webhook events: queued and sent in one pass
    capsys.readouterr()

    expected = {  # case -> (outcome, overridden, agreed with the recompute)
        "E-9201": ("reject", True, True),
        "E-9202": ("approve", False, False),
    }
    for case_id, (outcome, overridden, agreed) in expected.items():
        decision = client.get(f"/cases/finance/{case_id}", headers=auth).json()["decision"]
        assert (
            decision["outcome"],
            decision["agent"],
            decision["agent_recommendation"],
            decision["overridden"],
            decision["recompute_recommendation"],
            decision["agreed_with_recompute"],
        ) == (outcome, "ap-agent", "approve", overridden, "reject", agreed), decision
        assert (
            decision["action"] is None
            and decision["action_words"] == {"approve": "approve for payment", "reject": "reject"}[outcome]
        )

    events = {}
    for got in receiver.requests:
        assert verify(SECRET, got.headers[TIMESTAMP_HEADER], got.body, got.headers[SIGNATURE_HEADER], now=got.at)
        event = json.loads(got.body)
        events[event["case_id"]] = event["decision"]
    assert sorted(events) == ["E-9201", "E-9202"]
    for case_id, (outcome, overridden, agreed) in expected.items():
        sent = events[case_id]
        assert (
            sent["outcome"],
            sent["agent"],
            sent["agent_recommendation"],
            sent["overridden"],
            sent["recompute_recommendation"],
            sent["agreed_with_recompute"],
        ) == (outcome, "ap-agent", "approve", overridden, "reject", agreed), sent

    rejected = live.gateway.document(live_demo_banks.finance, "decision-E-9201")
    agreed = live.gateway.document(live_demo_banks.finance, "decision-E-9202")
    assert (
        "Decision: reject, by reviewer Dana overriding agent ap-agent's recommendation to approve."
        in rejected.original_text
    )
    assert "approving" not in rejected.original_text and "agreeing" not in rejected.original_text
    assert (
        "Decision: approve, by reviewer Dana agreeing with agent ap-agent's recommendation (approve). "
        "The dashboard's recompute recommended reject."
    ) in agreed.original_text
    for document, overridden in ((rejected, "true"), (agreed, "false")):
        metadata = document.retain_params["metadata"]
        assert (
            metadata["overridden"],
            metadata["agent_name"],
            metadata["agent_recommendation"],
            metadata["recompute_recommendation"],
        ) == (overridden, "ap-agent", "approve", "reject")
    # What the next recall for V02 price variances reads: the person's reject against the agent's approve.
    live.settle(live_demo_banks.finance)
    found = live.gateway.recall(
        live_demo_banks.finance,
        "ap-agent recommendation to approve overridden by reviewer Dana",
        tags=["vendor:V02"],
        tags_match="any",
    )
    texts = " ".join(r.text for r in found.results if r.document_id == "decision-E-9201")
    assert "ap-agent" in texts and "approve" in texts and "reject" in texts, texts
