"""The client's address, as the landing caps and the login throttle count it.

REMOTE_ADDR unless the site runs behind its own reverse proxy (TRUST_X_FORWARDED_FOR=1): then
the last X-Forwarded-For entry, the one our proxy appended (earlier entries come from the client
and can be anything). Behind a proxy without the setting every client would share one address.
"""

from ipaddress import ip_address

from django.conf import settings


def client_ip(request) -> str | None:
    address = request.META.get("REMOTE_ADDR") or None
    if getattr(settings, "TRUST_X_FORWARDED_FOR", False):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        address = forwarded or address
    return _valid(address)


def _valid(address: str | None) -> str | None:
    try:
        return str(ip_address(address)) if address else None
    except ValueError:
        return None
