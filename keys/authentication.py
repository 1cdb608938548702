"""``Authorization: Bearer rgk_...`` for the API, as a DRF authentication class.

Every request looks its key up by prefix (through the short Redis cache of
:mod:`keys.cache`, in the round trip that also counts the request for the caller's rate
limit, once the token's digest is found to be the key's) and compares the SHA-256 digest in
constant time. Nothing is cached in the process, so a revocation or rotation holds from the
next request in every web process. Diagnostics never repeat the presented token, and log
lines name a refused key by its fingerprint (:func:`keys.models.prefix_fingerprint`), not by
its prefix, which is enough to aim forged tokens at it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from keys.cache import Counter, key_lookup
from keys.models import (
    ApiKey,
    is_sandbox_token,
    is_well_formed,
    prefix_fingerprint,
    token_prefix,
)
from keys.services import key_mark_used
from registry.models import Practice

log = logging.getLogger(__name__)

SCHEME = "Bearer"
INVALID = "Invalid or revoked API key."


@dataclass(frozen=True)
class KeyPrincipal:
    """``request.user`` for a request made with an API key: the key, acting for its practice."""

    key: ApiKey
    count: int | None = None  # the view's counter after this request (keys.cache.Counter)
    is_authenticated = True
    is_anonymous = False

    @property
    def practice(self) -> Practice:
        return self.key.practice

    def __str__(self) -> str:
        return f"api-key:{self.key.prefix}"


class ApiKeyAuthentication(BaseAuthentication):
    """Sets ``request.user`` to a :class:`KeyPrincipal` and ``request.auth`` to the ApiKey.

    No header at all authenticates nobody (``None``), and the scope permission then answers
    401; a header that is present but wrong is refused here, also with 401. A view may pass
    ``counter``, which names the counter of a key prefix to increment in the lookup's round
    trip (the API's rate limit) if the token is the key's; its value is the principal's
    ``count``.
    """

    def __init__(self, counter: Callable[[str], Counter] | None = None) -> None:
        self.counter = counter

    def authenticate(self, request: Request) -> tuple[KeyPrincipal, ApiKey] | None:
        header = get_authorization_header(request)
        if not header:
            return None
        token = _bearer_token(header)
        counter = self.counter(token_prefix(token)) if self.counter else None
        found = key_lookup(token, counter=counter)
        key = found.key
        if key is None or not key.matches(token):
            raise AuthenticationFailed(INVALID)
        if not key.is_active:
            log.info("refused revoked api key %s", prefix_fingerprint(key.prefix))
            raise AuthenticationFailed(INVALID)
        if is_sandbox_token(token) != key.practice.sandbox:
            # Cannot happen through the services (the flag changes only without an active
            # key); if the flag was changed behind their back, the key stops, rather than a
            # test key writing into the registry or a live key into a sandbox.
            log.warning(
                "refused api key %s: its kind no longer fits its practice",
                prefix_fingerprint(key.prefix),
            )
            raise AuthenticationFailed(INVALID)
        if found.first_use_this_minute is not False:
            key_mark_used(key=key)
        return KeyPrincipal(key, found.count), key

    def authenticate_header(self, request: Request) -> str:
        return SCHEME


def _bearer_token(header: bytes) -> str:
    parts = header.split()
    if not parts or parts[0].lower() != SCHEME.lower().encode():
        raise AuthenticationFailed(
            "Unsupported authorization scheme: send Authorization: Bearer <API key>."
        )
    if len(parts) != 2:
        raise AuthenticationFailed("Malformed Authorization header: expected Bearer <API key>.")
    try:
        token = parts[1].decode("ascii")
    except UnicodeDecodeError:
        raise AuthenticationFailed("Malformed API key.") from None
    if not is_well_formed(token):
        raise AuthenticationFailed(
            "Malformed API key: expected rgk_ (or rgk_test_) and 40 letters or digits."
        )
    return token
