"""The warmed launcher imports what the pages build on before Streamlit serves, and never a page (a page
draws itself when imported)."""

import json
import subprocess
import sys

from dashboard.cli.app_server import REPO

PROBE = """
import json, sys
from dashboard.app.serve import import_app_modules
names = import_app_modules()
print(json.dumps({"imported": names, "loaded": sorted(sys.modules)}))
"""


def test_the_launcher_imports_the_app_modules_and_no_page():
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=REPO, capture_output=True, text=True, timeout=300, check=True)
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"dashboard.app.resources", "dashboard.app.finance_recalls", "components.evidence", "components.trace_view"} <= set(report["imported"])
    assert {"pandas", "hindsight_client", "sqlalchemy", "plotly"} <= set(report["loaded"])
    assert not [name for name in report["loaded"] if name.startswith("dashboard.app.views.") or name == "dashboard.app.main"]
