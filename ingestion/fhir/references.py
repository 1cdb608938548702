"""Resolving a Reference to an entry of the same Bundle.

A reference may be the target entry's ``fullUrl`` (``urn:uuid:...`` or an absolute URL),
a relative ``Type/id``, or an absolute URL ending in ``/Type/id`` (optionally followed by
``/_history/<version>``). The ``fullUrl`` match is tried first because it is exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

Target = TypeVar("Target")


class ReferenceIndex(Generic[Target]):
    """Maps the ways a document can point at an entry to what the mapping knows of it."""

    __slots__ = ("_by_full_url", "_by_id", "_resource_type")

    def __init__(self, resource_type: str) -> None:
        self._resource_type = resource_type
        self._by_full_url: dict[str, Target] = {}
        self._by_id: dict[str, Target] = {}

    def add(self, entry: Mapping[str, Any], resource: Mapping[str, Any], target: Target) -> None:
        """Register an entry; the first entry claiming a fullUrl or id keeps it."""
        full_url = entry.get("fullUrl")
        if isinstance(full_url, str) and full_url:
            self._by_full_url.setdefault(full_url, target)
        resource_id = resource.get("id")
        if isinstance(resource_id, str) and resource_id:
            self._by_id.setdefault(resource_id, target)

    def resolve(self, reference: object) -> Target | None:
        if not isinstance(reference, str) or not reference:
            return None
        found = self._by_full_url.get(reference)
        if found is not None:
            return found
        resource_id = _typed_id(reference, self._resource_type)
        return self._by_id.get(resource_id) if resource_id is not None else None


def _typed_id(reference: str, resource_type: str) -> str | None:
    parts = reference.rsplit("/", 4)
    if len(parts) >= 4 and parts[-2] == "_history":
        parts = parts[:-2]
    if len(parts) >= 2 and parts[-2] == resource_type and parts[-1]:
        return parts[-1]
    return None
