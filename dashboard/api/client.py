"""Small typed clients for the Recall Review API (docs/api.md), for an agent that hands a case to human review and
waits for the decision: `ReviewClient` (blocking) and `AsyncReviewClient` (asyncio), with the same methods. They import
httpx, pydantic and the API's models only (not the dashboard's server side):

    review = ReviewClient("http://127.0.0.1:8501", token)
    review.submit_case("finance", case, AgentPart(name="ap-agent", recommendation="approve", confidence=0.7))
    decided = review.wait_for_decision("finance", "E-9001", timeout_s=3600)
    if decided.final: ...  # decided.decision.outcome

    async with AsyncReviewClient("http://127.0.0.1:8501", token) as review:
        decided = await review.wait_for_decision("finance", "E-9001")
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from typing import Any

import httpx
from pydantic import BaseModel

from dashboard.api.models import BatchOut, CaseOut, ItemResult
from dashboard.store.agent_part import AgentPart, AgentRecall

__all__ = [
    "AgentPart",
    "AgentRecall",
    "AsyncReviewClient",
    "BatchOut",
    "CaseOut",
    "Changes",
    "ItemResult",
    "ReviewApiError",
    "ReviewClient",
]
LONG_POLL_S = 30.0  # one request's wait; wait_for_decision asks again until its own timeout
RETAIN_POLL_S = 0.5  # decided, not yet retained: the delivery worker sends it within seconds


class Changes(BaseModel):
    """What `decided_since` found: the cases, and the cursor to pass next time."""

    cases: list[CaseOut]
    changes_cursor: int


class ReviewApiError(RuntimeError):
    """A refusal from the API: its status, its words, and the fields it names."""

    def __init__(self, status: int, error: str, fields: list[str]):
        self.status, self.error, self.fields = status, error, fields
        super().__init__(f"{status}: {error}")


def _client_options(base_url: str, token: str, timeout_s: float) -> dict:
    return {
        "base_url": base_url.rstrip("/") + "/api/v1",
        "headers": {"Authorization": f"Bearer {token}"},
        "timeout": timeout_s,
    }


def _answer(http: httpx.Client | httpx.AsyncClient, response: httpx.Response) -> Any:
    if not response.headers.get("content-type", "").startswith("application/json"):
        # Streamlit answers an unknown path with its page: the base URL is not a Recall Review app
        raise ReviewApiError(response.status_code, f"{response.url} did not answer as the Recall Review API", [])
    body = response.json()
    if response.status_code >= 400:
        raise ReviewApiError(response.status_code, body.get("error", response.text), body.get("fields", []))
    return body


def _unanswered(http: httpx.Client | httpx.AsyncClient, exc: httpx.TransportError) -> ReviewApiError:
    """No answer: status 0, said like any other refusal."""
    return ReviewApiError(0, f"{http.base_url} did not answer ({type(exc).__name__}: {exc})", [])


def _case_body(case: Mapping[str, Any], agent: AgentPart | None) -> dict:
    return {"case": dict(case), "agent": agent.model_dump(mode="json", exclude_none=True) if agent else None}


def _batch_body(cases: Sequence[tuple[Mapping[str, Any], AgentPart | None]]) -> dict:
    return {"cases": [_case_body(case, agent) for case, agent in cases]}


def _done(out: CaseOut, in_memory: bool) -> bool:
    return out.in_memory if in_memory else out.final


class ReviewClient:
    def __init__(
        self, base_url: str, token: str, *, timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None
    ):
        self._http = httpx.Client(**_client_options(base_url, token, timeout_s), transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> ReviewClient:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def _call(self, method: str, path: str, *, timeout: float | None = None, **kwargs) -> Any:
        extra = {} if timeout is None else {"timeout": timeout}
        try:
            response = self._http.request(method, path, **kwargs, **extra)
        except httpx.TransportError as exc:
            raise _unanswered(self._http, exc) from None
        return _answer(self._http, response)

    def submit_case(self, kind: str, case: Mapping[str, Any], agent: AgentPart | None = None) -> CaseOut:
        """Hand a case in (idempotent: the same case again answers with it; other values for its id: 409)."""
        return CaseOut.model_validate(self._call("POST", f"/cases/{kind}", json=_case_body(case, agent)))

    def submit_cases(self, kind: str, cases: Sequence[tuple[Mapping[str, Any], AgentPart | None]]) -> BatchOut:
        """Hand in up to 100 (case, agent part) pairs in one request: each has its own result (201, 200, 409, 422),
        in order; idempotent per case, so the same batch may be sent again."""
        return BatchOut.model_validate(self._call("POST", f"/cases/{kind}/batch", json=_batch_body(cases)))

    def case(self, kind: str, case_id: str, wait_s: float = 0) -> CaseOut:
        return CaseOut.model_validate(
            self._call(
                "GET",
                f"/cases/{kind}/{case_id}",
                params={"wait": wait_s},
                timeout=wait_s + self._http.timeout.read if wait_s else None,
            )
        )

    def withdraw_case(self, kind: str, case_id: str, *, by: str, why: str) -> CaseOut:
        """Withdraw an open case this agent handed in (409 once a decision is recorded on it)."""
        return CaseOut.model_validate(self._call("DELETE", f"/cases/{kind}/{case_id}", json={"by": by, "why": why}))

    def wait_for_decision(
        self, kind: str, case_id: str, *, timeout_s: float = 3600, in_memory: bool = False
    ) -> CaseOut:
        """The case once a person's decision on it stands (and, with `in_memory`, is retained in Hindsight so the
        next recall finds it); or as it is when `timeout_s` is up (`final` False)."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            out = self.case(kind, case_id, wait_s=max(0.0, min(LONG_POLL_S, left)))
            if _done(out, in_memory) or left <= 0 or out.status == "withdrawn":
                return out
            if out.final:
                time.sleep(min(RETAIN_POLL_S, max(left, 0)))

    def list_cases(
        self, kind: str, *, status: str | None = None, decided_since: int | None = None, page_size: int = 100
    ) -> Iterator[CaseOut]:
        """Every handed-in case of a kind (by status, or decided since a `changes_cursor`), a page at a time."""
        after = 0
        while True:
            params = {"after": after, "limit": page_size, "status": status, "decided_since": decided_since}
            page = self._call("GET", f"/cases/{kind}", params={k: v for k, v in params.items() if v is not None})
            yield from (CaseOut.model_validate(c) for c in page["cases"])
            if page["next_after"] is None:
                return
            after = page["next_after"]

    def decided_since(self, kind: str, cursor: int = 0, *, page_size: int = 100) -> Changes:
        """The cases whose decision changed after `cursor` (0: every decided case), and the cursor to pass next time
        (`changes_cursor`): poll with it to learn only of newer decisions."""
        cases, after, newest = [], 0, None
        while True:
            page = self._call(
                "GET", f"/cases/{kind}", params={"after": after, "limit": page_size, "decided_since": cursor}
            )
            cases += [CaseOut.model_validate(c) for c in page["cases"]]
            # the first page's: a decision landing while later pages are read is reported again next time, never lost
            newest = page["changes_cursor"] if newest is None else newest
            if page["next_after"] is None:
                return Changes(cases=cases, changes_cursor=newest)
            after = page["next_after"]


class AsyncReviewClient:
    """ReviewClient's methods for asyncio (an agent framework's event loop): each awaits, `list_cases` is an async
    iterator."""

    def __init__(
        self, base_url: str, token: str, *, timeout_s: float = 10.0, transport: httpx.AsyncBaseTransport | None = None
    ):
        self._http = httpx.AsyncClient(**_client_options(base_url, token, timeout_s), transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncReviewClient:
        return self

    async def __aexit__(self, *_exc) -> None:
        await self.aclose()

    async def _call(self, method: str, path: str, *, timeout: float | None = None, **kwargs) -> Any:
        extra = {} if timeout is None else {"timeout": timeout}
        try:
            response = await self._http.request(method, path, **kwargs, **extra)
        except httpx.TransportError as exc:
            raise _unanswered(self._http, exc) from None
        return _answer(self._http, response)

    async def submit_case(self, kind: str, case: Mapping[str, Any], agent: AgentPart | None = None) -> CaseOut:
        return CaseOut.model_validate(await self._call("POST", f"/cases/{kind}", json=_case_body(case, agent)))

    async def submit_cases(self, kind: str, cases: Sequence[tuple[Mapping[str, Any], AgentPart | None]]) -> BatchOut:
        return BatchOut.model_validate(await self._call("POST", f"/cases/{kind}/batch", json=_batch_body(cases)))

    async def case(self, kind: str, case_id: str, wait_s: float = 0) -> CaseOut:
        return CaseOut.model_validate(
            await self._call(
                "GET",
                f"/cases/{kind}/{case_id}",
                params={"wait": wait_s},
                timeout=wait_s + self._http.timeout.read if wait_s else None,
            )
        )

    async def withdraw_case(self, kind: str, case_id: str, *, by: str, why: str) -> CaseOut:
        return CaseOut.model_validate(
            await self._call("DELETE", f"/cases/{kind}/{case_id}", json={"by": by, "why": why})
        )

    async def wait_for_decision(
        self, kind: str, case_id: str, *, timeout_s: float = 3600, in_memory: bool = False
    ) -> CaseOut:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            left = deadline - loop.time()
            out = await self.case(kind, case_id, wait_s=max(0.0, min(LONG_POLL_S, left)))
            if _done(out, in_memory) or left <= 0 or out.status == "withdrawn":
                return out
            if out.final:
                await asyncio.sleep(min(RETAIN_POLL_S, max(left, 0)))

    async def list_cases(
        self, kind: str, *, status: str | None = None, decided_since: int | None = None, page_size: int = 100
    ) -> AsyncIterator[CaseOut]:
        after = 0
        while True:
            params = {"after": after, "limit": page_size, "status": status, "decided_since": decided_since}
            page = await self._call("GET", f"/cases/{kind}", params={k: v for k, v in params.items() if v is not None})
            for c in page["cases"]:
                yield CaseOut.model_validate(c)
            if page["next_after"] is None:
                return
            after = page["next_after"]

    async def decided_since(self, kind: str, cursor: int = 0, *, page_size: int = 100) -> Changes:
        cases, after, newest = [], 0, None
        while True:
            page = await self._call(
                "GET", f"/cases/{kind}", params={"after": after, "limit": page_size, "decided_since": cursor}
            )
            cases += [CaseOut.model_validate(c) for c in page["cases"]]
            newest = page["changes_cursor"] if newest is None else newest
            if page["next_after"] is None:
                return Changes(cases=cases, changes_cursor=newest)
            after = page["next_after"]
