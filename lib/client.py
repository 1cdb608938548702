"""The client's address: one function decides it for throttling, API limits and logs.

Behind a reverse proxy the socket's peer is the proxy, so every client would look alike and
a limit keyed on the peer would throttle them all together. ``X-Forwarded-For`` names the
client, but anyone can send that header, so it is believed only from a peer listed in
``REGISTRY_TRUSTED_PROXIES`` (addresses or CIDR networks; empty by default). Each proxy
appends the address it received the request from, so the list is read from the right: the
first hop that is not itself a trusted proxy is the client. A hop that is not an address
stops the walk there (it cannot be trusted to have appended honestly), and the last address
that was checked is the client.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from django.conf import settings

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDED_FOR = "HTTP_X_FORWARDED_FOR"


def parse_networks(values: Iterable[str]) -> tuple[Network, ...]:
    """``REGISTRY_TRUSTED_PROXIES`` as networks; a single address is a network of one.

    Raises ValueError naming the first value that is neither an address nor a network.
    """
    networks = []
    for value in values:
        text = value.strip()
        if not text:
            continue
        try:
            networks.append(ipaddress.ip_network(text, strict=False))
        except ValueError:
            raise ValueError(f"{text!r} is not an IP address or CIDR network") from None
    return tuple(networks)


@lru_cache(maxsize=8)
def _trusted(values: tuple[str, ...]) -> tuple[Network, ...]:
    return parse_networks(values)


def trusted_proxies() -> tuple[Network, ...]:
    return _trusted(tuple(getattr(settings, "REGISTRY_TRUSTED_PROXIES", ())))


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    candidate = text.strip()
    if candidate.startswith("[") and "]" in candidate:  # [v6]:port
        candidate = candidate[1 : candidate.index("]")]
    elif candidate.count(":") == 1:  # v4:port
        candidate = candidate.split(":", 1)[0]
    try:
        address = ipaddress.ip_address(candidate)
    except ValueError:
        return None
    mapped = getattr(address, "ipv4_mapped", None)
    return mapped or address


def is_trusted(address: str, networks: tuple[Network, ...] | None = None) -> bool:
    parsed = _address(address)
    if parsed is None:
        return False
    return any(parsed in network for network in (networks or trusted_proxies()))


def client_address_of(peer: str, forwarded_for: str | None) -> str:
    """The client of a connection from ``peer`` that carried ``forwarded_for`` (or none)."""
    networks = trusted_proxies()
    if not networks or not forwarded_for or not is_trusted(peer, networks):
        return peer
    client = peer
    for hop in reversed(forwarded_for.split(",")):
        parsed = _address(hop)
        if parsed is None:
            break
        client = str(parsed)
        if not any(parsed in network for network in networks):
            break
    return client


def client_address(request: Any) -> str:
    """The client address of a Django (or DRF) request; see the module's docstring."""
    meta: Mapping[str, Any] = request.META
    return client_address_of(str(meta.get("REMOTE_ADDR") or ""), meta.get(FORWARDED_FOR))
