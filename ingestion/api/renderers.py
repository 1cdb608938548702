"""FHIR JSON out, whatever the client's Accept header says."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from rest_framework.negotiation import BaseContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request


class FhirJsonRenderer(BaseRenderer):
    media_type = "application/fhir+json"
    format = "json"
    charset = None  # JSON is UTF-8 by definition (RFC 8259)

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        if data is None:
            return b""
        return orjson.dumps(data)


class FhirOnlyNegotiation(BaseContentNegotiation):
    """Always answer FHIR JSON: a 406 for ``Accept: application/json`` would help nobody."""

    def select_parser(self, request: Request, parsers: Any) -> Any:
        return parsers[0] if parsers else None

    def select_renderer(
        self, request: Request, renderers: Any, format_suffix: str | None = None
    ) -> tuple[Any, str]:
        return renderers[0], renderers[0].media_type
