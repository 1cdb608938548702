"""API keys: one active key per practice, stored as a lookup prefix and a SHA-256 digest.

The raw token (``rgk_`` + 40 base62 characters; ``rgk_test_`` + 40 for a sandbox practice)
exists only in the response that minted it. Base62 has no ``_``, so no live token can start
``rgk_test_``: the kind of a key is plain from its first characters, in a log or a config
file. The token's start and its next 8 characters are the lookup prefix, which is not
secret: it is shown in the settings page, the admin and the audit trail so that people can
tell keys apart.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import string

from django.conf import settings
from django.db import models
from django.utils import timezone

from registry.models import Practice

INGEST_WRITE = "ingest:write"
INGEST_READ = "ingest:read"
SCOPES = (INGEST_WRITE, INGEST_READ)
SCOPE_CHOICES = [
    (INGEST_WRITE, "ingest:write: submit Bundles"),
    (INGEST_READ, "ingest:read: read ingestion receipts"),
]

TOKEN_START = "rgk_"  # noqa: S105 (the public marker, not a secret)
SANDBOX_TOKEN_START = "rgk_test_"  # noqa: S105 (likewise)
TOKEN_RANDOM_LENGTH = 40
PREFIX_RANDOM_LENGTH = 8
PREFIX_LENGTH = len(SANDBOX_TOKEN_START) + PREFIX_RANDOM_LENGTH  # the longer of the two
TOKEN_PATTERN = re.compile(rf"{TOKEN_START}(?:test_)?[0-9A-Za-z]{{{TOKEN_RANDOM_LENGTH}}}\Z")
_BASE62 = string.digits + string.ascii_letters


def new_token(*, sandbox: bool = False) -> str:
    """``rgk_`` (or ``rgk_test_``) + 40 base62 characters from ``secrets``: about 238 bits."""
    start = SANDBOX_TOKEN_START if sandbox else TOKEN_START
    return start + "".join(secrets.choice(_BASE62) for _ in range(TOKEN_RANDOM_LENGTH))


def token_digest(token: str) -> str:
    """Plain SHA-256: the token is random, so a slow password hash would only cost requests."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def is_sandbox_token(token: str) -> bool:
    return token.startswith(SANDBOX_TOKEN_START)


def token_prefix(token: str) -> str:
    start = SANDBOX_TOKEN_START if is_sandbox_token(token) else TOKEN_START
    return token[: len(start) + PREFIX_RANDOM_LENGTH]


def prefix_fingerprint(prefix: str) -> str:
    """How a log line names a key: 8 hex digits of its prefix's SHA-256.

    A prefix is enough to aim forged tokens at a key (they are refused, and spend nothing of
    its limit, but they fill its logs), so logs do not hand it out. 32 bits are enough to
    match a line to a known key, and too few to recover the prefix: about 50,000 prefixes
    share each fingerprint.
    """
    return hashlib.sha256(prefix.encode("ascii")).hexdigest()[:8]


def is_well_formed(token: str) -> bool:
    return TOKEN_PATTERN.match(token) is not None


class ApiKey(models.Model):
    """A practice's API key. Active until ``revoked_at`` is set; keys never expire."""

    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="api_keys")
    prefix = models.CharField(max_length=PREFIX_LENGTH, unique=True)
    digest = models.CharField(max_length=64)
    scopes = models.JSONField(default=list)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    revoked_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API key"
        ordering = ["-created_at"]
        constraints = [
            # Enforced by the database so that two concurrent mints cannot both win.
            models.UniqueConstraint(
                fields=["practice"],
                condition=models.Q(revoked_at__isnull=True),
                name="one_active_key_per_practice",
            )
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.practice})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def has_scope(self, scope: str) -> bool:
        return scope in self.scopes

    def matches(self, token: str) -> bool:
        """Constant-time comparison, so response time says nothing about the digest."""
        return hmac.compare_digest(self.digest, token_digest(token))


class KeyEvent(models.Model):
    """The audit trail: every mint, rotation and revocation, who did it and how."""

    class Action(models.TextChoices):
        MINT = "mint", "Minted"
        ROTATE = "rotate", "Rotated"
        REVOKE = "revoke", "Revoked"

    class Via(models.TextChoices):
        SETTINGS = "settings", "Settings page"
        ADMIN = "admin", "Admin"
        COMMAND = "command", "Management command"

    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="key_events")
    key = models.ForeignKey(
        ApiKey, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    action = models.CharField(max_length=10, choices=Action.choices)
    via = models.CharField(max_length=10, choices=Via.choices)
    by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # Kept as text too, so the trail still says who after a user is deleted.
    by_username = models.CharField(max_length=150, blank=True)
    key_prefix = models.CharField(max_length=PREFIX_LENGTH)
    # For a rotation: the key it replaced (``key_prefix`` is the new one).
    previous_prefix = models.CharField(max_length=PREFIX_LENGTH, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["practice", "-at"], name="keyevent_practice_at")]

    def __str__(self) -> str:
        return f"{self.get_action_display()} {self.key_prefix}… ({self.practice})"
