"""Times a page as AppTest runs it, in a process of its own: `python -m dashboard.app.page_timing PAGE
[--case ID] [--repeat N] [--audit-wait S]` prints {"cold_ms": ..., "warm_ms": [...]} as JSON; with `--audit-wait`, also
how far this process read the banks' audit logs (`dashboard/app/audit.py`: the reader, off the page runs): it waits up
to S seconds for the read to end, then times one more run ("after_ms") and says what the read fetched ("audit").

The bench starts it with the environment that points the app at its bank and queue file, so the
bench's own process keeps its environment and its gateway untouched.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().with_name("main.py")


def _ms(run) -> float:
    start = time.perf_counter()
    run()
    return (time.perf_counter() - start) * 1000.0


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m dashboard.app.page_timing")
    parser.add_argument("page", help="page file relative to dashboard/app, e.g. views/overview.py")
    parser.add_argument("--case", help="deep-linked case id")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--audit-wait", type=float, default=None, help="seconds to wait for the audit log's read, then report it"
    )
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
    timing = {"cold_ms": cold, "warm_ms": warm}
    if args.audit_wait is not None:
        timing.update(_audit_read(at, args.audit_wait))
    print(json.dumps(timing))
    return 0


def _audit_read(at: AppTest, wait_s: float) -> dict:
    """Wait up to `wait_s` for this process's audit-log read to end; then one more run timed, and what was read."""
    from dashboard.app import audit, resources

    reader = audit.reader()
    started = time.perf_counter()
    while reader.busy() and time.perf_counter() - started < wait_s:
        time.sleep(0.5)
    waited = time.perf_counter() - started
    after = _ms(at.run)
    reader.stop()  # its thread is a daemon: this process ends without waiting for the rest of a catch-up
    states = resources.agent_runs().sync_states(list(resources.settings().banks))
    return {
        "after_ms": after,
        "audit_waited_s": waited,
        "audit_busy": reader.busy(),
        "audit": {
            bank: {
                "entries": s.entries,
                "log_entries": s.log_entries,
                "caught_up": s.caught_up_at is not None,
                **(
                    {"fetched": r.fetched, "listed": r.listed, "windows": r.windows}
                    if (r := reader.reports.get(bank))
                    else {}
                ),
            }
            for bank, s in states.items()
        },
    }


if __name__ == "__main__":
    raise SystemExit(main())
