"""The mapping core is pure: these tests need no database, cache or Django settings."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_cache() -> None:
    """Overrides the suite-wide cache reset (tests/conftest.py): nothing here uses a cache."""
