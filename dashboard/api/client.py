"""A small typed client for the Recall Review API (docs/api.md), for an agent that hands a case to human review and
waits for the decision. It imports httpx, pydantic and the API's models only (not the dashboard's server side):

    review = ReviewClient("http://127.0.0.1:8501", token)
    review.submit_case("finance", case, AgentPart(name="ap-agent", recommendation="approve", confidence=0.7))
    decided = review.wait_for_decision("finance", "E-9001", timeout_s=3600)
    if decided.final: ...  # decided.decision.outcome
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

import httpx
from pydantic import BaseModel

from dashboard.api.models import CaseOut
from dashboard.review.agent_part import AgentPart, AgentRecall

__all__ = ["AgentPart", "AgentRecall", "CaseOut", "Changes", "ReviewApiError", "ReviewClient"]
LONG_POLL_S = 30.0  # one request's wait; wait_for_decision asks again until its own timeout


class Changes(BaseModel):
    """What `decided_since` found: the cases, and the cursor to pass next time."""

    cases: list[CaseOut]
    changes_cursor: int


class ReviewApiError(RuntimeError):
    """A refusal from the API: its status, its words, and the fields it names."""

    def __init__(self, status: int, error: str, fields: list[str]):
        self.status, self.error, self.fields = status, error, fields
        super().__init__(f"{status}: {error}")


class ReviewClient:
    def __init__(self, base_url: str, token: str, *, timeout_s: float = 10.0, transport: httpx.BaseTransport | None = None):
        self._http = httpx.Client(base_url=base_url.rstrip("/") + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                                  timeout=timeout_s, transport=transport)

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
        except httpx.TransportError as exc:  # no answer: status 0, said like any other refusal
            raise ReviewApiError(0, f"{self._http.base_url} did not answer ({type(exc).__name__}: {exc})", []) from None
        if not response.headers.get("content-type", "").startswith("application/json"):
            # Streamlit answers an unknown path with its page: the base URL is not a Recall Review app
            raise ReviewApiError(response.status_code, f"{response.url} did not answer as the Recall Review API", [])
        body = response.json()
        if response.status_code >= 400:
            raise ReviewApiError(response.status_code, body.get("error", response.text), body.get("fields", []))
        return body

    def submit_case(self, kind: str, case: Mapping[str, Any], agent: AgentPart | None = None) -> CaseOut:
        """Hand a case in (idempotent: the same case again answers with it; other values for its id: 409)."""
        body = {"case": dict(case), "agent": agent.model_dump(mode="json", exclude_none=True) if agent else None}
        return CaseOut.model_validate(self._call("POST", f"/cases/{kind}", json=body))

    def case(self, kind: str, case_id: str, wait_s: float = 0) -> CaseOut:
        return CaseOut.model_validate(self._call("GET", f"/cases/{kind}/{case_id}", params={"wait": wait_s},
                                                 timeout=wait_s + self._http.timeout.read if wait_s else None))

    def wait_for_decision(self, kind: str, case_id: str, *, timeout_s: float = 3600, in_memory: bool = False) -> CaseOut:
        """The case once a person's decision on it stands (and, with `in_memory`, is retained in Hindsight so the
        next recall finds it); or as it is when `timeout_s` is up (`final` False)."""
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            out = self.case(kind, case_id, wait_s=max(0.0, min(LONG_POLL_S, left)))
            if (out.in_memory if in_memory else out.final) or left <= 0:
                return out
            if out.final:  # decided, not yet retained: the delivery worker sends it within seconds
                time.sleep(min(0.5, max(left, 0)))

    def list_cases(self, kind: str, *, status: str | None = None, decided_since: int | None = None,
                   page_size: int = 100) -> Iterator[CaseOut]:
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
            page = self._call("GET", f"/cases/{kind}", params={"after": after, "limit": page_size, "decided_since": cursor})
            cases += [CaseOut.model_validate(c) for c in page["cases"]]
            # the first page's: a decision landing while later pages are read is reported again next time, never lost
            newest = page["changes_cursor"] if newest is None else newest
            if page["next_after"] is None:
                return Changes(cases=cases, changes_cursor=newest)
            after = page["next_after"]
