"""The agents' API as MCP tools (the official `mcp` SDK, streamable HTTP), served at /api/v1/mcp on the app's own port
(docs/api.md, "MCP"): request_review, get_decision (waits like the long poll), list_cases, withdraw_case. Each does what
its route does, through the routes' own functions (`Operations`, handed in by api/routes.py), authorised by the same
API tokens and scopes: the agent's MCP client sends `Authorization: Bearer rr_...` with each request. A refusal is the
tool's error, in the API's words, with its status first ("403: the token 'auditor' may not submit exceptions ...").
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi.concurrency import run_in_threadpool
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import BaseModel, Field

from dashboard.api.context import ApiContext
from dashboard.api.models import MAX_PAGE, MAX_WAIT_S
from dashboard.review.queue_kind import QueueKind
from dashboard.store.agent_part import AgentPart

INSTRUCTIONS = (
    "Hand a case to a person for review and learn their decision. request_review hands a case in (idempotent by kind "
    "and case id); get_decision answers once a person's decision is final (waiting up to wait_s seconds: call it again "
    "while `final` is false); act only on a final decision. list_cases pages through a kind's handed-in cases; "
    "withdraw_case withdraws an open one that no longer needs a person."
)


@dataclass(frozen=True)
class Operations:
    """What the routes do, for the tools: one behaviour, two ways in (each raises `refusal` with a status, words and
    fields, as the routes answer)."""

    authorized: Callable[
        [ApiContext, str, QueueKind, str], Any
    ]  # (context, Authorization header, kind, scope) -> token
    hand_in: Callable[[ApiContext, QueueKind, dict, AgentPart | None, str], BaseModel]  # -> the case
    waited: Callable[
        [ApiContext, QueueKind, str, float], Awaitable[BaseModel]
    ]  # -> the case, final or once the wait is up
    listed: Callable[[ApiContext, QueueKind, str | None, int, int, int | None], BaseModel]  # -> a page of cases
    withdraw: Callable[[ApiContext, QueueKind, str, str, str, str], BaseModel]  # (.., case id, by, why, token name)
    refusal: type[Exception]


def mcp_server(shared: Callable[[], ApiContext], api: Operations) -> MCPServer:
    """The MCP server on the API's context (`shared`: the one the routes use)."""
    server = MCPServer(name="recall-review", title="Recall Review", instructions=INSTRUCTIONS, version="1")

    def refused(exc) -> ToolError:
        fields = f" (fields: {', '.join(exc.fields)})" if exc.fields else ""
        return ToolError(f"{exc.status}: {exc.error}{fields}")

    def allowed(ctx: Context, kind_key: str, scope: str):
        """(the API's context, the kind, the token) when the request's token may `scope` the kind; ToolError otherwise."""
        context = shared()
        kind = context.kinds.get(kind_key)
        if kind is None:
            raise ToolError(f"404: no queue kind {kind_key!r}; one of {', '.join(context.kinds)}")
        try:
            return context, kind, api.authorized(context, (ctx.headers or {}).get("authorization", ""), kind, scope)
        except api.refusal as exc:
            raise refused(exc) from None

    async def answered(call, *args) -> dict[str, Any]:
        try:
            out = await run_in_threadpool(call, *args)
        except api.refusal as exc:
            raise refused(exc) from None
        return out.model_dump(mode="json")

    @server.tool(
        description="Hand a case in for a person's review. kind: finance, support, ...; case: its fields with "
        "its `id` (as docs/api.md lists them); agent: your name, recommendation (one of the kind's "
        "outcomes), confidence, rationale, cited document ids. Idempotent by kind and case id. "
        "Returns the case with its status."
    )
    async def request_review(
        kind: str, case: dict[str, Any], ctx: Context, agent: AgentPart | None = None
    ) -> dict[str, Any]:
        context, found, token = allowed(ctx, kind, "submit")
        return await answered(api.hand_in, context, found, case, agent, token.name)

    @server.tool(
        description="A case's status and, once a person's decision is final, the decision (outcome, reviewer, "
        "reason, note, whether it overrode your recommendation). Waits up to wait_s seconds (0-60) "
        "for it to become final; call again while `final` is false."
    )
    async def get_decision(
        kind: str, case_id: str, ctx: Context, wait_s: Annotated[float, Field(ge=0, le=MAX_WAIT_S)] = 30.0
    ) -> dict[str, Any]:
        context, found, _token = allowed(ctx, kind, "read")
        try:
            out = await api.waited(context, found, case_id, wait_s)
        except api.refusal as exc:
            raise refused(exc) from None
        return out.model_dump(mode="json")

    @server.tool(
        description="The handed-in cases of a kind, oldest first, a page at a time (pass next_after as after); "
        "by status, or only those whose decision changed since a changes_cursor (decided_since)."
    )
    async def list_cases(
        kind: str,
        ctx: Context,
        status: str | None = None,
        after: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int, Field(ge=1, le=MAX_PAGE)] = 100,
        decided_since: Annotated[int | None, Field(ge=0)] = None,
    ) -> dict[str, Any]:
        context, found, _token = allowed(ctx, kind, "read")
        return await answered(api.listed, context, found, status, after, limit, decided_since)

    @server.tool(
        description="Withdraw an open case you handed in that no longer needs a person's decision (by: who "
        "withdraws it, why: why). Refused once a decision is recorded on it."
    )
    async def withdraw_case(kind: str, case_id: str, by: str, why: str, ctx: Context) -> dict[str, Any]:
        context, found, token = allowed(ctx, kind, "submit")
        return await answered(api.withdraw, context, found, case_id, by, why, token.name)

    return server
