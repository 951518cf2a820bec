"""What the Hindsight adapter raises. Callers catch these, never the client's own exception types."""


class HindsightError(RuntimeError):
    """Base of what the gateway raises: pages catch this, never the client's own types."""


class HindsightUnavailable(HindsightError):
    """Hindsight could not be reached, timed out or failed (5xx): worth retrying later."""


class HindsightFailed(HindsightUnavailable):
    """Hindsight answered, with a server error (5xx): often transient (e.g. a database deadlock)."""


class HindsightRequestRejected(HindsightError, ValueError):
    """Hindsight refused the request as invalid (4xx), or we refused to send it: fix the input."""
