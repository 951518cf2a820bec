"""No requests inward: where a webhook may be sent, decided on the address its name resolves to at send time, and the
connection made to that very address (no second lookup a rebinding DNS could answer differently).

A webhook URL is typed by whoever configures the deployment, and the dashboard runs inside the network: aimed at the
embedded PostgreSQL, a cloud's metadata service or another internal port, each final decision would be a signed POST
from inside. So a target resolving to loopback, link-local, private, shared (CGNAT), multicast, unspecified, reserved
or a cloud metadata address is refused (IPv4-mapped and 6to4 IPv6 addresses are judged by the IPv4 inside; integer
and hex forms such as 0x7f000001 resolve like any name). A kind whose receiver is on the internal network says so
explicitly (`webhook_allow_private`): loopback and private targets are then sent to; link-local, metadata, multicast,
unspecified and reserved ones never.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolve = Callable[..., list]  # socket.getaddrinfo's shape

# The instance metadata services of the large clouds (AWS, GCP and Azure's 169.254.169.254 and AWS's IPv6 one, Alibaba,
# Azure's wire server, Oracle's): never a webhook receiver, whatever the settings.
METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",
        "fd00:ec2::254",
        "100.100.100.200",
        "168.63.129.16",
        "192.0.0.192",
    )
)
SHARED = ipaddress.ip_network("100.64.0.0/10")  # carrier-grade NAT: inside someone's network, not Python's is_private
THIS_NETWORK = ipaddress.ip_network("0.0.0.0/8")  # "this host" on Linux, like 0.0.0.0
ALLOWED_WITH_PRIVATE = frozenset({"loopback", "private"})
ALLOWANCE = "webhook_allow_private"
REFUSED = "address refused"  # how a refusal's words begin, on the delivery's row and in the start-up check


class TargetRefused(Exception):
    """The webhook's name resolves to an address it may not be sent to; the message says which and why."""


class TargetUnresolved(Exception):
    """The webhook's name did not resolve (now): the event is tried again later."""


def address_kind(address: IPAddress) -> str | None:
    """What makes `address` an inward one, in words ('loopback', 'a cloud metadata' ...); None for a public address."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour
        if inner is not None:
            return address_kind(inner)
    if address in METADATA:
        return "cloud metadata"
    if address.is_unspecified or (address.version == 4 and address in THIS_NETWORK):
        return "unspecified"
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_reserved:
        return "reserved"
    if address.is_private or (address.version == 4 and address in SHARED):
        return "private"
    if not address.is_global:
        return "reserved"
    return None


def refusal(address: IPAddress, allow_private: bool) -> str | None:
    """Why a webhook may not go to `address`, e.g. "a loopback address; webhooks go only to public addresses unless
    ..." (None: it may)."""
    kind = address_kind(address)
    if kind is None or (allow_private and kind in ALLOWED_WITH_PRIVATE):
        return None
    if kind in ALLOWED_WITH_PRIVATE:
        return f"{_a(kind)} address; webhooks go only to public addresses unless the kind's {ALLOWANCE} is true"
    return f"{_a(kind)} address; webhooks are never sent there"


def _a(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


@dataclass(frozen=True)
class PinnedTarget:
    """A webhook URL with the address it was checked at: the request goes to `address`, naming `url`'s host."""

    url: str
    address: IPAddress
    port: int

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def direct_url(self) -> str:
        """`url` with its host replaced by the checked address (the connection's only destination)."""
        parts = urlsplit(self.url)
        at = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        return urlunsplit((parts.scheme, f"{at}:{self.port}", parts.path or "/", parts.query, ""))

    @property
    def host_header(self) -> str:
        return urlsplit(self.url).netloc  # as configured (credentials are refused in the settings)


def pin(url: str, allow_private: bool = False, resolve: Resolve = socket.getaddrinfo) -> PinnedTarget:
    """Resolve `url`'s host once and check every address it gave; the first is where the request goes. TargetRefused
    when any is inward (a name answering both a public and an inward address is refused too), TargetUnresolved when
    the name does not resolve."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        answers = resolve(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise TargetUnresolved(f"no answer from {parts.netloc}: its name did not resolve ({exc})") from None
    addresses = list(dict.fromkeys(ipaddress.ip_address(info[4][0].split("%")[0]) for info in answers))
    if not addresses:
        raise TargetUnresolved(f"no answer from {parts.netloc}: its name resolved to no address")
    for address in addresses:
        why = refusal(address, allow_private)
        if why:
            named = f"{host} is" if _literal(host) == address else f"{host} resolves to {address},"
            raise TargetRefused(f"{REFUSED}: {named} {why}")
    return PinnedTarget(url=url, address=addresses[0], port=port)


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def check_targets(targets: Mapping[str, tuple[str, bool]], resolve: Resolve = socket.getaddrinfo) -> list[str]:
    """The start-up check of each kind's webhook (kind -> (url, allow_private)): one line each that needs saying, a
    refusal, a name that does not resolve now, or the explicit allowance of private targets."""
    lines = []
    for kind, (url, allow_private) in sorted(targets.items()):
        where = f"RECALL_REVIEW_QUEUES.{kind}.webhook_url ({urlsplit(url).netloc})"
        try:
            pin(url, allow_private, resolve)
        except TargetRefused as exc:
            lines.append(f"{where}: {exc}; its events are not sent (failed, on the Audit page) until it changes")
            continue
        except TargetUnresolved as exc:
            lines.append(f"{where}: {exc}; checked again at each send")
            continue
        if allow_private:
            lines.append(f"{where}: {ALLOWANCE} is true, so loopback and private addresses are sent to")
    return lines
