"""The API tests share the ingestion tests' key-holding client."""

from tests.ingestion.conftest import api  # noqa: F401
