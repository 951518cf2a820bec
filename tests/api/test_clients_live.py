"""The API's clients against the real app (its own process, the real Hindsight): the async client does what the
blocking one does (hand in one case and a batch, read, list, withdraw, wait for the decision, read the changes cursor),
with a decision made by `decide` while it waits."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from dashboard.access.api_tokens import ApiTokens
from dashboard.api.client import AgentPart, AsyncReviewClient, ReviewApiError, ReviewClient
from dashboard.cli import main
from dashboard.cli.app_server import serve_app
from dashboard.store.db import make_engine
from tests.helpers import exception_case, run_coroutine
from tests.warm_app import start_warmed

AGENT = AgentPart(name="ap-agent", version="3.0", recommendation="approve", confidence=0.6, cited=["PREC-V02-PRI-01"])


def _case(case_id: str) -> dict:
    return exception_case(case_id, "V02").model_dump(mode="json")


def test_the_async_client_has_the_blocking_clients_methods_against_the_real_app(
    hindsight, demo_banks, monkeypatch, tmp_path: Path, capsys
):
    env = {
        **{k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"},
        **hindsight.env(finance=demo_banks.finance, support=demo_banks.support),
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
    }
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    engine = make_engine(None, tmp_path)
    token, _ = ApiTokens(engine).create("ap-agent", ["finance"], ["submit", "read"], "Lead Lee")
    engine.dispose()
    blocking = [name for name in vars(ReviewClient) if not name.startswith("_") and name not in ("close",)]
    assert all(callable(getattr(AsyncReviewClient, name)) for name in blocking), blocking

    with serve_app(env, tmp_path, start=start_warmed) as url:

        async def agent() -> dict:
            async with AsyncReviewClient(url, token, timeout_s=30) as review:
                one = await review.submit_case("finance", _case("E-9401"), AGENT)
                batch = await review.submit_cases(
                    "finance",
                    [
                        (_case("E-9402"), AGENT),
                        (_case("E-9403"), None),
                        ({**_case("E-9404"), "invoice_amount": "a lot"}, AGENT),
                    ],
                )
                listed = [c.case_id async for c in review.list_cases("finance", status="open")]
                withdrawn = await review.withdraw_case("finance", "E-9403", by="ap-agent", why="resolved by the vendor")
                try:
                    await review.withdraw_case("finance", "E-0000", by="ap-agent", why="no such case")
                    missing = None
                except ReviewApiError as exc:
                    missing = exc.status
                start = await review.decided_since("finance", 0)
                decide = threading.Thread(
                    target=lambda: main(["decide", "--case", "E-9401", "--outcome", "reject", "--reviewer", "Dana"])
                )
                decide.start()  # a person decides while the agent waits on the long poll
                decided = await review.wait_for_decision("finance", "E-9401", timeout_s=120, in_memory=True)
                decide.join(60)
                changes = await review.decided_since("finance", start.changes_cursor)
                return {
                    "one": one,
                    "batch": batch,
                    "listed": listed,
                    "withdrawn": withdrawn,
                    "missing": missing,
                    "start": start,
                    "decided": decided,
                    "changes": changes,
                }

        got = run_coroutine(agent())
        with ReviewClient(url, token) as review:  # the blocking client reads the same
            assert (
                review.decided_since("finance", got["start"].changes_cursor).changes_cursor
                == got["changes"].changes_cursor
            )
            assert review.case("finance", "E-9403").status == "withdrawn"
    capsys.readouterr()

    assert got["one"].status == "open" and got["one"].agent.name == "ap-agent"
    assert [(r.status, r.case_id) for r in got["batch"].results] == [(201, "E-9402"), (201, "E-9403"), (422, "E-9404")]
    assert got["batch"].results[2].fields == ["case.invoice_amount"]
    assert got["listed"] == ["E-9401", "E-9402", "E-9403"]
    assert got["withdrawn"].status == "withdrawn" and got["withdrawn"].withdrawal.why == "resolved by the vendor"
    assert got["missing"] == 404
    assert got["start"].cases == []
    decided = got["decided"]
    assert (
        decided.final
        and decided.in_memory
        and decided.decision.outcome == "reject"
        and decided.decision.reviewer == "Dana"
    )
    assert decided.decision.overridden and decided.decision.agent == "ap-agent"  # the agent said approve
    assert [c.case_id for c in got["changes"].cases] == ["E-9401"] and got["changes"].changes_cursor > got[
        "start"
    ].changes_cursor
    assert json.loads(decided.model_dump_json())["decision"]["agent_recommendation"] == "approve"
