"""A case an agent handed in, on its page (AppTest on the real server): the agent's part once, the dashboard's
recompute beside it, their differences in words; and "then versus now" says only what changed since the agent's
recall (the agent's own request differs from the dashboard's: a record it cited that nothing happened to did not
"leave")."""

from __future__ import annotations

from fastapi.testclient import TestClient

from dashboard.api.context import ApiContext
from dashboard.api.routes import api
from dashboard.delivery.outbox import Outbox
from tests.conftest import SIGNING_SECRET
from tests.helpers import exception_case, open_page, texts

AGENT = {
    "name": "ap-agent",
    "version": "2.0",
    "recommendation": "approve",
    "confidence": 0.55,
    "rationale": "A V11 price variance was approved.",
    "cited": ["PREC-V02-PRI-01", "PREC-V11-PRI-01"],
    "recall": {
        "query": "price variance",
        "tags": ["type:price_variance"],
        "tags_match": "any",
        "document_ids": ["PREC-V02-PRI-01", "PREC-V11-PRI-01"],
    },
}


def test_the_agent_part_is_shown_once_beside_the_recompute_and_then_versus_now_invents_nothing(
    hindsight, demo_banks, point_app, tmp_path
):
    env = {
        **hindsight.env(finance=demo_banks.finance, support=demo_banks.support),
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
    }
    point_app(env)
    context = ApiContext.configured()
    point_app(env, Outbox(context.cases.engine, signing_key=SIGNING_SECRET))  # the page reads the API's store
    token, _ = context.tokens.create("ap-agent", ["finance"], ["submit"], "Lead Lee")
    body = {"case": exception_case("E-9301", "V02").model_dump(mode="json"), "agent": AGENT}
    assert (
        TestClient(api(lambda: context))
        .post("/cases/finance", json=body, headers={"Authorization": f"Bearer {token}"})
        .status_code
        == 201
    )

    at = open_page("../finance/pages/exceptions.py", timeout=90, case="E-9301")
    text = texts(at)
    assert text.count("ap-agent 2.0: recommends approve (approve for payment), confidence 0.55") == 1
    assert "What the submitting agent said" in text and "The dashboard's recompute" in text
    assert "Recommends reject, confidence 0.67" in text  # the recompute, beside the agent's part
    assert "Agent's recommendation" not in text and "None (0.00)" not in text  # no second, empty copy of its part
    assert (
        "Differs: The agent recommends approve (approve for payment); the dashboard's recompute recommends reject "
        "(reject)."
    ) in text
    assert "Differs: The agent cited PREC-V11-PRI-01, which the dashboard's recall did not return." in text, text
    assert "The recall ap-agent reported with its case:" in text, text
    since = next(t.value for t in at.text if t.value.startswith("Since then:"))
    assert since == "Since then: 0 appeared (none); 0 left (none).", since  # nothing was retained, retired or retagged
    assert not any(t.value.startswith("PREC-V11-PRI-01 left") for t in at.text)
    lines = [line for t in at.text for line in t.value.splitlines()]
    assert "PREC-V02-PRI-01: relevant; origin: the demo seed" in lines  # cited by the agent and in the evidence now
    assert "PREC-V02-PRI-02: relevant; origin: the demo seed (not in the agent's evidence then)" in lines
