"""FHIR answers for every call under ``/api/registry/fhir/`` that the service does not support.

Never HTML and never an empty body (except where HTTP itself forbids a body: HEAD):

* a known path with a method it does not take: 405, an OperationOutcome ``not-supported``
  saying what the path does take, and ``Allow`` listing it (``GET``, ``PUT``, ``DELETE`` or
  ``PATCH`` on ``Bundle``; anything on ``Bundle/{id}``, which holds nothing to read, update
  or delete; ``DELETE`` on an ingestion). The method is checked before the key: what a path
  takes is public, as the CapabilityStatement says it anyway;
* any other path or resource type: 404, ``not-supported``, naming what the service offers.

``HEAD`` is answered wherever ``GET`` is (``metadata``, an ingestion), as HTTP requires, and
is 405 elsewhere. ``OPTIONS`` on a known path answers 200 with ``Allow`` and an
``information`` OperationOutcome saying the same, without a key.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from ingestion.api.errors import FhirError
from ingestion.fhir.outcome import error_outcome

OFFERED = (
    "This FHIR endpoint offers: POST [base]/Bundle (or POST [base]) to submit a Bundle, "
    "POST [base]/Bundle/$validate to check one, GET [base]/ingestions/{id} for a receipt, "
    "and GET [base]/metadata."
)
KNOWN_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}


class FhirView(APIView):
    """A path of the FHIR API: methods it does not take are 405 before anything else.

    ``what`` names the path in answers; ``takes`` says in words what it does take.
    """

    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []
    what = "this path"
    takes = ""

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        method = (request.method or "").upper()
        if method not in self.allowed_methods:
            raise self.method_not_supported(method)
        if method == "OPTIONS":
            return  # answered without a key: see the module docstring
        super().initial(request, *args, **kwargs)

    def method_not_supported(self, method: str) -> FhirError:
        named = method if method in KNOWN_METHODS else "This method"
        allowed = ", ".join(self.allowed_methods)
        return FhirError(
            405,
            "not-supported",
            f"{named} is not supported on {self.what}. {self.takes} Allowed: {allowed}.",
            headers={"Allow": allowed},
        )

    def options(self, request: Any, *args: Any, **kwargs: Any) -> Response:
        allowed = ", ".join(self.allowed_methods)
        outcome = error_outcome(
            "informational",
            f"{self.what[:1].upper()}{self.what[1:]} allows {allowed}. {self.takes}".strip(),
            severity="information",
        )
        return Response(outcome)


@extend_schema(exclude=True)
class BundleInstanceView(FhirView):
    """``[base]/Bundle/{id}``: the service keeps no Bundle to read, update or delete."""

    what = "a Bundle by id"
    takes = (
        "This service keeps no submitted Bundle to read, update or delete: a Bundle becomes "
        "records, and what became of it is read at the status URL its 202 named "
        "([base]/ingestions/{id}). Submit with POST [base]/Bundle, without an id."
    )


@extend_schema(exclude=True)
class NotSupportedView(APIView):
    """Every other path under the base: 404 ``not-supported``, with any method."""

    authentication_classes: list[Any] = []
    permission_classes: list[Any] = []

    @property
    def default_response_headers(self) -> dict[str, str]:
        return {}  # no Allow: there is nothing here to allow

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        raise FhirError(
            404,
            "not-supported",
            f"No such resource type, operation or path under /api/registry/fhir/. {OFFERED}",
        )
