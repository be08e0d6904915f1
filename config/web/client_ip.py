"""The client's address, as the landing caps and the login throttle count it.

REMOTE_ADDR unless the site runs behind its own reverse proxy (TRUST_X_FORWARDED_FOR=1): then
the last X-Forwarded-For entry, the one our proxy appended (earlier entries come from the client
and can be anything). Behind a proxy without the setting every client would share one address.

`address_block` is what a per-address cap should count: one subscriber gets a whole IPv6 /64
(often more), so counting exact IPv6 addresses lets one home pass any cap.
"""

from ipaddress import ip_address, ip_network

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


def address_block(address: str | None, ipv6_prefix: int) -> str:
    """The block a cap counts `address` in: an IPv4 address (or an IPv4-mapped IPv6 one) itself,
    an IPv6 address as its network of `ipv6_prefix` bits ("2001:db8:1:2::/64"); "" for none."""
    if not address:
        return ""
    parsed = ip_address(address)
    if parsed.version == 6 and parsed.ipv4_mapped is not None:
        parsed = parsed.ipv4_mapped
    if parsed.version == 4:
        return str(parsed)
    return str(ip_network(f"{parsed}/{ipv6_prefix}", strict=False))
