"""Signing and verifying a webhook delivery: HMAC-SHA256 over `<timestamp>.<body>` (pure, no Django).

The header is `X-Signature: t=<unix seconds>,v1=<hex digest>`. The timestamp is inside what is
signed, so a receiver that refuses old timestamps refuses a captured delivery replayed later; the
event id in the body lets it drop a delivery it has already handled (a retry, a replay by hand).
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Signature"
DEFAULT_TOLERANCE_SECONDS = 300


class BadSignature(ValueError):
    """The signature header is missing, malformed, stale or does not match the body."""


def digest(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def signature_header(secret: str, timestamp: int, body: bytes) -> str:
    return f"t={timestamp},v1={digest(secret, timestamp, body)}"


def verify(secret: str, header: str, body: bytes, *, now: float, tolerance: int = DEFAULT_TOLERANCE_SECONDS) -> int:
    """The signed timestamp when `header` signs `body` under `secret` within `tolerance` seconds
    of `now`; BadSignature otherwise."""
    parts = dict(part.split("=", 1) for part in (header or "").split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
        signature = parts["v1"]
    except (KeyError, ValueError):
        raise BadSignature("malformed signature header") from None
    if abs(now - timestamp) > tolerance:
        raise BadSignature("timestamp outside the tolerance")
    if not hmac.compare_digest(signature, digest(secret, timestamp, body)):
        raise BadSignature("signature does not match")
    return timestamp
