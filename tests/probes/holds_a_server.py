"""Not part of the suite (no test_ prefix): run by tests/basics/test_processes.py as a pytest session of its own that
starts a real Hindsight, says where it is, and waits to be stopped by a signal."""

import json
import os
import time


def test_hold_the_server_until_stopped(hindsight):
    status = hindsight.server.status()
    out = os.environ["RECALL_REVIEW_PROBE_FILE"]
    with open(out + ".tmp", "w") as fh:
        json.dump({"api_pid": status.api_pid, "pg_pid": status.pg_pid}, fh)
    os.replace(out + ".tmp", out)  # whole, or not there
    time.sleep(600)  # stopped by the caller's signal long before
