"""docs/sign-in.md's five minutes: `scripts/try-sign-in` (python -m tests.oidc_provider) serves the tests' OpenID
provider with the documented users file and prints secrets.toml sections that point the dashboard at it."""

import json
import os
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request

from dashboard.cli.app_server import REPO
from dashboard.processes import free_port


def test_the_documented_command_serves_the_provider_and_prints_the_sections_to_paste():
    port, app_port = free_port(), free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.oidc_provider", "--port", str(port), "--app-port", str(app_port)],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        lines = []
        deadline = time.monotonic() + 60
        while not any(line.startswith("viewer = ") for line in lines) and time.monotonic() < deadline:
            lines.append(proc.stdout.readline())
        printed = "".join(lines)
        users = json.loads((REPO / "examples" / "sign-in" / "users.json").read_text())
        assert all(f"{u['login']} / {u['password']}" in printed for u in users)  # the users file, as documented
        secrets = tomllib.loads(printed[printed.index("[auth]") :])
        assert secrets["auth"]["redirect_uri"] == f"http://127.0.0.1:{app_port}/oauth2callback"
        assert secrets["roles"]["lead"] == ["group:ap-leads"]
        with urllib.request.urlopen(secrets["auth"]["server_metadata_url"], timeout=10) as answer:
            assert json.load(answer)["issuer"] == f"http://127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)  # stops the provider's node process with it
        assert proc.wait(timeout=20) == 0
    time.sleep(0.5)
    try:
        urllib.request.urlopen(f"http://127.0.0.1:{port}/.well-known/openid-configuration", timeout=2)
        raise AssertionError("the provider outlived the command")
    except OSError:
        pass
