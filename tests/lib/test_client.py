"""The one client address (lib/client.py): X-Forwarded-For only from trusted proxies."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

from lib.client import client_address, client_address_of, parse_networks


@pytest.fixture
def proxies(settings):
    settings.REGISTRY_TRUSTED_PROXIES = ["10.0.0.0/8", "192.0.2.1"]


def test_without_trusted_proxies_the_peer_is_the_client(settings):
    settings.REGISTRY_TRUSTED_PROXIES = []
    assert client_address_of("10.0.0.5", "203.0.113.9") == "10.0.0.5"


def test_an_untrusted_peer_cannot_choose_its_address(proxies):
    assert client_address_of("198.51.100.7", "203.0.113.9") == "198.51.100.7"


def test_a_trusted_peer_names_the_client(proxies):
    assert client_address_of("10.0.0.5", "203.0.113.9") == "203.0.113.9"


def test_the_rightmost_untrusted_hop_is_the_client(proxies):
    # The client forged the first hop; the proxies appended the real one after it.
    chain = "1.2.3.4, 203.0.113.9, 192.0.2.1"
    assert client_address_of("10.0.0.5", chain) == "203.0.113.9"


def test_only_proxies_in_the_chain_leaves_the_leftmost(proxies):
    assert client_address_of("10.0.0.5", "10.1.1.1, 192.0.2.1") == "10.1.1.1"


def test_garbage_stops_the_walk(proxies):
    assert client_address_of("10.0.0.5", "203.0.113.9, not-an-address") == "10.0.0.5"


def test_ports_and_brackets_are_read(proxies):
    assert client_address_of("10.0.0.5", "[2001:db8::1]:4711") == "2001:db8::1"
    assert client_address_of("10.0.0.5", "203.0.113.9:4711") == "203.0.113.9"


def test_a_request(proxies):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.5", HTTP_X_FORWARDED_FOR="203.0.113.9")
    assert client_address(request) == "203.0.113.9"


def test_a_bad_network_is_named():
    with pytest.raises(ValueError, match=r"'10\.0\.0\.300'"):
        parse_networks(["10.0.0.0/8", "10.0.0.300"])
