"""Staged payloads: compressed, encrypted, bound to their ingestion and position."""

from __future__ import annotations

import uuid

import pytest

from ingestion.intake.staging import UnreadablePayload, decrypt_chunk, encrypt_chunk

PAYLOAD = b'{"resourceType": "Bundle", "entry": []}' * 100


def test_a_chunk_round_trips():
    ingestion = uuid.uuid4()
    assert (
        decrypt_chunk(
            encrypt_chunk(PAYLOAD, ingestion_id=ingestion, seq=3), ingestion_id=ingestion, seq=3
        )
        == PAYLOAD
    )


def test_the_stored_bytes_are_smaller_and_unreadable():
    sealed = encrypt_chunk(PAYLOAD, ingestion_id=uuid.uuid4(), seq=0)
    assert len(sealed) < len(PAYLOAD) / 5
    assert b"Bundle" not in sealed


def test_a_chunk_moved_to_another_ingestion_or_position_does_not_decrypt():
    ingestion = uuid.uuid4()
    sealed = encrypt_chunk(PAYLOAD, ingestion_id=ingestion, seq=0)
    with pytest.raises(UnreadablePayload):
        decrypt_chunk(sealed, ingestion_id=uuid.uuid4(), seq=0)
    with pytest.raises(UnreadablePayload):
        decrypt_chunk(sealed, ingestion_id=ingestion, seq=1)


def test_another_key_cannot_read_it(settings):
    ingestion = uuid.uuid4()
    sealed = encrypt_chunk(PAYLOAD, ingestion_id=ingestion, seq=0)
    settings.REGISTRY_PAYLOAD_KEY = "another-key-" + "x7Q" * 12
    with pytest.raises(UnreadablePayload):
        decrypt_chunk(sealed, ingestion_id=ingestion, seq=0)
