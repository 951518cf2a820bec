"""The warmed launcher imports what the pages build on before Streamlit serves, and never a page (a page
draws itself when imported), and freezes them out of the collection Streamlit makes after every run."""

import json
import subprocess
import sys

from dashboard.cli.app_server import REPO

PROBE = """
import gc, json, sys
import pandas
from dashboard.app.serve import warm
names = warm()
tracked = {id(o) for o in gc.get_objects()}
print(json.dumps({"imported": names, "loaded": sorted(sys.modules), "frozen": gc.get_freeze_count(),
                  "pandas_scanned": id(pandas.DataFrame) in tracked, "still_scanned": len(tracked)}))
"""


def test_the_launcher_imports_the_app_modules_and_no_page():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"dashboard.app.resources", "dashboard.app.finance_recalls", "components.evidence", "components.trace_view"} <= set(report["imported"])
    assert {"pandas", "hindsight_client", "sqlalchemy", "plotly"} <= set(report["loaded"])
    assert not [name for name in report["loaded"] if name.startswith("dashboard.app.views.") or name == "dashboard.app.main"]
    # what was imported is no longer scanned by each full collection: only what is made afterwards
    assert report["frozen"] > 100_000 and not report["pandas_scanned"] and report["still_scanned"] < report["frozen"] / 100
