"""The warmed launcher imports what the pages build on and reads the queue files (and, once it serves one
store, that store's decision states) before Streamlit serves, and never a page (a page draws itself when imported), and freezes them out of the collection Streamlit makes after every run; the browser
tests' warmed fork of it runs in a session of its own."""

import json
import os
import subprocess
import sys
import urllib.request

import psutil

from dashboard.cli.app_server import REPO, serve_app
from dashboard.processes import answers
from tests.helpers import start_on_every_interface
from tests.warm_app import start_warmed

KIND_PAGES = {
    "dashboard.finance.pages.exceptions",
    "dashboard.support.pages.tickets",
    "dashboard.support.pages.migration",
}

PROBE = """
import gc, json, sys
import pandas
from dashboard.app.serve import warm
from dashboard.finance.models import ExceptionCase
from dashboard.queue_files import load_rows, shared_rows
from dashboard.settings import load_settings
from dashboard.finance.pages.shown_queue import shown_queue
names = warm()
queue = load_rows(load_settings().exceptions_file, ExceptionCase)  # as a page reads it
shown, ids = shown_queue(shared_rows(load_settings().exceptions_file, ExceptionCase), {}, {}, {})  # as the page first shows it
tracked = {id(o) for o in gc.get_objects()}  # a list made now would be here
print(json.dumps({"imported": names, "loaded": sorted(sys.modules), "frozen": gc.get_freeze_count(),
                  "pandas_scanned": id(pandas.DataFrame) in tracked, "still_scanned": len(tracked),
                  "queue_scanned": any(id(case) in tracked for case in queue), "shown_scanned": id(shown) in tracked,
                  "shown": len(ids) == len(queue)}))
"""


def test_the_launcher_imports_the_app_modules_and_no_page():
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300, check=True
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {
        "dashboard.app.resources",
        "dashboard.finance.pages.recalls",
        "dashboard.finance.pages.evidence",
        "dashboard.support.pages.admission_view",
        "components.trace_view",
    } <= set(report["imported"])
    assert {"pandas", "hindsight_client", "sqlalchemy", "plotly"} <= set(report["loaded"])
    assert not [
        name
        for name in report["loaded"]
        if name.startswith("dashboard.app.views.") or name in {"dashboard.app.main", *KIND_PAGES}
    ]
    # what was imported is no longer scanned by each full collection: only what is made afterwards
    assert (
        report["frozen"] > 100_000 and not report["pandas_scanned"] and report["still_scanned"] < report["frozen"] / 100
    )
    # the queue was read before the freeze: a page's read finds its models there, never scanned
    assert report["queue_scanned"] is False
    # and the queue as its page first shows it (sorted, with its ids) was worked out then, not by the first reviewer
    assert report["shown"] and report["shown_scanned"] is False


STORE_PROBE = """
import json
import sqlalchemy as sa
from streamlit.testing.v1 import AppTest
from dashboard.app import resources, serve

serve.read_review_store()
PAGE = "; ".join(["import streamlit as st", "from dashboard.app import resources", "st.text(str(id(resources.outbox())))"])

outbox, selects = resources.outbox(), []
sa.event.listen(outbox.engine, "before_cursor_execute",
                lambda conn, cursor, statement, *args: selects.append(statement) if statement.lstrip().startswith("SELECT") else None)
finance, tickets = outbox.decision_states("fin", "exception"), outbox.decision_states("sup", "ticket")
print(json.dumps({"finance": {c: s.outcome for c, s in finance.items()}, "tickets": dict(tickets), "selects": len(selects),
                  "same_in_a_session": AppTest.from_string(PAGE).run().text[0].value == str(id(outbox))}))
"""


def test_the_launcher_reads_each_queues_decision_states_into_the_store_every_session_uses(tmp_path):
    from datetime import UTC, datetime

    from dashboard.delivery.outbox import Outbox
    from dashboard.hindsight.wire import MemoryRecord
    from dashboard.store.db import make_engine
    from dashboard.store.decision import ReviewerDecision

    store = Outbox(make_engine(None, tmp_path))
    store.record(
        "fin",
        ReviewerDecision(
            case_id="E-1",
            case_kind="exception",
            reviewer="Dana",
            authenticated=False,
            outcome="reject",
            overridden=True,
            decided_at=datetime(2026, 12, 4, tzinfo=UTC),
        ),
        MemoryRecord(document_id="decision-E-1", content="reject", tags=[]),
    )
    env = {
        **os.environ,
        "RECALL_REVIEW_DATA_DIR": str(tmp_path),
        "RECALL_REVIEW_FINANCE_BANK": "fin",
        "RECALL_REVIEW_SUPPORT_BANK": "sup",
    }
    env.pop("RECALL_REVIEW_DATABASE_URL", None)
    done = subprocess.run(
        [sys.executable, "-c", STORE_PROBE], cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # a page's first read finds both queues' states already read: one version check each, no query of the log
    assert report == {"finance": {"E-1": "reject"}, "tickets": {}, "selects": 2, "same_in_a_session": True}


def test_the_launcher_names_a_bad_setting_and_exits_2_before_it_reads_anything():
    env = {**os.environ, "RECALL_REVIEW_SLA_DAYS": "0"}
    done = subprocess.run(
        [sys.executable, "-m", "dashboard.app.serve"], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )
    assert (
        done.returncode == 2
        and done.stderr.strip() == "error: settings: RECALL_REVIEW_SLA_DAYS: Input should be greater than or equal to 1"
    )


def test_a_warmed_fork_serves_in_a_session_of_its_own_and_is_stopped_with_it(tmp_path):
    # (that each fork reads its own environment, banks and review store, the browser tests show: each has its own)
    with serve_app(dict(os.environ), tmp_path, start=start_warmed) as url:
        assert answers(url + "/_stcore/health")
        port = int(url.rsplit(":", 1)[1])
        app = psutil.Process(
            next(
                c.pid for c in psutil.net_connections("tcp") if c.laddr.port == port and c.status == psutil.CONN_LISTEN
            )
        )
        assert os.getpgid(app.pid) == app.pid  # a session of its own: its stop is one signal to its group
    assert not app.is_running()
    assert f"URL: http://127.0.0.1:{port}" in (tmp_path / "streamlit.log").read_text()  # its output went to its own log


def test_the_conventional_start_is_warmed_before_it_answers_and_serves_the_api(tmp_path):
    from dashboard.cli.app_server import start_fresh

    env = {
        **os.environ,
        "HINDSIGHT_API_URL": "http://127.0.0.1:9",
    }  # nothing to recall here: the start is what is looked at
    with serve_app(env, tmp_path, start=start_fresh) as url:  # `streamlit run dashboard/app/streamlit_app.py`
        log = (tmp_path / "streamlit.log").read_text()
        assert (
            "dashboard: warmed in" in log
        )  # its lifespan ran before the first answer (the health check waited for it)
        with urllib.request.urlopen(url + "/api/v1/openapi.json", timeout=10) as answer:
            assert (
                answer.headers["content-type"] == "application/json" and "/cases/{kind}" in json.load(answer)["paths"]
            )


def test_the_conventional_start_names_a_bad_setting_and_exits_2():
    env = {**os.environ, "RECALL_REVIEW_SLA_DAYS": "0"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "dashboard/app/streamlit_app.py",
            "--server.headless",
            "true",
            "--server.port",
            "0",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "error: settings: RECALL_REVIEW_SLA_DAYS: Input should be greater than or equal to 1" in done.stderr
    assert "Traceback" not in done.stderr


def test_served_beyond_this_machine_without_sign_in_it_refuses_to_start_naming_the_setting():
    env = {**os.environ, "HINDSIGHT_API_URL": "http://127.0.0.1:9"}  # no [auth] section in the repo's secrets
    done = start_on_every_interface(env)
    assert done.returncode == 2
    assert "would serve 0.0.0.0 without sign-in" in done.stderr and "RECALL_REVIEW_ALLOW_ANONYMOUS=true" in done.stderr
    assert "Traceback" not in done.stderr


def test_with_the_allowance_it_serves_beyond_this_machine(tmp_path):
    from dashboard.cli.app_server import start_fresh

    env = {
        **os.environ,
        "HINDSIGHT_API_URL": "http://127.0.0.1:9",
        "RECALL_REVIEW_ALLOW_ANONYMOUS": "true",
        "RECALL_REVIEW_ALLOWED_HOSTS": "127.0.0.1",
    }  # the name it is reached by here (test_own_hosts.py)
    with serve_app(
        env, tmp_path, start=lambda options, env, log: start_fresh([*options, "--server.address", "0.0.0.0"], env, log)
    ) as url:  # the later option wins
        assert answers(url + "/_stcore/health")
    assert "dashboard: warmed in" in (tmp_path / "streamlit.log").read_text()
