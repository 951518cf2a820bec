"""The API as MCP tools, through the official SDK's own client, against the real app (its own process, the real
Hindsight, streamable HTTP at /api/v1/mcp): a case requested, decided on its page, and the decision returned by
get_decision; list_cases and withdraw_case; a token without the scope refused."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from dashboard.access.api_tokens import ApiTokens
from dashboard.cli.app_server import serve_app
from dashboard.delivery.outbox import Outbox
from dashboard.store.db import make_engine
from tests.conftest import SIGNING_SECRET
from tests.helpers import exception_case, open_page, run_coroutine
from tests.warm_app import start_warmed

AGENT = {
    "name": "mcp-agent",
    "version": "1.0",
    "recommendation": "approve",
    "confidence": 0.6,
    "cited": ["PREC-V02-PRI-01"],
}
TOOLS = {"request_review", "get_decision", "list_cases", "withdraw_case"}


def _tools(url: str, token: str) -> Client:
    """The SDK's client on the app's MCP endpoint, sending the API token as the routes expect it."""
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(90))
    return Client(streamable_http_client(f"{url}/api/v1/mcp", http_client=http))


def _out(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content if result.structured_content else json.loads(result.content[0].text)


def test_mcp_tools_request_a_review_and_return_the_decision_made_on_the_page(
    hindsight, demo_banks, point_app, monkeypatch, tmp_path: Path
):
    env = {
        **{k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"},
        **hindsight.env(finance=demo_banks.finance, support=demo_banks.support),
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
    }
    engine = make_engine(None, tmp_path)
    agent_token, _ = ApiTokens(engine).create("mcp-agent", ["finance"], ["submit", "read"], "Lead Lee")
    reader_token, _ = ApiTokens(engine).create("auditor", ["finance"], ["read"], "Lead Lee")
    case = exception_case("E-9501", "V02").model_dump(mode="json")
    other = exception_case("E-9502", "V02").model_dump(mode="json")

    with serve_app(env, tmp_path, start=start_warmed) as url:

        async def before_the_decision() -> dict:
            async with _tools(url, agent_token) as tools:
                listed = {tool.name for tool in (await tools.list_tools()).tools}
                requested = _out(
                    await tools.call_tool("request_review", {"kind": "finance", "case": case, "agent": AGENT})
                )
                _out(await tools.call_tool("request_review", {"kind": "finance", "case": other}))
                waited = _out(
                    await tools.call_tool("get_decision", {"kind": "finance", "case_id": "E-9501", "wait_s": 1})
                )
                withdrawn = _out(
                    await tools.call_tool(
                        "withdraw_case",
                        {"kind": "finance", "case_id": "E-9502", "by": "mcp-agent", "why": "the vendor credited it"},
                    )
                )
                page = _out(await tools.call_tool("list_cases", {"kind": "finance"}))
                bad = await tools.call_tool("request_review", {"kind": "finance", "case": {**case, "id": "E-80/24"}})
            async with _tools(url, reader_token) as tools:
                refused = await tools.call_tool("request_review", {"kind": "finance", "case": other, "agent": AGENT})
                read = _out(
                    await tools.call_tool("get_decision", {"kind": "finance", "case_id": "E-9501", "wait_s": 0})
                )
            async with _tools(url, "rr_not-a-token") as tools:
                unknown = await tools.call_tool("list_cases", {"kind": "finance"})
            return {
                "listed": listed,
                "requested": requested,
                "waited": waited,
                "withdrawn": withdrawn,
                "page": page,
                "bad": bad,
                "refused": refused,
                "read": read,
                "unknown": unknown,
            }

        got = run_coroutine(before_the_decision())
        assert TOOLS <= got["listed"]
        assert got["requested"]["status"] == "open" and got["requested"]["agent"]["name"] == "mcp-agent"
        assert got["waited"]["final"] is False and got["read"]["status"] == "open"
        assert got["withdrawn"]["status"] == "withdrawn"
        assert [(c["case_id"], c["status"]) for c in got["page"]["cases"]] == [
            ("E-9501", "open"),
            ("E-9502", "withdrawn"),
        ]
        assert got["bad"].is_error and "422: case.id" in got["bad"].content[0].text
        assert (
            got["refused"].is_error
            and "403: the token 'auditor' may not submit exceptions" in got["refused"].content[0].text
        )
        assert got["unknown"].is_error and "401: this API token is unknown or revoked" in got["unknown"].content[0].text

        # A reviewer decides it on its page (the app's own store): the recompute's reject, against the agent's approve.
        point_app(env, Outbox(engine, signing_key=SIGNING_SECRET))
        at = open_page("../finance/pages/exceptions.py", timeout=90, case="E-9501")
        at.text_input(key="reviewer_name").input("Dana Reviewer")
        at.button(key="decision_submit_E-9501").click().run()
        assert not at.exception, at.exception

        async def the_decision() -> dict:
            async with _tools(url, agent_token) as tools:
                return _out(
                    await tools.call_tool("get_decision", {"kind": "finance", "case_id": "E-9501", "wait_s": 30})
                )

        decided = run_coroutine(the_decision())
    engine.dispose()
    assert decided["final"] is True and decided["decision"]["reviewer"] == "Dana Reviewer"
    assert (decided["decision"]["outcome"], decided["decision"]["agent"], decided["decision"]["overridden"]) == (
        "reject",
        "mcp-agent",
        True,
    )
