"""A researcher's webhook endpoints: the one writer of WebhookEndpoint rows, their secrets, and
the check of the URL they point to.

The secret signs every delivery, and HMAC needs the secret itself, so it must be recoverable by
the sender. It is not stored: it is derived as HMAC-SHA256(WEBHOOK_SECRET_KEY, "webhook:" + salt)
from a random per-endpoint salt, shown once when the endpoint is made, and never again (no page,
API answer or log line carries it). A copy of the database alone does not reveal it; changing
WEBHOOK_SECRET_KEY (SECRET_KEY by default) changes every endpoint's secret.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
import socket
from urllib.parse import urlsplit

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from jobs.webhooks.models import EVENT_KINDS, WebhookEndpoint

WANTED_KINDS_CACHE_KEY = "webhooks:live-endpoints:v1"
WANTED_KINDS_CACHE_SECONDS = 30


class EndpointRefused(ValueError):
    """A bad endpoint: `field` names what is wrong (url, kinds)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def secret_of(endpoint: WebhookEndpoint) -> str:
    key = str(settings.WEBHOOK_SECRET_KEY).encode()
    return "whsec_" + hmac.new(key, f"webhook:{endpoint.secret_salt}".encode(), hashlib.sha256).hexdigest()


def create_endpoint(
    url: str, kinds: list[str], *, description: str = "", created_by=None
) -> tuple[WebhookEndpoint, str]:
    """Check and record an endpoint: (the endpoint, its secret), the secret to show once."""
    endpoint = WebhookEndpoint(
        url=check_url(url), kinds=check_kinds(kinds), description=description[:200], created_by=created_by,
        secret_salt=secrets.token_hex(32),
    )  # fmt: skip
    endpoint.save()
    forget_wanted_kinds()
    return endpoint, secret_of(endpoint)


def change_endpoint(endpoint: WebhookEndpoint, *, kinds: list[str] | None = None, active: bool | None = None) -> None:
    if kinds is not None:
        endpoint.kinds = check_kinds(kinds)
    if active is not None:
        endpoint.active = active
    endpoint.save(update_fields=["kinds", "active"])
    forget_wanted_kinds()


def delete_endpoint(endpoint: WebhookEndpoint) -> None:
    endpoint.delete()
    forget_wanted_kinds()


def check_kinds(kinds: list[str]) -> list[str]:
    if not isinstance(kinds, list) or not kinds:
        raise EndpointRefused("kinds", "choose at least one event kind")
    unknown = [kind for kind in kinds if kind not in EVENT_KINDS]
    if unknown:
        raise EndpointRefused("kinds", f"unknown kind {unknown[0]!r}; known: {', '.join(EVENT_KINDS)}")
    return sorted(set(kinds))


def check_url(url: str) -> str:
    """An http(s) URL whose host resolves to no blocked address (WEBHOOK_BLOCKED_NETWORKS)."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise EndpointRefused("url", "only http and https URLs receive webhooks")
    if not parts.hostname:
        raise EndpointRefused("url", "the URL names no host")
    if parts.username or parts.password:
        raise EndpointRefused("url", "put no user name or password in the URL; check the signature instead")
    blocked = blocked_address(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    if blocked:
        raise EndpointRefused(
            "url", f"{parts.hostname} resolves to {blocked}, a blocked address (WEBHOOK_BLOCKED_NETWORKS)"
        )
    return url.strip()


def blocked_address(host: str, port: int) -> str | None:
    """The first address `host` resolves to inside WEBHOOK_BLOCKED_NETWORKS, else None (a name
    that does not resolve is not blocked here: its delivery fails and is retried)."""
    networks = [ipaddress.ip_network(net, strict=False) for net in settings.WEBHOOK_BLOCKED_NETWORKS]
    try:
        infos = socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%")[0])
        if any(address in network for network in networks):
            return str(address)
    return None


def live_endpoints() -> list[tuple[int, list[str]]]:
    """(id, kinds) of every active endpoint, cached (the shared cache; with no REDIS_URL each
    process's own, for at most WANTED_KINDS_CACHE_SECONDS) until an endpoint changes: a
    participant's submission asks this, and reads no endpoint row from the database."""
    rows = cache.get(WANTED_KINDS_CACHE_KEY)
    if rows is None:
        rows = [
            (pk, list(kinds)) for pk, kinds in WebhookEndpoint.objects.filter(active=True).values_list("pk", "kinds")
        ]
        cache.set(WANTED_KINDS_CACHE_KEY, rows, WANTED_KINDS_CACHE_SECONDS)
    return [(pk, kinds) for pk, kinds in rows]


def wanted_kinds() -> frozenset[str]:
    return frozenset(kind for _, kinds in live_endpoints() for kind in kinds)


def forget_wanted_kinds() -> None:
    transaction.on_commit(lambda: cache.delete(WANTED_KINDS_CACHE_KEY))
    cache.delete(WANTED_KINDS_CACHE_KEY)
