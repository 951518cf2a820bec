"""The agents' API on a scratch review store (FastAPI's test client, in process): handing a case in, idempotency and
conflicts, every refusal in words, statuses as the pages count them (held is never final), the long poll, pages and
the "decided since" cursor, tokens kept as hashes. The API served by the real app beside the pages, with decisions made
in Chromium and delivered to the real Hindsight, is tests/e2e/test_example_agent.py."""

from __future__ import annotations

import json
import threading
import time

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from dashboard.access.limits import ApprovalLimits
from dashboard.api.context import ApiContext
from dashboard.api.routes import MAX_BODY_BYTES, api
from dashboard.finance.kind import FINANCE
from dashboard.finance.policy import Recommendation
from dashboard.kinds import cases_of
from tests.helpers import exception_case, exception_proposal, service_on

REC = Recommendation(action="approve", confidence=0.8, cited=[], rationale="r", policy="precedent")
AGENT = {
    "name": "ap-agent",
    "version": "1.0",
    "recommendation": "approve",
    "confidence": 0.7,
    "rationale": "two precedents",
    "cited": ["PREC-V02-PRI-01"],
    "recall": {
        "query": "price variance V02",
        "tags": ["vendor:V02", "type:price_variance"],
        "tags_match": "all_strict",
        "document_ids": ["PREC-V02-PRI-01"],
    },
}


def case_body(case_id: str = "E-9001", vendor: str = "V02", **changes) -> dict:
    return {**exception_case(case_id, vendor).model_dump(mode="json"), **changes}


@pytest.fixture
def context(tmp_path, monkeypatch) -> ApiContext:
    monkeypatch.setenv("RECALL_REVIEW_DATA_DIR", str(tmp_path))
    return ApiContext.configured()


@pytest.fixture
def client(context) -> TestClient:
    return TestClient(api(lambda: context))


@pytest.fixture
def agent_token(context) -> dict:
    token, _ = context.tokens.create("ap-agent", ["finance"], ["submit", "read"], "Lead Lee")
    return {"Authorization": f"Bearer {token}"}


def submit(client, headers, body=None, agent=AGENT, kind="finance"):
    return client.post(f"/cases/{kind}", json={"case": body or case_body(), "agent": agent}, headers=headers)


def decide(context, case_id: str, outcome: str | None = None, reviewer: str = "Dana", amount: float = 110.0, **options):
    service = service_on(context.cases.engine, **options)
    case = exception_case(case_id, "V02").model_copy(update={"invoice_amount": amount})
    return service.decide(context.bank(FINANCE), "reviewer", exception_proposal(case, REC, reviewer, outcome))


def test_a_case_handed_in_is_stored_once_and_queued_after_the_file(client, context, agent_token):
    first = submit(client, agent_token)
    assert first.status_code == 201, first.text
    assert first.json()["status"] == "open" and first.json()["final"] is False
    assert first.json()["agent"]["cited"] == ["PREC-V02-PRI-01"] and first.json()["source"] == "api:ap-agent"
    again = submit(client, agent_token)  # an agent's retry
    assert again.status_code == 200 and again.json()["seq"] == first.json()["seq"]
    queue = cases_of(context.settings, FINANCE)
    assert queue[-1].id == "E-9001" and [c.id for c in queue].count("E-9001") == 1
    assert queue[0].id == "E-1001"  # the demo queue file's rows come first


def test_other_values_for_a_case_id_are_a_conflict_naming_them(client, context, agent_token):
    submit(client, agent_token)
    conflict = submit(client, agent_token, case_body(invoice_amount=999.0), {**AGENT, "confidence": 0.9})
    assert conflict.status_code == 409
    assert conflict.json()["fields"] == ["case.invoice_amount", "agent.confidence"]
    assert "invoice_amount, agent.confidence differ" in conflict.json()["error"]
    assert context.cases.get("exception", "E-9001").fields["invoice_amount"] == 110.0  # nothing half-written
    in_file = submit(client, agent_token, case_body("E-1002"))
    assert in_file.status_code == 409 and in_file.json()["fields"] == ["case.id"]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"case": case_body(invoice_amount="a lot")}, "case.invoice_amount"),
        ({"case": {k: v for k, v in case_body().items() if k != "vendor_code"}}, "case.vendor_code"),
        ({"case": case_body(), "agent": {**AGENT, "confidence": 1.5}}, "agent.confidence"),
        ({"case": case_body(), "agent": {**AGENT, "recommendation": "pay twice"}}, "agent.recommendation"),
        ({"case": case_body(), "agent": {**AGENT, "mood": "sure"}}, "agent.mood"),
        ({"agent": AGENT}, "case"),
    ],
)
def test_a_bad_body_is_refused_naming_the_field(client, context, agent_token, body, field):
    answer = client.post("/cases/finance", json=body, headers=agent_token)
    assert answer.status_code == 422, answer.text
    assert field in answer.json()["fields"] and field in answer.json()["error"]
    assert context.cases.get("exception", "E-9001") is None


def test_refusals_in_words(client, context, agent_token):
    oversized = client.post("/cases/finance", content=b"{" + b" " * MAX_BODY_BYTES + b"}", headers=agent_token)
    assert oversized.status_code == 413 and "the limit is 256,000" in oversized.json()["error"]
    no_token = client.post("/cases/finance", json={"case": case_body()})
    assert no_token.status_code == 401 and "Authorization: Bearer" in no_token.json()["error"]
    wrong = client.get("/cases/finance/E-1002", headers={"Authorization": "Bearer rr_not-a-token"})
    assert wrong.status_code == 401 and "unknown or revoked" in wrong.json()["error"]
    reader, _ = context.tokens.create("auditor", ["finance"], ["read"], "Lead Lee")
    refused = submit(client, {"Authorization": f"Bearer {reader}"})
    assert refused.status_code == 403 and "may not submit exceptions" in refused.json()["error"]
    other_kind = client.get("/cases/support/T-2001", headers=agent_token)
    assert other_kind.status_code == 403 and "may not read tickets" in other_kind.json()["error"]
    unknown = client.get("/cases/payroll/X-1", headers=agent_token)
    assert unknown.status_code == 404 and "one of finance, support" in unknown.json()["error"]
    missing = client.get("/cases/finance/E-0000", headers=agent_token)
    assert missing.status_code == 404 and "no exception 'E-0000'" in missing.json()["error"]
    assert context.cases.get("exception", "E-9001") is None


def test_tokens_are_kept_as_hashes_and_revoked_ones_refused(client, context, agent_token):
    token = agent_token["Authorization"].removeprefix("Bearer ")
    with context.cases.engine.connect() as conn:
        stored = " ".join(str(v) for row in conn.execute(sa.text("SELECT * FROM review_api_tokens")) for v in row)
    assert token not in stored
    assert client.get("/cases/finance/E-1002", headers=agent_token).status_code == 200
    assert context.tokens.named("ap-agent").last_used_at is not None
    context.tokens.revoke("ap-agent")
    assert client.get("/cases/finance/E-1002", headers=agent_token).status_code == 401


def test_the_decision_is_reported_once_it_stands_and_a_held_one_never(client, context, agent_token):
    submit(client, agent_token)
    submit(client, agent_token, case_body("E-9002", invoice_amount=50_000.0))
    decide(context, "E-9001", outcome="reject", reviewer="Dana")
    decided = client.get("/cases/finance/E-9001", headers=agent_token).json()
    assert decided["status"] == "pending delivery" and decided["final"] and not decided["in_memory"]
    assert decided["decision"]["outcome"] == "reject" and decided["decision"]["reviewer"] == "Dana"
    assert decided["decision"]["reason_code"] == "CONTRACT_AMENDMENT" and decided["decision"]["revision"] == 1
    decide(context, "E-9002", reviewer="Dana", amount=50_000.0, limits=ApprovalLimits({"reviewer": 20_000.0}))
    held = client.get("/cases/finance/E-9002", headers=agent_token).json()
    assert held["status"] == "awaiting second approval" and not held["final"] and held["decision"] is None


def test_a_blind_review_shows_no_decision(client, context, agent_token):
    submit(client, agent_token)
    decide(context, "E-9001", outcome="reject", second_review_share=1.0)
    blind = client.get("/cases/finance/E-9001", headers=agent_token).json()
    assert blind["status"] == "awaiting blind second review" and blind["decision"] is None and not blind["final"]


def test_a_long_poll_answers_when_the_decision_lands(client, context, agent_token):
    submit(client, agent_token)
    waiting = client.get("/cases/finance/E-9001?wait=0", headers=agent_token).json()
    assert waiting["final"] is False
    started = threading.Event()

    def later():
        started.wait(5)
        time.sleep(0.5)  # the poll is waiting by now
        decide(context, "E-9001", outcome="approve")

    threading.Thread(target=later, daemon=True).start()
    started.set()
    answer = client.get("/cases/finance/E-9001?wait=30", headers=agent_token).json()
    assert answer["final"] and answer["decision"]["outcome"] == "approve"
    too_long = client.get("/cases/finance/E-9001?wait=600", headers=agent_token)
    assert too_long.status_code == 422 and too_long.json()["fields"] == ["query.wait"]


def test_pages_and_the_decided_since_cursor(client, context, agent_token):
    for n in range(1, 6):
        submit(client, agent_token, case_body(f"E-910{n}"))
    pages, after = [], 0
    while after is not None:
        page = client.get(f"/cases/finance?limit=2&after={after}", headers=agent_token).json()
        pages.append([c["case_id"] for c in page["cases"]])
        after = page["next_after"]
    assert pages == [["E-9101", "E-9102"], ["E-9103", "E-9104"], ["E-9105"]]
    start = client.get("/cases/finance?decided_since=0", headers=agent_token).json()
    assert start["cases"] == [] and start["changes_cursor"] == 0
    decide(context, "E-9102", outcome="reject")
    decide(context, "E-9104", outcome="approve")
    changed = client.get(f"/cases/finance?decided_since={start['changes_cursor']}", headers=agent_token).json()
    assert [c["case_id"] for c in changed["cases"]] == ["E-9102", "E-9104"]
    assert (
        client.get(f"/cases/finance?decided_since={changed['changes_cursor']}", headers=agent_token).json()["cases"]
        == []
    )
    open_ones = client.get("/cases/finance?status=open", headers=agent_token).json()
    assert [c["case_id"] for c in open_ones["cases"]] == ["E-9101", "E-9103", "E-9105"]
    bad = client.get("/cases/finance?status=maybe", headers=agent_token)
    assert bad.status_code == 422 and bad.json()["fields"] == ["status"]


def test_the_openapi_document_describes_the_routes(client):
    document = client.get("/openapi.json").json()
    assert {"/cases/{kind}", "/cases/{kind}/{case_id}"} <= set(document["paths"])
    body = document["paths"]["/cases/{kind}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"case", "agent"} <= set(body["properties"])


def test_the_reported_recall_is_the_agent_run_then_versus_now_compares(client, context, agent_token):
    from dashboard.agents.then_now import then_vs_now
    from dashboard.store.agent_runs import ResultRef

    submit(client, agent_token)
    submit(client, agent_token)  # a retry records no second run
    runs = context.runs.runs("exception", "E-9001")
    assert len(runs) == 1 and runs[0].variant == "submitted" and runs[0].agent == "finance"
    assert runs[0].recalls[0].tags == ["vendor:V02", "type:price_variance"]
    now = [
        ResultRef(id="PREC-V02-PRI-01", document_id="PREC-V02-PRI-01"),
        ResultRef(id="decision-E-9000", document_id="decision-E-9000"),
    ]
    view = then_vs_now(runs[0], {}, now, audit_log_on=False)  # the agent reported it: no audit log needed
    assert view.source == "agent_run" and "submitting agent ap-agent recalled, as the agent reported it." in view.note
    assert [r.ref for r in view.appeared] == ["decision-E-9000"] and view.left == []


@pytest.mark.parametrize("number", ["Infinity", "-Infinity", "NaN"])
@pytest.mark.parametrize("field", ["invoice_amount", "po_amount", "tolerance_pct"])
def test_a_non_finite_number_is_refused_naming_the_field(client, context, agent_token, number, field):
    raw = json.dumps({"case": {**case_body(), field: 0.0}, "agent": AGENT}).replace(
        f'"{field}": 0.0', f'"{field}": {number}'
    )
    assert number in raw  # as a JSON encoder that allows them writes it (Python's json.dumps of inf)
    answer = client.post("/cases/finance", content=raw, headers={**agent_token, "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["fields"] == [f"case.{field}"] and "finite" in answer.json()["error"]
    confidence = json.dumps({"case": case_body(), "agent": {**AGENT, "confidence": 0.5}}).replace(
        '"confidence": 0.5', f'"confidence": {number}'
    )
    answer = client.post(
        "/cases/finance", content=confidence, headers={**agent_token, "Content-Type": "application/json"}
    )
    assert answer.status_code == 422 and answer.json()["fields"] == ["agent.confidence"], answer.text
    assert context.cases.get("exception", "E-9001") is None


@pytest.mark.parametrize(
    "case_id", ["E-80/24", "../etc", "E-1..2", "..", ".hidden", "E 9001", "E-9001?x=1", "E#1", "é-1", "-E1", "E" * 65]
)
def test_a_case_id_outside_the_pattern_is_refused(client, context, agent_token, case_id):
    answer = submit(client, agent_token, {**case_body(), "id": case_id})
    assert answer.status_code == 422, answer.text
    assert answer.json()["fields"] == ["case.id"] and (
        "no '/', no '..'" in answer.json()["error"] or "64" in answer.json()["error"]
    )
    assert context.cases.cases("exception") == ()


@pytest.mark.parametrize("case_id", ["E-9001", "INV.2026-04_7", "9" * 64])
def test_an_id_in_the_pattern_reads_back_through_every_route(client, agent_token, case_id):
    assert submit(client, agent_token, case_body(case_id)).status_code == 201
    assert client.get(f"/cases/finance/{case_id}", headers=agent_token).json()["case_id"] == case_id
    assert [c["case_id"] for c in client.get("/cases/finance", headers=agent_token).json()["cases"]] == [case_id]


def test_every_limit_is_in_the_openapi_document(client):
    document = client.get("/openapi.json").json()
    body = document["paths"]["/cases/{kind}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    finance = next(k for k in body["properties"]["case"]["oneOf"] if k["title"].startswith("finance"))
    fields = finance["properties"]
    assert fields["description"]["maxLength"] == 2000 and fields["id"]["maxLength"] == 64
    assert fields["invoice_amount"]["minimum"] == 0 and fields["tolerance_pct"]["anyOf"][0]["maximum"] == 100
    support = next(k for k in body["properties"]["case"]["oneOf"] if k["title"].startswith("support"))
    assert support["properties"]["drafted_response"]["maxLength"] == 8000
    agent = body["properties"]["agent"]
    assert agent is not None and "AgentPart" in json.dumps(body)
    assert "256,000" in json.dumps(document["paths"]["/cases/{kind}"]["post"]["responses"])
    wait = next(p for p in document["paths"]["/cases/{kind}/{case_id}"]["get"]["parameters"] if p["name"] == "wait")
    assert wait["schema"]["maximum"] == 60


def test_an_open_case_is_withdrawn_with_who_and_why_and_a_decided_one_never(client, context, agent_token):
    submit(client, agent_token)
    submit(client, agent_token, case_body("E-9002"))
    withdrawn = client.request(
        "DELETE",
        "/cases/finance/E-9001",
        json={"by": "ap-agent", "why": "The vendor sent a credit note."},
        headers=agent_token,
    )
    assert withdrawn.status_code == 200, withdrawn.text
    out = withdrawn.json()
    assert (out["status"], out["final"], out["decision"]) == ("withdrawn", False, None)
    assert (
        out["withdrawal"]["by"] == "ap-agent (api:ap-agent)"
        and out["withdrawal"]["why"] == "The vendor sent a credit note."
    )
    assert "E-9001" not in [c.id for c in cases_of(context.settings, FINANCE)]  # out of the queue every page shows
    assert client.get("/cases/finance/E-9001", headers=agent_token).json()["status"] == "withdrawn"
    assert [
        c["case_id"] for c in client.get("/cases/finance?status=withdrawn", headers=agent_token).json()["cases"]
    ] == ["E-9001"]
    again = client.request(
        "DELETE", "/cases/finance/E-9001", json={"by": "someone else", "why": "again"}, headers=agent_token
    )
    assert again.status_code == 200 and again.json()["withdrawal"]["by"] == "ap-agent (api:ap-agent)"  # as it was

    decide(context, "E-9002", outcome="reject")
    decided = client.request(
        "DELETE", "/cases/finance/E-9002", json={"by": "ap-agent", "why": "late"}, headers=agent_token
    )
    assert decided.status_code == 409 and "a decision is recorded on it" in decided.json()["error"]
    assert client.get("/cases/finance/E-9002", headers=agent_token).json()["status"] == "pending delivery"
    no_why = client.request("DELETE", "/cases/finance/E-9002", json={"by": "ap-agent"}, headers=agent_token)
    assert no_why.status_code == 422 and no_why.json()["fields"] == ["why"]
    in_file = client.request("DELETE", "/cases/finance/E-1002", json={"by": "a", "why": "b"}, headers=agent_token)
    assert in_file.status_code == 409 and "queue file" in in_file.json()["error"]
    missing = client.request("DELETE", "/cases/finance/E-0000", json={"by": "a", "why": "b"}, headers=agent_token)
    assert missing.status_code == 404
    reader, _ = context.tokens.create("auditor", ["finance"], ["read"], "Lead Lee")
    refused = client.request(
        "DELETE", "/cases/finance/E-9002", json={"by": "a", "why": "b"}, headers={"Authorization": f"Bearer {reader}"}
    )
    assert refused.status_code == 403


def test_a_batch_answers_each_case_on_its_own_and_is_idempotent_per_case(client, context, agent_token):
    submit(client, agent_token, case_body("E-9003"))  # handed in before: the batch holds it again, unchanged
    items = [
        {"case": case_body("E-9001"), "agent": AGENT},
        {"case": case_body("E-9002", invoice_amount="a lot"), "agent": AGENT},  # 422 naming the field
        {"case": case_body("E-9003"), "agent": AGENT},  # 200: the same body again
        {"case": case_body("E-9003", invoice_amount=999.0), "agent": AGENT},  # 409: other values for an id
        {"case": {**case_body(), "id": "E-80/24"}},  # 422: not an id the API takes
        {"agent": AGENT},  # 422: no case
        {"case": case_body("E-9004")},
    ]
    answer = client.post("/cases/finance/batch", json={"cases": items}, headers=agent_token)
    assert answer.status_code == 200, answer.text
    results = answer.json()["results"]
    assert [(r["index"], r["status"], r["case_id"]) for r in results] == [
        (0, 201, "E-9001"),
        (1, 422, "E-9002"),
        (2, 200, "E-9003"),
        (3, 409, "E-9003"),
        (4, 422, "E-80/24"),
        (5, 422, None),
        (6, 201, "E-9004"),
    ]
    assert results[1]["fields"] == ["case.invoice_amount"] and results[3]["fields"] == ["case.invoice_amount"]
    assert results[4]["fields"] == ["case.id"] and results[5]["fields"] == ["case"]
    assert results[0]["case"]["status"] == "open" and results[0]["case"]["agent"]["name"] == "ap-agent"
    assert (answer.json()["stored"], answer.json()["unchanged"], answer.json()["refused"]) == (2, 1, 4)
    again = client.post("/cases/finance/batch", json={"cases": items}, headers=agent_token).json()  # a retry
    assert [r["status"] for r in again["results"]] == [200, 422, 200, 409, 422, 422, 200]
    assert [c.case_id for c in context.cases.cases("exception")] == ["E-9003", "E-9001", "E-9004"]
    too_many = client.post(
        "/cases/finance/batch",
        json={"cases": [{"case": case_body(f"E-8{n:03d}")} for n in range(101)]},
        headers=agent_token,
    )
    assert too_many.status_code == 422 and too_many.json()["fields"] == ["cases"]
    assert client.post("/cases/finance/batch", json={"cases": []}, headers=agent_token).status_code == 422
