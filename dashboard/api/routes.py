"""/api/v1: an agent hands a case in, reads its status and the person's decision (waiting for it if it likes), and
lists a queue. Every refusal is a JSON body `{"status": ..., "error": "<in words>", "fields": [...]}`; docs/api.md
lists them. No Streamlit: app/streamlit_app.py mounts this beside the pages, on the app's own port.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Callable
from contextlib import asynccontextmanager
from functools import cache
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field, ValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from dashboard.access.api_tokens import ApiToken
from dashboard.api.context import ApiContext
from dashboard.api.mcp_tools import Operations, mcp_server
from dashboard.api.models import MAX_PAGE, MAX_WAIT_S, BatchOut, CaseOut, ItemResult
from dashboard.api.runs import record_submitted_run
from dashboard.api.status import WITHDRAWN, case_out, queue_states
from dashboard.review.case_queue import CaseConflict
from dashboard.review.figures import STATUSES
from dashboard.review.queue_kind import QueueKind
from dashboard.store.agent_part import AgentPart
from dashboard.strict import StrictModel

MAX_BODY_BYTES = 256_000  # a case and its agent's part; a queue of many goes through `queue import`
POLL_S = 0.25
API_STATUSES = (*STATUSES, WITHDRAWN)
MAX_BATCH = 100  # cases in one POST /cases/{kind}/batch
MAX_BATCH_BYTES = 4_000_000
# A handed-in case's id: it is a path segment of every route and part of document ids, so it must read back as it was
# sent. A letter or digit, then letters, digits, '.', '_' or '-' (never '..'), 64 at most: E-9001, INV.2026-04_7.
CASE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
CASE_ID_WORDS = (
    "a letter or digit, then up to 63 letters, digits, '.', '_' or '-' (no '/', no '..', no spaces), e.g. E-9001"
)


class ApiError(Exception):
    def __init__(self, status: int, error: str, fields: list[str] | None = None):
        self.status, self.error, self.fields = status, error, fields or []


class SubmitCase(BaseModel):
    """The body of POST /cases/{kind}: the case as its kind's queue file has it, and the agent's own part."""

    case: dict[str, Any] = Field(description="The case's fields, as a row of the kind's queue file (with its `id`).")
    agent: AgentPart | None = None


class Batch(BaseModel):
    """The body of POST /cases/{kind}/batch: up to 100 cases, each as the body of POST /cases/{kind}."""

    cases: list[dict[str, Any]] = Field(
        min_length=1,
        max_length=MAX_BATCH,
        description='Each `{"case": {...}, "agent": {...}}`, as POST /cases/{kind} takes it.',
    )


class WithdrawCase(StrictModel):
    """The body of DELETE /cases/{kind}/{case_id}: who withdraws the case and why (kept with it)."""

    by: str = Field(min_length=1, max_length=120, description="Who withdraws it: the agent's or a person's name")
    why: str = Field(min_length=1, max_length=2000, description="Why it no longer needs a decision")


class CasePage(BaseModel):
    cases: list[CaseOut]
    next_after: int | None  # pass as `after` for the next page; None: no more
    changes_cursor: int | None = None  # with `decided_since`: pass it next time to get only newer decisions


def _problem(status: int, error: str, fields: list[str] | None = None) -> JSONResponse:
    return JSONResponse({"status": status, "error": error, "fields": fields or []}, status_code=status)


def _field_errors(exc: ValidationError | RequestValidationError, prefix: str = "") -> tuple[str, list[str]]:
    """One sentence naming each field and what is wrong with it, and the fields' names."""
    names, parts = [], []
    for err in exc.errors():
        loc = [str(p) for p in err["loc"] if p not in ("body",)]
        name = prefix + ".".join(loc) if loc else prefix.rstrip(".") or "body"
        names.append(name)
        parts.append(f"{name}: {err['msg']}")
    return "; ".join(parts), names


def api(context: Callable[[], ApiContext] = ApiContext.configured) -> FastAPI:
    """The API on the configured store and kinds (`context`: the tests give their own)."""
    shared = cache(context)
    operations = Operations(
        authorized=authorized, hand_in=_handed_in, waited=waited, listed=_listed, withdraw=_withdrawn, refusal=ApiError
    )
    # The host check is the served app's, over every route from one setting (dashboard/app/hosts.py): the SDK's own
    # would answer loopback names only and refuse the public name an operator configured.
    tools = mcp_server(shared, operations).streamable_http_app(
        streamable_http_path="/mcp",
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    @asynccontextmanager
    async def lifespan(_app):
        async with tools.router.lifespan_context(tools):  # the MCP session manager's task group
            yield

    app = FastAPI(
        title="Recall Review API",
        version="1",
        openapi_url="/openapi.json",
        docs_url="/docs",
        redoc_url=None,
        description="Hand a case to human review and learn the decision. See docs/api.md.",
        lifespan=lifespan,
    )
    app.router.routes.extend(tools.routes)  # /api/v1/mcp: the same API as MCP tools (api/mcp_tools.py)

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> JSONResponse:
        return _problem(exc.status, exc.error, exc.fields)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> JSONResponse:
        error, fields = _field_errors(exc)
        return _problem(422, error, fields)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return _problem(exc.status_code, str(exc.detail))

    def openapi() -> dict:
        """FastAPI's document, with each registered kind's case fields and their limits in the request body."""
        if app.openapi_schema is None:
            document = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            body = document["paths"]["/cases/{kind}"]["post"]["requestBody"]["content"]["application/json"]["schema"]
            kinds = [
                {**kind.model.model_json_schema(), "title": f"{kind.key}: a {kind.nouns[0]}"}
                for kind in shared().kinds.values()
            ]
            body["properties"]["case"] = {"description": SubmitCase.model_fields["case"].description, "oneOf": kinds}
            app.openapi_schema = document
        return app.openapi_schema

    app.openapi = openapi

    def kind_of(kind: Annotated[str, Path(description="A queue kind's key, e.g. finance")]) -> QueueKind:
        found = shared().kinds.get(kind)
        if found is None:
            raise ApiError(404, f"no queue kind {kind!r}; one of {', '.join(shared().kinds)}", ["kind"])
        return found

    def caller(scope: str):
        def check(request: Request, kind: QueueKind = Depends(kind_of)) -> ApiToken:
            return authorized(shared(), request.headers.get("authorization", ""), kind, scope)

        return check

    @app.post(
        "/cases/{kind}",
        response_model=CaseOut,
        status_code=201,
        responses={
            200: {"description": "The same body was handed in before: the case as it is"},
            409: {"description": "The case id was handed in with other values; `fields` names them"},
            413: {"description": "The body is larger than 256,000 bytes"},
            422: {"description": "A field is missing or wrong; `fields` names it"},
        },
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": SubmitCase.model_json_schema()}},
            }
        },
    )
    async def submit_case(
        request: Request, kind: QueueKind = Depends(kind_of), token: ApiToken = Depends(caller("submit"))
    ):
        """Hand a case in for review. Idempotent by kind and case id."""
        body = await _read_limited(request)
        try:
            submitted = SubmitCase.model_validate_json(body)
        except ValidationError as exc:
            error, fields = _field_errors(exc)
            raise ApiError(422, error, fields) from None
        out, created = await run_in_threadpool(_hand_in, shared(), kind, submitted, token.name)
        return JSONResponse(out.model_dump(mode="json"), status_code=201 if created else 200)

    @app.post(
        "/cases/{kind}/batch",
        response_model=BatchOut,
        responses={
            413: {"description": f"The body is larger than {MAX_BATCH_BYTES:,} bytes"},
            422: {"description": f"Not a JSON object with `cases`, a list of 1 to {MAX_BATCH} cases"},
        },
    )
    async def submit_cases(
        request: Request, kind: QueueKind = Depends(kind_of), token: ApiToken = Depends(caller("submit"))
    ):
        """Hand in up to 100 cases in one request: each is handed in as POST /cases/{kind} would, in order, and has its
        own result (201, 200, 409 or 422 with its error and fields); one refused case leaves the others stored.
        Idempotent per case, so the whole batch may be sent again after a lost answer."""
        body = await _read_limited(request, MAX_BATCH_BYTES)
        try:
            batch = Batch.model_validate_json(body)
        except ValidationError as exc:
            error, fields = _field_errors(exc)
            raise ApiError(422, error, fields) from None
        return await run_in_threadpool(_hand_in_all, shared(), kind, batch.cases, token.name)

    @app.delete(
        "/cases/{kind}/{case_id}",
        response_model=CaseOut,
        responses={
            404: {"description": "No case handed in with this id"},
            409: {"description": "A person decided it already (or it is a row of the queue file): it stays"},
            422: {"description": "`by` or `why` is missing or too long"},
        },
    )
    async def withdraw_case(
        case_id: str,
        withdrawal: WithdrawCase,
        kind: QueueKind = Depends(kind_of),
        token: ApiToken = Depends(caller("submit")),
    ):
        """Withdraw an open case that was handed in (the agent no longer needs a person's decision): it leaves the
        queue, and reads `withdrawn` with who withdrew it and why. Refused once a decision is recorded on it.
        Withdrawing it again answers with it as it is."""
        return await run_in_threadpool(_withdraw, shared(), kind, case_id, withdrawal, token.name)

    @app.get("/cases/{kind}/{case_id}", response_model=CaseOut)
    async def read_case(
        case_id: str,
        kind: QueueKind = Depends(kind_of),
        _token: ApiToken = Depends(caller("read")),
        wait: Annotated[float, Query(ge=0, le=MAX_WAIT_S, description="Seconds to wait for a final decision")] = 0,
    ):
        """A case's status and, once a person's decision stands, the decision. With `wait`, answers as soon as the
        decision is final (or when the seconds are up, with the status then)."""
        return await waited(shared(), kind, case_id, wait)

    @app.get("/cases/{kind}", response_model=CasePage)
    async def list_cases(
        kind: QueueKind = Depends(kind_of),
        _token: ApiToken = Depends(caller("read")),
        status: Annotated[str | None, Query(description=f"One of: {', '.join(API_STATUSES)}")] = None,
        after: Annotated[int, Query(ge=0, description="The `next_after` of the previous page")] = 0,
        limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
        decided_since: Annotated[
            int | None,
            Query(
                ge=0,
                description="Only cases whose decision changed after this `changes_cursor` (0: every decided case)",
            ),
        ] = None,
    ):
        """The handed-in cases of a kind, oldest first, a page at a time; by status, or decided since a cursor."""
        return await run_in_threadpool(_listed, shared(), kind, status, after, limit, decided_since)

    return app


def authorized(context: ApiContext, header: str, kind: QueueKind, scope: str) -> ApiToken:
    """The token an `Authorization` header carries, if it may `scope` (submit, read) this kind; ApiError (401, 403)."""
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ApiError(
            401,
            "no API token: send `Authorization: Bearer <token>` (a lead makes one with "
            "`.venv/bin/python -m dashboard token create`)",
        )
    found = context.tokens.check(token.strip())
    if found is None:
        raise ApiError(401, "this API token is unknown or revoked")
    if not found.allows(kind.key, scope):
        raise ApiError(
            403,
            f"the token {found.name!r} may not {scope} {kind.nouns[1]}: it allows "
            f"{', '.join(found.scopes)} on {', '.join(found.kinds)}",
        )
    return found


async def waited(context: ApiContext, kind: QueueKind, case_id: str, wait: float) -> CaseOut:
    """The case as soon as its decision is final (or it is withdrawn), or as it is once `wait` seconds are up."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + wait
    while True:
        out = await run_in_threadpool(_read, context, kind, case_id)
        if out.final or out.status == WITHDRAWN or loop.time() >= deadline:
            return out
        await asyncio.sleep(min(POLL_S, max(deadline - loop.time(), 0)))


def _non_finite(value: Any, name: str) -> list[str]:
    """The fields holding Infinity or NaN (JSON parsers accept them; no amount or confidence is one)."""
    if isinstance(value, float) and not math.isfinite(value):
        return [name]
    if isinstance(value, dict):
        return [f for key, item in value.items() for f in _non_finite(item, f"{name}.{key}")]
    if isinstance(value, list):
        return [f for i, item in enumerate(value) for f in _non_finite(item, f"{name}.{i}")]
    return []


def _case(kind: QueueKind, submitted: SubmitCase):
    """The case as its kind's model, its id as the API documents it; ApiError naming the field otherwise."""
    bad = _non_finite(submitted.case, "case")  # the agent's part is a strict model: it refuses them itself
    if bad:
        raise ApiError(422, "; ".join(f"{name}: must be a finite number (not Infinity or NaN)" for name in bad), bad)
    try:
        case = kind.model.model_validate(submitted.case)
    except ValidationError as exc:
        error, fields = _field_errors(exc, "case.")
        raise ApiError(422, error, fields) from None
    if not CASE_ID.fullmatch(case.id) or ".." in case.id:
        raise ApiError(422, f"case.id: {case.id[:80]!r} is not a case id the API takes: {CASE_ID_WORDS}", ["case.id"])
    return case


async def _read_limited(request: Request, limit: int = MAX_BODY_BYTES) -> bytes:
    """The body, refused with 413 past `limit` bytes whether or not the client said its length."""
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise ApiError(413, f"the body is {int(declared):,} bytes; the limit is {limit:,}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise ApiError(413, f"the body is over {limit:,} bytes, the limit")
    if not body:
        raise ApiError(422, "body: a JSON object with `case` (and optionally `agent`) is required", ["body"])
    return bytes(body)


def _hand_in(context: ApiContext, kind: QueueKind, submitted: SubmitCase, token: str) -> tuple[CaseOut, bool]:
    """(the case as the API answers for it, whether this call stored it); ApiError naming the field otherwise."""
    case = _case(kind, submitted)
    stored, created = _submit(context, kind, case.id, case.model_dump(mode="json"), submitted.agent, token)
    return case_out(context, kind, case.id, stored, stored.fields), created


def _hand_in_all(context: ApiContext, kind: QueueKind, items: list[dict[str, Any]], token: str) -> BatchOut:
    results = []
    for index, item in enumerate(items):
        raw_id = (item.get("case") or {}).get("id") if isinstance(item.get("case"), dict) else None
        case_id = raw_id if isinstance(raw_id, str) else None
        try:
            try:
                submitted = SubmitCase.model_validate(item)
            except ValidationError as exc:
                error, fields = _field_errors(exc)
                raise ApiError(422, error, fields) from None
            out, created = _hand_in(context, kind, submitted, token)
            results.append(ItemResult(index=index, status=201 if created else 200, case_id=out.case_id, case=out))
        except ApiError as exc:
            results.append(
                ItemResult(index=index, status=exc.status, case_id=case_id, error=exc.error, fields=exc.fields)
            )
    counts = [r.status for r in results]
    return BatchOut(
        results=results,
        stored=counts.count(201),
        unchanged=counts.count(200),
        refused=len(counts) - counts.count(201) - counts.count(200),
    )


def _withdraw(context: ApiContext, kind: QueueKind, case_id: str, withdrawal: WithdrawCase, token: str) -> CaseOut:
    stored = context.cases.get(kind.name, case_id)
    if stored is None:
        if context.in_file(kind, case_id):
            raise ApiError(
                409,
                f"{case_id} is a row of the {kind.nouns[0]} queue file: only a handed-in case is withdrawn",
                ["case_id"],
            )
        raise ApiError(404, f"no {kind.nouns[0]} {case_id!r} was handed in", ["case_id"])
    if stored.withdrawal is None:
        now = case_out(context, kind, case_id, stored, stored.fields)
        if now.status != "open":
            raise ApiError(
                409, f"{case_id} is {now.status}: a decision is recorded on it, so it is not withdrawn", ["case_id"]
            )
        stored = context.cases.withdraw(kind.name, case_id, f"{withdrawal.by} (api:{token})", withdrawal.why)
    return case_out(context, kind, case_id, stored, stored.fields)


def _submit(context: ApiContext, kind: QueueKind, case_id: str, fields: dict, agent: AgentPart | None, token: str):
    if agent and agent.recommendation and agent.recommendation not in kind.outcomes:
        raise ApiError(
            422,
            f"agent.recommendation: {agent.recommendation!r} is not one of {', '.join(kind.outcomes)}",
            ["agent.recommendation"],
        )
    if context.in_file(kind, case_id):
        raise ApiError(409, f"{case_id} is a row of the {kind.nouns[0]} queue file already", ["case.id"])
    try:
        stored, created = context.cases.submit(kind.name, case_id, fields, agent, f"api:{token}")
    except CaseConflict as exc:
        raise ApiError(409, str(exc), [f"case.{f}" if not f.startswith("agent") else f for f in exc.fields]) from None
    if created or context.runs.latest_run(kind.name, case_id, context.bank(kind)) is None:  # a retry mends a lost write
        record_submitted_run(context.runs, context.bank(kind), kind.key, stored)
    return stored, created


def _read(context: ApiContext, kind: QueueKind, case_id: str) -> CaseOut:
    stored = context.cases.get(kind.name, case_id)
    if stored is not None:
        return case_out(context, kind, case_id, stored, stored.fields)
    in_file = next((case for case in context.queue(kind) if case.id == case_id), None)
    if in_file is None:
        raise ApiError(404, f"no {kind.nouns[0]} {case_id!r} in the queue", ["case_id"])
    return case_out(context, kind, case_id, None, json.loads(in_file.model_dump_json()))


def _listed(
    context: ApiContext, kind: QueueKind, status: str | None, after: int, limit: int, decided_since: int | None
) -> CasePage:
    if status is not None and status not in API_STATUSES:
        raise ApiError(422, f"status: {status!r} is not one of {', '.join(API_STATUSES)}", ["status"])
    return _page(context, kind, status, after, limit, decided_since)


def _withdrawn(context: ApiContext, kind: QueueKind, case_id: str, by: str, why: str, token: str) -> CaseOut:
    try:
        withdrawal = WithdrawCase(by=by, why=why)
    except ValidationError as exc:
        error, fields = _field_errors(exc)
        raise ApiError(422, error, fields) from None
    return _withdraw(context, kind, case_id, withdrawal, token)


def _handed_in(
    context: ApiContext, kind: QueueKind, case: dict[str, Any], agent: AgentPart | None, token: str
) -> CaseOut:
    return _hand_in(context, kind, SubmitCase(case=case, agent=agent), token)[0]


def _page(
    context: ApiContext, kind: QueueKind, status: str | None, after: int, limit: int, decided_since: int | None
) -> CasePage:
    cursor = None
    if decided_since is not None:
        cursor, changed = context.outbox.standing.changed_since(context.bank(kind), kind.name, decided_since)
        wanted = set(changed)
    states = queue_states(context, kind)
    out: list[CaseOut] = []
    last = after
    while len(out) < limit:
        batch = context.cases.page(kind.name, after=last, limit=MAX_PAGE)
        if not batch:
            return CasePage(cases=out, next_after=None, changes_cursor=cursor)
        for stored in batch:
            last = stored.seq
            if decided_since is not None and stored.case_id not in wanted:
                continue
            case = case_out(context, kind, stored.case_id, stored, stored.fields, states)
            if status is None or case.status == status:
                out.append(case)
                if len(out) == limit:
                    break
    return CasePage(cases=out, next_after=last, changes_cursor=cursor)
