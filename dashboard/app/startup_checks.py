"""What a start must pass before the app serves anyone: settings that load, no anonymous exposure beyond this
machine unless asked for, the host names it answers to; and each kind's webhook target said. A refusal is an input
error said on stderr, exit 2, as the CLI's."""

from __future__ import annotations

import sys


def settings_or_exit() -> None:
    """A bad setting said as the CLI says it, exit 2, before anything is read or served."""
    from pydantic import ValidationError

    from dashboard.settings import load_settings, settings_problem

    try:
        load_settings()
    except ValidationError as exc:
        print(f"error: settings: {settings_problem(exc)}", file=sys.stderr)
        sys.exit(2)  # an input error, as the CLI's


def exposure_or_exit() -> None:
    """Refuse to serve anyone who reaches another address without sign-in, unless that is asked for by name: exit 2
    with the setting to use. On a loopback address the one-person mode needs nothing."""
    from streamlit import config

    from dashboard.app.access import login_configured
    from dashboard.settings import is_loopback, load_settings

    address = config.get_option("server.address")
    if is_loopback(address) or login_configured() or load_settings().allow_anonymous:
        return
    print(
        f"error: the dashboard would serve {address or 'every network interface'} without sign-in, so anyone who "
        "reaches it would act without a name of their own. Configure sign-in (an [auth] section in "
        ".streamlit/secrets.toml, docs/sign-in.md), serve on 127.0.0.1, or set RECALL_REVIEW_ALLOW_ANONYMOUS=true to "
        "accept anonymous visitors (as viewers unless RECALL_REVIEW_ROLE says otherwise).",
        file=sys.stderr,
    )
    sys.exit(2)


def hosts_or_exit() -> list[str]:
    """The host names the app answers to (RECALL_REVIEW_ALLOWED_HOSTS, this machine's own on loopback), kept in
    Streamlit's server.allowedHosts (its WebSocket check) and read by hosts.OwnHostsOnly (every other route). Served
    beyond this machine without them: exit 2 naming the setting."""
    from streamlit import config

    from dashboard.app.hosts import HostsNotNamed, own_hosts
    from dashboard.settings import load_settings

    try:
        hosts = own_hosts(load_settings().allowed_hosts, config.get_option("server.address"))
    except HostsNotNamed as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
    config.set_option("server.allowedHosts", hosts)
    return hosts


def say_webhook_targets() -> None:
    """The start-up check of each kind's webhook (delivery/webhook_target.py): a refused or unresolved target, or the
    explicit allowance of private ones, said on stderr. The app serves either way; each send checks again."""
    from dashboard.delivery.webhook_target import check_targets
    from dashboard.kinds import configured, webhook_targets
    from dashboard.settings import load_settings

    targets = webhook_targets(configured(load_settings()))
    for line in check_targets({t.kind: (t.url, t.allow_private) for t in targets.values()}):
        print(f"dashboard: webhook {line}", file=sys.stderr)
