"""A real OpenID Connect provider for the tests (panva's oidc-provider, tests/oidc/provider.mjs) on 127.0.0.1.

    client = client_for(app_port)
    with oidc_provider(tmp_path, users=[DANA], clients=[client]) as op:
        (app_dir / ".streamlit" / "secrets.toml").write_text(auth_secrets(op, client))
        ...
        op.set_users([{**DANA, "groups": []}])   # read again at the next sign-in

A user: {"login", "password", "sub", "name", "email", "groups": [...], optional "id_token_ttl": seconds}. The ID
token carries sub, name, email, email_verified and groups (scope "groups"); st.user reads it. The sign-in page has
`input[name=login]`, `input[name=password]` and a button "Sign in"; a wrong password stays on it with
"Invalid login or password." Needs `node` and tests/oidc/node_modules (scripts/setup installs them).

To try sign-in by hand (docs/sign-in.md), `scripts/try-sign-in` runs `main` below: this provider with the users of
examples/sign-in/users.json, printing the secrets.toml sections that point the dashboard at it.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dashboard.processes import free_port

OIDC_DIR = Path(__file__).resolve().parent / "oidc"
START_TIMEOUT_S = 30.0


@dataclass
class Provider:
    issuer: str
    port: int
    users_file: Path
    clients_file: Path
    log_file: Path
    pid: int

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def set_users(self, users: list[dict]) -> None:
        """Replace the users; the provider reads the file again at every sign-in and claims lookup."""
        _write_json(self.users_file, users)

    def log(self) -> str:
        return self.log_file.read_text(errors="replace") if self.log_file.exists() else ""


def client_for(
    app_port: int,
    client_id: str = "recall-review",
    client_secret: str = "test-client-secret-0123456789",
    host: str = "127.0.0.1",
) -> dict:
    """A client entry for a Streamlit app on `app_port`: its /oauth2callback is both the redirect and the
    post-logout redirect (st.logout sends the browser to end_session with post_logout_redirect_uri = it)."""
    callback = f"http://{host}:{app_port}/oauth2callback"
    return {
        "client_id": client_id,
        "client_secret": client_secret,
        "redirect_uris": [callback],
        "post_logout_redirect_uris": [callback],
    }


def auth_secrets(provider: Provider, client: dict, cookie_secret: str = "test-cookie-secret-0123456789abcdef") -> str:
    """The [auth] section of .streamlit/secrets.toml for `client` (from client_for) against `provider`. Scope asks
    for groups too (Streamlit's default scope is "openid email profile", which gets no groups claim)."""
    return "\n".join(
        [
            "[auth]",
            f'redirect_uri = "{client["redirect_uris"][0]}"',
            f'cookie_secret = "{cookie_secret}"',
            f'client_id = "{client["client_id"]}"',
            f'client_secret = "{client["client_secret"]}"',
            f'server_metadata_url = "{provider.metadata_url}"',
            'client_kwargs = { scope = "openid email profile groups" }',
            "",
        ]
    )


def _write_json(path: Path, data: object) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, path)  # atomic: the provider never reads a half-written file


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


@contextmanager
def oidc_provider(
    tmp_path: Path, users: list[dict], clients: list[dict], port: int | None = None, issuer: str | None = None
) -> Iterator[Provider]:
    """Start the provider (its files in tmp_path/oidc), wait until its discovery document answers, yield it, then
    stop its whole process group."""
    if not (OIDC_DIR / "node_modules" / "oidc-provider").is_dir():
        raise RuntimeError(f"{OIDC_DIR / 'node_modules'} is missing: run scripts/setup (it runs npm ci in tests/oidc)")
    node = shutil.which("node")
    if node is None:
        raise RuntimeError("node is not on PATH: the test OpenID provider needs Node.js (Debian's nodejs)")
    folder = Path(tmp_path) / "oidc"
    folder.mkdir(parents=True, exist_ok=True)
    port = port or free_port("127.0.0.1")
    issuer = (issuer or f"http://127.0.0.1:{port}").rstrip("/")
    users_file, clients_file, log_file = folder / "users.json", folder / "clients.json", folder / "provider.log"
    _write_json(users_file, users)
    _write_json(clients_file, clients)
    env = {
        **os.environ,
        "OIDC_PORT": str(port),
        "OIDC_ISSUER": issuer,
        "OIDC_USERS": str(users_file),
        "OIDC_CLIENTS": str(clients_file),
    }
    with log_file.open("ab") as log:
        proc = subprocess.Popen(
            [node, str(OIDC_DIR / "provider.mjs")],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=OIDC_DIR,
            start_new_session=True,
        )
    provider = Provider(
        issuer=issuer, port=port, users_file=users_file, clients_file=clients_file, log_file=log_file, pid=proc.pid
    )
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while not _answers(provider.metadata_url):
            if proc.poll() is not None:
                raise RuntimeError(f"the OpenID provider exited with {proc.returncode}:\n{provider.log()[-3000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"the OpenID provider did not answer in {START_TIMEOUT_S:.0f} s:\n{provider.log()[-3000:]}"
                )
            time.sleep(0.05)
        yield provider
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    for sig, wait_s in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)  # its own session (start_new_session): the group's id is its pid
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=wait_s)
            break
        except subprocess.TimeoutExpired:
            continue
    proc.wait(timeout=5)


TRY_ROLES = (
    '[roles]\nlead = ["group:ap-leads"]\nreviewer = ["group:ap-reviewers"]\nviewer = ["group:finance-stakeholders"]\n'
)


def _interrupted(*_args) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Serve this provider for a person trying sign-in on their machine until Ctrl-C (docs/sign-in.md)."""
    import tempfile

    parser = argparse.ArgumentParser(prog="scripts/try-sign-in", description=main.__doc__)
    parser.add_argument(
        "--users",
        type=Path,
        default=OIDC_DIR.parent.parent / "examples" / "sign-in" / "users.json",
        help="the users file: a JSON list of {login, password, sub, name, email, groups}",
    )
    parser.add_argument("--port", type=int, default=9400, help="the provider's port on 127.0.0.1 (default 9400)")
    parser.add_argument("--app-port", type=int, default=8501, help="the dashboard's port on 127.0.0.1 (default 8501)")
    args = parser.parse_args(argv)
    users = json.loads(args.users.read_text())
    signal.signal(signal.SIGTERM, _interrupted)  # stopped like Ctrl-C: the provider's node process with it
    client = client_for(args.app_port, client_secret=secrets.token_urlsafe(24))
    with (
        tempfile.TemporaryDirectory(prefix="try-sign-in-") as folder,
        oidc_provider(Path(folder), users, [client], port=args.port) as provider,
    ):
        print(f"try-sign-in: an OpenID provider on {provider.issuer} with the users of {args.users}:")
        for user in users:
            print(
                f"  {user['login']} / {user['password']}  ({user['name']}, groups: {', '.join(user.get('groups', [])) or 'none'})"
            )
        print(
            "\nPut this in .streamlit/secrets.toml, start the dashboard (scripts/dashboard), open "
            f"http://127.0.0.1:{args.app_port} and press Sign in. Ctrl-C stops the provider.\n"
        )
        print(auth_secrets(provider, client, cookie_secret=secrets.token_urlsafe(32)) + "\n" + TRY_ROLES, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("try-sign-in: stopped")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
