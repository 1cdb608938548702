"""Shared fixtures. The suite runs on real PostgreSQL and Redis (see the Makefile)."""

from __future__ import annotations

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _clean_cache() -> None:
    """Each test starts with an empty cache, so rate-limit counters don't leak between tests."""
    cache.clear()
