"""Staged payloads are compressed, then encrypted at rest with REGISTRY_PAYLOAD_KEY.

zlib at level 1 shrinks FHIR JSON five to twenty times for little CPU, which is most of the
cost of staging a large batch (PostgreSQL writing the bytes); compressing before encrypting
is safe here because nobody can observe the stored length. The key is derived from the
setting with HKDF so the setting can be any long random string, and AES-256-GCM seals each
chunk with associated data binding it to its ingestion and position: a chunk copied to
another ingestion or reordered does not decrypt.
"""

from __future__ import annotations

import os
import zlib
from functools import lru_cache
from uuid import UUID

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

NONCE_BYTES = 12
FORMAT_VERSION = b"\x01"  # zlib, then AES-256-GCM
COMPRESSION_LEVEL = 1


class UnreadablePayload(Exception):
    """The staged payload cannot be decrypted (wrong key, or tampered with)."""


@lru_cache(maxsize=4)
def _cipher(secret: str) -> AESGCM:
    key = HKDF(
        algorithm=hashes.SHA256(), length=32, salt=None, info=b"registry/staged-payload/v1"
    ).derive(secret.encode())
    return AESGCM(key)


def _associated_data(ingestion_id: UUID, seq: int) -> bytes:
    return f"{ingestion_id}:{seq}".encode()


def encrypt_chunk(plaintext: bytes, *, ingestion_id: UUID, seq: int) -> bytes:
    nonce = os.urandom(NONCE_BYTES)
    sealed = _cipher(settings.REGISTRY_PAYLOAD_KEY).encrypt(
        nonce, zlib.compress(plaintext, COMPRESSION_LEVEL), _associated_data(ingestion_id, seq)
    )
    return FORMAT_VERSION + nonce + sealed


def decrypt_chunk(blob: bytes, *, ingestion_id: UUID, seq: int) -> bytes:
    if blob[:1] != FORMAT_VERSION:
        raise UnreadablePayload("unknown staged payload format")
    nonce, sealed = blob[1 : 1 + NONCE_BYTES], blob[1 + NONCE_BYTES :]
    try:
        compressed = _cipher(settings.REGISTRY_PAYLOAD_KEY).decrypt(
            nonce, sealed, _associated_data(ingestion_id, seq)
        )
    except InvalidTag:
        raise UnreadablePayload(
            "staged payload does not decrypt with REGISTRY_PAYLOAD_KEY"
        ) from None
    return zlib.decompress(compressed)
