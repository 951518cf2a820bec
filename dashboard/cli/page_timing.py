"""Times a page as AppTest runs it, in a process of its own: `python -m dashboard.cli.page_timing PAGE
[--case ID] [--repeat N]` prints {"cold_ms": ..., "warm_ms": [...]} as JSON.

The bench starts it with the environment that points the app at its bank and queue file, so the
bench's own process keeps its environment and its gateway untouched.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[1] / "app" / "main.py"


def _ms(run) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboard.cli.page_timing")
    parser.add_argument("page", help="page file relative to dashboard/app, e.g. views/exceptions.py")
    parser.add_argument("--case", help="deep-linked case id")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    at = AppTest.from_file(str(APP), default_timeout=600).run()
    at.switch_page(args.page)
    if args.case:
        at.query_params["case"] = args.case
    cold = _ms(at.run)
    if at.exception:
        print(json.dumps({"error": str(at.exception[0].message)}))
        return 1
    warm = [_ms(at.run) for _ in range(max(1, args.repeat))]
    print(json.dumps({"cold_ms": cold, "warm_ms": warm}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
