"""`python -m examples.ap_agent --url http://127.0.0.1:8501 --token rr_... --case-file examples/ap_agent/cases.json`

Runs the AP agent on each case of the file, one after another (so a case recalls the decisions on the ones before it):
recall, propose, hand in, wait for a person's decision, act on it. Exit 0 when every case was decided, 3 when one was
still waiting at --timeout, 2 on a bad argument or file, 1 when the API or Hindsight refused.
"""

from __future__ import annotations

import argparse
import asyncio
import csv
import json
import os
import sys
from pathlib import Path

import aiohttp
from hindsight_client import Hindsight
from hindsight_client_api.exceptions import ApiException
from hindsight_langgraph import HindsightError

from dashboard.api.client import ReviewApiError, ReviewClient
from examples.ap_agent.graph import Agent

EMBEDDED_HINDSIGHT = "http://127.0.0.1:8888"  # the dashboard's embedded server (RECALL_REVIEW_API_PORT's default)


def load_cases(path: Path) -> list[dict]:
    """The cases of a CSV file (the finance queue file's columns) or a JSON file (one case or a list of them)."""
    if path.suffix.lower() == ".csv":
        with path.open(newline="", encoding="utf-8") as f:
            return [{k: v for k, v in row.items() if v not in (None, "")} for row in csv.DictReader(f)]
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, list) else [data]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m examples.ap_agent", description=__doc__.split("\n\n")[1])
    p.add_argument("--url", default="http://127.0.0.1:8501", help="the Recall Review app (its API is at /api/v1)")
    p.add_argument(
        "--token",
        default=os.environ.get("RECALL_REVIEW_API_TOKEN"),
        help="an API token with submit,read on finance (default: $RECALL_REVIEW_API_TOKEN)",
    )
    p.add_argument(
        "--hindsight-url",
        default=os.environ.get("HINDSIGHT_API_URL") or EMBEDDED_HINDSIGHT,
        help=f"the Hindsight server (default: $HINDSIGHT_API_URL, else the embedded {EMBEDDED_HINDSIGHT})",
    )
    p.add_argument(
        "--bank",
        default=os.environ.get("RECALL_REVIEW_FINANCE_BANK", "recall-review-finance"),
        help="the finance bank the dashboard retains decisions into",
    )
    p.add_argument("--case-file", type=Path, required=True, help="cases to run, CSV or JSON (see cases.json)")
    p.add_argument("--timeout", type=float, default=3600, help="seconds to wait for each decision")
    args = p.parse_args(argv)
    if not args.token:
        p.error(
            "--token: required (or set RECALL_REVIEW_API_TOKEN); make one with "
            "`python -m dashboard token create --name ap-agent --kinds finance --scopes submit,read`"
        )
    if not args.case_file.is_file():
        p.error(f"--case-file: {args.case_file} is not a file")
    return args


def say(text: str) -> None:
    print(text, flush=True)


async def run(args: argparse.Namespace, cases: list[dict]) -> int:
    # One event loop for the whole run: the Hindsight client's session belongs to it (closed in it, at the end).
    hindsight = Hindsight(base_url=args.hindsight_url, api_key=os.environ.get("HINDSIGHT_API_KEY"), timeout=30.0)
    review = ReviewClient(args.url, args.token)
    agent = Agent(hindsight, review, args.bank)
    waiting = 0
    try:
        for case in cases:
            case_id = case["id"]
            if (done := await agent.already_decided(case_id)) is not None:
                say(f"{case_id}: decided already ({done.decision.outcome} by {done.decision.reviewer}); not run again")
                continue
            state = await agent.start(case)
            p = state["proposal"]
            say(
                f"{case_id}: recalled {len(state.get('recalled', []))} precedent(s); proposes {p['recommendation']} "
                f"(confidence {p['confidence']:.2f}): {p['rationale']}"
            )
            say(
                f"{case_id}: handed in ({state['submitted']['status']}); paused at {', '.join(await agent.paused_at(case_id))} "
                f"until a person decides: {args.url}/exceptions?case={case_id}"
            )
            final = await agent.wait_and_resume(case_id, args.timeout)
            if final is None:
                waiting += 1
                say(f"{case_id}: no decision within {args.timeout:g} s; left waiting")
                continue
            d = final["decision"]
            agreed = "as proposed" if d["outcome"] == p["recommendation"] else f"overriding {p['recommendation']}"
            say(
                f"{case_id}: {d['reviewer']} decided {d['outcome']} ({agreed}"
                f"{', ' + d['reason_code'] if d.get('reason_code') else ''}); the agent will {final['action']}"
            )
    finally:
        review.close()
        await hindsight.aclose()
    return 3 if waiting else 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        cases = load_cases(args.case_file)
    except (OSError, ValueError) as exc:
        print(f"--case-file: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(run(args, cases))
    except ReviewApiError as exc:  # a refusal, or (status 0) no answer
        print(f"the Recall Review API at {args.url}: {exc}", file=sys.stderr)
        return 1
    except (HindsightError, ApiException, aiohttp.ClientError) as exc:
        print(f"Hindsight at {args.hindsight_url} refused or did not answer: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
