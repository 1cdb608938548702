from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson
import pytest
from django.test import Client

from keys.models import INGEST_READ, INGEST_WRITE, KeyEvent
from keys.services import key_mint
from registry.models import Practice

SUBMIT_URL = "/api/registry/fhir/Bundle"
VALIDATE_URL = "/api/registry/fhir/Bundle/$validate"


@dataclass
class Api:
    """A client holding one practice's API key."""

    client: Client
    token: str
    practice: Practice

    def submit(
        self,
        body: Any,
        *,
        content_type: str = "application/fhir+json",
        idempotency_key: str | None = None,
        token: str | None = None,
    ):
        data = body if isinstance(body, bytes | str) else orjson.dumps(body)
        headers = {"Authorization": f"Bearer {token or self.token}"}
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        # CONTENT_TYPE in the environ too: the test client drops it for an empty body.
        return self.client.post(
            SUBMIT_URL,
            data=data,
            content_type=content_type,
            headers=headers,
            CONTENT_TYPE=content_type,
        )

    def validate(
        self, body: Any, *, content_type: str = "application/fhir+json", token: str | None = None
    ):
        """``POST Bundle/$validate``: what submitting ``body`` would do now."""
        data = body if isinstance(body, bytes | str) else orjson.dumps(body)
        return self.client.post(
            VALIDATE_URL,
            data=data,
            content_type=content_type,
            headers={"Authorization": f"Bearer {token or self.token}"},
            CONTENT_TYPE=content_type,
        )

    def receipt(self, ingestion_id: str, *, token: str | None = None):
        response = self.client.get(
            f"/api/registry/fhir/ingestions/{ingestion_id}",
            headers={"Authorization": f"Bearer {token or self.token}"},
        )
        if response.streaming:  # a finished receipt of over a chunk is streamed: read it here
            body = b"".join(response.streaming_content)
            response.json = lambda: orjson.loads(body)
        else:
            body = response.content
        response.body = body  # as sent, whole or streamed
        return response


def ingestion_id_of(response) -> str:
    return response["Content-Location"].rstrip("/").rsplit("/", 1)[-1]


def mint(practice: Practice, scopes=(INGEST_WRITE, INGEST_READ)) -> str:
    return key_mint(practice=practice, scopes=list(scopes), via=KeyEvent.Via.COMMAND)[1]


@pytest.fixture
def api(practice, client) -> Api:
    return Api(client, mint(practice), practice)


@pytest.fixture
def other_api(other_practice, client) -> Api:
    return Api(client, mint(other_practice), other_practice)
