"""``Authorization: Bearer rgk_...`` for the API, as a DRF authentication class.

Every request looks its key up by prefix in the database and compares the SHA-256 digest
in constant time. Nothing is cached in the process, so a revocation or rotation holds from
the next request in every web process. Diagnostics never repeat the presented token.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.request import Request

from keys.models import ApiKey, is_sandbox_token, is_well_formed
from keys.selectors import key_for_token
from keys.services import key_mark_used
from registry.models import Practice

log = logging.getLogger(__name__)

SCHEME = "Bearer"
INVALID = "Invalid or revoked API key."


@dataclass(frozen=True)
class KeyPrincipal:
    """``request.user`` for a request made with an API key: the key, acting for its practice."""

    key: ApiKey
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
    401; a header that is present but wrong is refused here, also with 401.
    """

    def authenticate(self, request: Request) -> tuple[KeyPrincipal, ApiKey] | None:
        header = get_authorization_header(request)
        if not header:
            return None
        token = _bearer_token(header)
        key = key_for_token(token)
        if key is None or not key.matches(token):
            raise AuthenticationFailed(INVALID)
        if not key.is_active:
            log.info("refused revoked api key %s", key.prefix)
            raise AuthenticationFailed(INVALID)
        if is_sandbox_token(token) != key.practice.sandbox:
            # Cannot happen through the services (the flag changes only without an active
            # key); if the flag was changed behind their back, the key stops, rather than a
            # test key writing into the registry or a live key into a sandbox.
            log.warning("refused api key %s: its kind no longer fits its practice", key.prefix)
            raise AuthenticationFailed(INVALID)
        key_mark_used(key=key)
        return KeyPrincipal(key), key

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
