"""Every decision reaches the kind's webhook, however and whenever it was made: `decide` before the app runs and while
it runs with no page ever opened (the app's delivery worker starts with its lifespan, and the webhooks' position is
held by the command before it records), each received signed by the real app on the real Hindsight."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from dashboard.cli import main
from dashboard.cli.app_server import serve_app
from dashboard.delivery.webhook_signature import SIGNATURE_HEADER, TIMESTAMP_HEADER, verify
from dashboard.processes import free_port
from tests.review.test_webhooks import Receiver
from tests.warm_app import start_warmed

SECRET = "a-webhook-secret-of-the-tests"
DEADLINE_S = 120  # a loaded machine; never a timed assert


@pytest.fixture
def receiver():
    running = Receiver(free_port()).start()
    yield running
    running.stop()


def _received(receiver: Receiver, case_id: str) -> dict:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        for got in receiver.requests:
            event = json.loads(got.body)
            if event["case_id"] == case_id:
                assert verify(
                    SECRET, got.headers[TIMESTAMP_HEADER], got.body, got.headers[SIGNATURE_HEADER], now=got.at
                )
                return event
        time.sleep(0.2)
    raise AssertionError(f"no webhook event for {case_id} within {DEADLINE_S} s: {[r.body for r in receiver.requests]}")


def test_decisions_made_with_the_cli_before_any_page_is_opened_are_sent(
    hindsight, demo_banks, receiver, monkeypatch, tmp_path: Path, capsys
):
    env = {
        **{k: v for k, v in os.environ.items() if k != "HINDSIGHT_API_URL"},
        **hindsight.env(finance=demo_banks.finance, support=demo_banks.support),
        "RECALL_REVIEW_QUEUES": json.dumps(
            {"finance": {"webhook_url": receiver.url, "webhook_secret": SECRET, "webhook_allow_private": True}}
        ),
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
    }
    monkeypatch.delenv("HINDSIGHT_API_URL", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)

    # Before the app runs: recorded (and retained inline), no worker anywhere yet.
    assert (
        main(
            ["decide", "--case", "E-1001", "--outcome", "escalate", "--reason", "NEEDS_APPROVER", "--reviewer", "Dana"]
        )
        == 0
    )
    capsys.readouterr()
    assert receiver.requests == []
    with serve_app(env, tmp_path, start=start_warmed):  # no page is ever opened
        before = _received(receiver, "E-1001")
        assert (before["kind"], before["decision"]["outcome"], before["decision"]["reviewer"]) == (
            "finance",
            "escalate",
            "Dana",
        )
        # While it runs, still with no page opened.
        assert (
            main(
                [
                    "decide",
                    "--case",
                    "E-1002",
                    "--outcome",
                    "escalate",
                    "--reason",
                    "NEEDS_APPROVER",
                    "--reviewer",
                    "Lee",
                ]
            )
            == 0
        )
        capsys.readouterr()
        during = _received(receiver, "E-1002")
        assert during["decision"]["reviewer"] == "Lee"
    keys = [r.headers["X-Recall-Review-Event-Id"] for r in receiver.requests]
    assert sorted(set(keys)) == sorted(keys) and len(keys) == 2  # each once
