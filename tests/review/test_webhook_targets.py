"""No requests inward: a webhook's name is resolved when it is sent and refused when it lands on this machine or its
network (loopback, link-local, private, shared, multicast, unspecified, reserved, a cloud's metadata service; IPv4 in
IPv6 and integer or hex forms too), unless the kind allows private targets explicitly; the address checked is the one
connected to, and redirects are not followed. The refusal is in words on the delivery's row and at start."""

from __future__ import annotations

import os
import socket
import threading
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from dashboard.cli.app_server import serve_app
from dashboard.delivery.webhook_target import TargetRefused, TargetUnresolved, check_targets, pin
from dashboard.delivery.webhooks import NoAnswer, WebhookEvents, WebhookTarget, post_webhook
from dashboard.processes import free_port
from tests.review.test_webhooks import BANK, SECRET, Clock, _proposal, receiver  # noqa: F401  (the receiver fixture)
from tests.warm_app import start_warmed

PUBLIC = "93.184.215.14"  # a global unicast address (pin resolves and checks; it never connects)


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("http://127.0.0.1:5433/", "127.0.0.1 is a loopback address"),  # the embedded PostgreSQL's port
        ("http://0x7f000001/", "0x7f000001 resolves to 127.0.0.1, a loopback address"),
        ("http://2130706433/", "2130706433 resolves to 127.0.0.1, a loopback address"),
        ("http://127.1/", "127.1 resolves to 127.0.0.1, a loopback address"),
        ("http://[::1]/", "::1 is a loopback address"),
        ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1 is a loopback address"),  # IPv4-mapped IPv6
        ("http://[2002:7f00:1::]/", "2002:7f00:1:: is a loopback address"),  # 6to4 around 127.0.0.1
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"),
        ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 is a cloud metadata address"),
        ("http://100.100.100.200/", "100.100.100.200 is a cloud metadata address"),
        ("http://169.254.10.1/", "169.254.10.1 is a link-local address"),
        ("http://[fe80::1]/", "fe80::1 is a link-local address"),
        ("http://10.1.2.3/", "10.1.2.3 is a private address"),
        ("http://172.16.0.9/", "172.16.0.9 is a private address"),
        ("http://192.168.1.20/", "192.168.1.20 is a private address"),
        ("http://100.64.0.7/", "100.64.0.7 is a private address"),  # shared (carrier-grade NAT)
        ("http://[fd12:3456::1]/", "fd12:3456::1 is a private address"),  # unique local
        ("http://224.0.0.251/", "224.0.0.251 is a multicast address"),
        ("http://[ff02::1]/", "ff02::1 is a multicast address"),
        ("http://0.0.0.0:5433/", "0.0.0.0 is an unspecified address"),
        ("http://0/", "0 resolves to 0.0.0.0, an unspecified address"),
        ("http://[::]/", ":: is an unspecified address"),
        ("http://240.0.0.1/", "240.0.0.1 is a reserved address"),
        (
            "http://localhost:5433/",
            "localhost resolves to 127.0.0.1, a loopback address",
        ),  # a name that resolves inward
    ],
)
def test_each_inward_address_class_is_refused_in_words(url, words):
    with pytest.raises(TargetRefused) as refused:
        pin(url)
    assert str(refused.value).startswith(f"address refused: {words}")


def test_a_public_address_is_sent_to_and_a_name_is_judged_by_every_address_it_resolves_to():
    assert str(pin(f"https://{PUBLIC}/hooks").address) == PUBLIC
    public_and_inward = _resolver({"hooks.partner.example": [PUBLIC, "10.0.0.5"]})
    with pytest.raises(TargetRefused, match="hooks.partner.example resolves to 10.0.0.5, a private address"):
        pin("https://hooks.partner.example/x", resolve=public_and_inward)
    with pytest.raises(TargetUnresolved, match="did not resolve"):
        pin("https://nowhere.invalid/x")


def test_the_explicit_allowance_opens_loopback_and_private_targets_never_metadata_link_local_multicast_or_unspecified():
    for url in (
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://10.1.2.3/",
        "http://[fd12::1]/",
        "http://100.64.0.7/",
    ):
        assert pin(url, allow_private=True).port in (80, 8080)
    for url, kind in (
        ("http://169.254.169.254/", "cloud metadata"),
        ("http://[fe80::1]/", "link-local"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0/", "unspecified"),
    ):
        with pytest.raises(TargetRefused, match=f"an? {kind} address; webhooks are never sent there"):
            pin(url, allow_private=True)
    with pytest.raises(TargetRefused, match="unless the kind's webhook_allow_private is true"):
        pin("http://10.1.2.3/")


def _resolver(names: dict[str, list[str]], calls: list | None = None):
    """getaddrinfo for made-up names (each its list of addresses), counting the lookups in `calls`."""

    def resolve(host, port, *args, **kwargs):
        if calls is not None:
            calls.append(host)
        if host not in names:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        family = lambda a: socket.AF_INET6 if ":" in a else socket.AF_INET  # noqa: E731
        return [(family(a), socket.SOCK_STREAM, 6, "", (a, port)) for a in names[host]]

    return resolve


def test_the_address_checked_is_the_one_connected_to_under_the_configured_name(receiver):
    """One lookup, then the connection to that address: a rebinding DNS gets no second question. The receiver still
    sees the configured name in Host."""
    receiver.start()
    calls: list[str] = []
    resolve = _resolver({"hooks.partner.example": ["127.0.0.1"]}, calls)
    url = f"http://hooks.partner.example:{receiver.port}/hooks/decisions"
    assert (
        post_webhook(url, b"{}", {"Content-Type": "application/json"}, 5.0, allow_private=True, resolve=resolve) == 200
    )
    assert calls == ["hooks.partner.example"]
    (got,) = receiver.requests
    assert got.headers["Host"] == f"hooks.partner.example:{receiver.port}"
    with pytest.raises(TargetRefused):  # the same name, without the allowance: nothing sent
        post_webhook(url, b"{}", {}, 5.0, resolve=resolve)
    assert len(receiver.requests) == 1


class _Redirecting:
    """A receiver that answers every POST with 307 to `location`."""

    def __init__(self, location: str):
        self.posts = 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                self.rfile.read(int(self.headers["Content-Length"]))
                outer.posts += 1
                self.send_response(307)
                self.send_header("Location", location)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_a_redirect_is_an_answer_never_followed(scratch_service, receiver):
    receiver.start()
    redirecting = _Redirecting(receiver.url)
    try:
        service, clock = scratch_service(), Clock()
        target = WebhookTarget("finance", f"http://127.0.0.1:{redirecting.port}/hooks", SECRET, allow_private=True)
        events = WebhookEvents(service.outbox.engine, clock=clock, targets={(BANK, "exception"): target})
        events.dispatch()
        service.decide(BANK, "reviewer", _proposal("E-71"))
        assert events.deliver_due().failed == 1
        (line,) = events.deliveries()
        assert (line.state, line.last_status) == ("failed", 307)
        assert redirecting.posts == 1 and receiver.requests == []  # the signed body went nowhere else
    finally:
        redirecting.stop()


def test_an_inward_target_parks_the_event_with_the_refusal_in_words_and_the_allowance_delivers_it(
    scratch_service, receiver
):
    receiver.start()
    service, clock = scratch_service(), Clock()
    refused = WebhookTarget("finance", f"http://localhost:{receiver.port}/hooks", SECRET)
    events = WebhookEvents(service.outbox.engine, clock=clock, targets={(BANK, "exception"): refused})
    events.dispatch()
    service.decide(BANK, "reviewer", _proposal("E-72"))
    assert events.deliver_due().failed == 1
    (line,) = events.deliveries()
    assert line.state == "failed" and line.last_status is None
    assert line.last_error == (
        "address refused: localhost resolves to 127.0.0.1, a loopback address; webhooks go only "
        "to public addresses unless the kind's webhook_allow_private is true"
    )
    assert receiver.requests == []

    allowed = WebhookEvents(
        service.outbox.engine,
        clock=clock,
        targets={(BANK, "exception"): WebhookTarget("finance", refused.url, SECRET, allow_private=True)},
    )
    assert allowed.redeliver(line.event_id)
    clock.now = datetime.now(UTC)
    assert allowed.deliver_due().delivered == 1 and len(receiver.requests) == 1


def test_the_kinds_setting_carries_the_allowance_to_its_target(monkeypatch, tmp_path):
    from dashboard.kinds import configured, webhook_targets
    from dashboard.settings import load_settings

    for name in ("RECALL_REVIEW_FINANCE_BANK", "RECALL_REVIEW_KINDS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(
        "RECALL_REVIEW_QUEUES",
        f'{{"finance": {{"webhook_url": "http://10.0.0.8/h", "webhook_secret": "{SECRET}", '
        '"webhook_allow_private": true}}',
    )
    (target,) = webhook_targets(configured(load_settings(secrets_file=tmp_path / "none.toml"))).values()
    assert target.allow_private and target.url == "http://10.0.0.8/h"


def test_the_start_up_check_says_each_refusal_and_each_allowance():
    resolve = _resolver({"erp.example": [PUBLIC], "pg.internal": ["127.0.0.1"], "lan.example": ["10.0.0.8"]})
    lines = check_targets(
        {
            "finance": ("http://pg.internal:5433/", False),
            "support": ("https://lan.example/h", True),
            "payroll": ("https://erp.example/h", False),
            "legal": ("https://gone.example/h", False),
        },
        resolve=resolve,
    )
    assert lines == [
        "RECALL_REVIEW_QUEUES.finance.webhook_url (pg.internal:5433): address refused: pg.internal resolves to 127.0.0.1, "
        "a loopback address; webhooks go only to public addresses unless the kind's webhook_allow_private is true; its "
        "events are not sent (failed, on the Audit page) until it changes",
        "RECALL_REVIEW_QUEUES.legal.webhook_url (gone.example): no answer from gone.example: its name did not resolve "
        "([Errno -2] Name or service not known); checked again at each send",
        "RECALL_REVIEW_QUEUES.support.webhook_url (lan.example): webhook_allow_private is true, so loopback and private "
        "addresses are sent to",
    ]  # the public one needs no line


def test_the_served_app_says_a_refused_webhook_at_start(tmp_path):
    env = {
        **os.environ,
        "HINDSIGHT_API_URL": "http://127.0.0.1:9",
        "RECALL_REVIEW_QUEUES": f'{{"finance": {{"webhook_url": "http://169.254.169.254/latest", "webhook_secret": "{SECRET}"}}}}',
    }
    with serve_app(env, tmp_path, start=start_warmed, port=free_port()):
        log = (tmp_path / "streamlit.log").read_text()
    assert (
        "dashboard: webhook RECALL_REVIEW_QUEUES.finance.webhook_url (169.254.169.254): address refused: "
        "169.254.169.254 is a cloud metadata address; webhooks are never sent there"
    ) in log


def _refused_log_page() -> None:
    from datetime import UTC, datetime

    from components.webhook_deliveries import render_webhook_deliveries
    from dashboard.delivery.webhooks import WebhookDelivery

    render_webhook_deliveries(
        [
            WebhookDelivery(
                event_id=3,
                idempotency_key="decision-9",
                case_kind="exception",
                case_id="E-9",
                bank_id="fin",
                url="http://localhost:5433/",
                state="failed",
                attempts=1,
                last_status=None,
                created_at=datetime(2026, 12, 1, tzinfo=UTC),
                last_error="address refused: localhost resolves to 127.0.0.1, a loopback address; webhooks go only to public "
                "addresses unless the kind's webhook_allow_private is true",
                delivered_at=None,
            )
        ],
        can_redeliver=True,
    )


def test_the_audit_pages_log_says_an_event_was_not_sent_because_its_address_is_refused():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_refused_log_page, default_timeout=30).run()
    frame = at.dataframe[0].value
    assert (frame["state"][0], frame["last answer"][0]) == (
        "not sent: its address is refused",
        "not sent (inward address)",
    )
    assert frame["last error"][0].startswith("address refused: localhost resolves to 127.0.0.1")


def _tls_files(tmp_path, name: str):
    """A CA and a server certificate for `name` (written to tmp_path): (CA file, certificate file, key file)."""
    from datetime import timedelta

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    def cert(subject, issuer, key, signer, *, ca: bool, san: str | None = None):
        now = datetime.now(UTC)
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + timedelta(hours=1))
            .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        )
        if san:
            builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(san)]), critical=False)
        return builder.sign(signer, hashes.SHA256())

    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test webhook CA")])
    ca = cert(ca_name, ca_name, ca_key, ca_key, ca=True)
    leaf = cert(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]), ca_name, key, ca_key, ca=False, san=name)
    files = tmp_path / "ca.pem", tmp_path / "cert.pem", tmp_path / "key.pem"
    files[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    files[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    files[2].write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return files


def test_over_https_the_pinned_connection_says_the_configured_name_and_checks_the_certificate_against_it(
    tmp_path, monkeypatch
):
    """Connected to the address checked, TLS still names the configured host (SNI) and verifies the certificate for it:
    a certificate for another name is no answer."""
    import ssl

    import certifi

    ca_file, cert_file, key_file = _tls_files(tmp_path, "hooks.partner.example")
    monkeypatch.setattr(
        certifi, "where", lambda: str(ca_file)
    )  # the sender trusts the test CA, as it would a public one
    server_names: list[str | None] = []
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)
    context.sni_callback = lambda _sock, name, _ctx: server_names.append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        resolve = _resolver({"hooks.partner.example": ["127.0.0.1"], "other.partner.example": ["127.0.0.1"]})
        assert (
            post_webhook(f"https://hooks.partner.example:{port}/h", b"{}", {}, 5.0, allow_private=True, resolve=resolve)
            == 204
        )
        assert server_names == ["hooks.partner.example"]
        with pytest.raises(
            NoAnswer, match="certificate"
        ):  # the same server under a name its certificate does not carry
            post_webhook(f"https://other.partner.example:{port}/h", b"{}", {}, 5.0, allow_private=True, resolve=resolve)
    finally:
        server.shutdown()
        server.server_close()
