"""The warmed launcher imports what the pages build on and reads the queue files before Streamlit serves, and
never a page (a page draws itself when imported), and freezes them out of the collection Streamlit makes after every run; the browser
tests' warmed fork of it runs in a session of its own."""

import json
import os
import subprocess
import sys

import psutil

from dashboard.cli.app_server import REPO, serve_app
from dashboard.processes import answers
from tests.warm_app import start_warmed

PROBE = """
import gc, json, sys
import pandas
from dashboard.app.serve import warm
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import load_rows
from dashboard.settings import load_settings
names = warm()
queue = load_rows(load_settings().exceptions_file, ExceptionCase)  # as a page reads it
tracked = {id(o) for o in gc.get_objects()}
print(json.dumps({"imported": names, "loaded": sorted(sys.modules), "frozen": gc.get_freeze_count(),
                  "pandas_scanned": id(pandas.DataFrame) in tracked, "still_scanned": len(tracked),
                  "queue_scanned": any(id(case) in tracked for case in queue)}))
"""


def test_the_launcher_imports_the_app_modules_and_no_page():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"dashboard.app.resources", "dashboard.app.finance_recalls", "components.evidence", "components.trace_view"} <= set(report["imported"])
    assert {"pandas", "hindsight_client", "sqlalchemy", "plotly"} <= set(report["loaded"])
    assert not [name for name in report["loaded"] if name.startswith("dashboard.app.views.") or name == "dashboard.app.main"]
    # what was imported is no longer scanned by each full collection: only what is made afterwards
    assert report["frozen"] > 100_000 and not report["pandas_scanned"] and report["still_scanned"] < report["frozen"] / 100
    # the queue was read before the freeze: a page's read finds its models there, never scanned
    assert report["queue_scanned"] is False


def test_a_warmed_fork_serves_in_a_session_of_its_own_and_is_stopped_with_it(tmp_path):
    # (that each fork reads its own environment, banks and review store, the browser tests show: each has its own)
    with serve_app(dict(os.environ), tmp_path, start=start_warmed) as url:
        assert answers(url + "/_stcore/health")
        port = int(url.rsplit(":", 1)[1])
        app = psutil.Process(next(c.pid for c in psutil.net_connections("tcp") if c.laddr.port == port and c.status == psutil.CONN_LISTEN))
        assert os.getpgid(app.pid) == app.pid  # a session of its own: its stop is one signal to its group
    assert not app.is_running()
    assert f"started on 127.0.0.1:{port}" in (tmp_path / "streamlit.log").read_text()  # its output went to its own log
