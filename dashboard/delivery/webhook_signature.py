"""The signature on a webhook event (docs/webhooks.md): HMAC-SHA256 with the kind's secret over "<timestamp>.<body>".

Pure functions of their inputs, the standard library only: a receiver may copy `verify` as it is. The timestamp is
signed with the body so a captured request cannot be replayed later than the tolerance.
"""

from __future__ import annotations

import hashlib
import hmac

EVENT_ID_HEADER = "X-Recall-Review-Event-Id"  # the idempotency key: the same event sent again carries the same one
TIMESTAMP_HEADER = "X-Recall-Review-Timestamp"  # unix seconds when this attempt was signed
SIGNATURE_HEADER = "X-Recall-Review-Signature"  # "sha256=<hex>"
TOLERANCE_S = 300


def _bytes(value: str | bytes) -> bytes:
    return value.encode() if isinstance(value, str) else value


def signature(secret: str | bytes, timestamp: int | str, body: str | bytes) -> str:
    """The signature header's value: "sha256=" and the hex HMAC-SHA256 of f"{timestamp}.{body}"."""
    digest = hmac.new(_bytes(secret), f"{timestamp}.".encode() + _bytes(body), hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def signed_headers(secret: str | bytes, event_id: str, body: str | bytes, now: float) -> dict[str, str]:
    """The headers of one attempt to deliver `body`, signed at `now` (unix seconds)."""
    timestamp = int(now)
    return {
        "Content-Type": "application/json",
        EVENT_ID_HEADER: event_id,
        TIMESTAMP_HEADER: str(timestamp),
        SIGNATURE_HEADER: signature(secret, timestamp, body),
    }


def verify(
    secret: str | bytes,
    timestamp: str,
    body: str | bytes,
    signature_header: str,
    now: float,
    tolerance_s: float = TOLERANCE_S,
) -> bool:
    """A receiver's check: the signature is ours over this timestamp and these exact body bytes, and the timestamp is
    within `tolerance_s` of `now` (unix seconds). Compared in constant time."""
    if not (timestamp.isascii() and timestamp.isdigit()) or abs(now - int(timestamp)) > tolerance_s:
        return False
    return hmac.compare_digest(signature(secret, timestamp, body).encode(), (signature_header or "").encode())
