"""``GET /api/registry/fhir/metadata``: the FHIR R4 CapabilityStatement of this service.

FHIR clients (fhirclient's ``prepare()``, HAPI, Postman's FHIR mode) read it before anything
else, so it is served without a key, as FHIR servers do. It says what the service really
does and nothing more: Bundles are submitted (``create`` on Bundle, or a POST of the Bundle
to the base), the answer is asynchronous (202 and a status URL), and every call needs a
per-practice Bearer key. The extension URLs it names are documented in ``docs/api.md``.
"""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from ingestion.api import schema
from ingestion.api.unsupported import FhirView

FHIR_VERSION = "4.0.1"
SOFTWARE = "Birth Registry Ingestion API"
RELEASE_DATE = "2026-11-24"


def api_base(request: Request) -> str:
    """The absolute FHIR base of this service, without a trailing slash."""
    return request.build_absolute_uri(reverse("fhir-base")).rstrip("/")


def capability_statement(base: str) -> dict[str, Any]:
    """The CapabilityStatement for the FHIR base ``base`` (absolute, no trailing slash)."""
    return {
        "resourceType": "CapabilityStatement",
        "url": f"{base}/metadata",
        "name": "BirthRegistryIngestion",
        "title": "Birth registry ingestion of FHIR R4 BFDR Bundles",
        "status": "active",
        "experimental": False,
        "date": RELEASE_DATE,
        "publisher": "Birth registry",
        "description": (
            "Asynchronous ingestion of FHIR R4 BFDR Bundles (one course of care, a batch of "
            "them, retractions, NVSS submission, update and void messages). A submission is "
            "answered 202 with an OperationOutcome and a Content-Location status URL; poll it "
            "until the ingestion is completed or failed. There is no read or search of "
            "records."
        ),
        "kind": "instance",
        "software": {"name": SOFTWARE, "releaseDate": RELEASE_DATE},
        "implementation": {"description": SOFTWARE, "url": base},
        "fhirVersion": FHIR_VERSION,
        "format": ["application/fhir+json", "json"],
        "rest": [_rest(base)],
    }


def _rest(base: str) -> dict[str, Any]:
    return {
        "mode": "server",
        "documentation": (
            "POST a Bundle to [base]/Bundle or to [base] itself (as FHIR clients send batch "
            "and transaction Bundles); both are the same operation. The 202 OperationOutcome "
            f"names the ingestion in issue extensions ({base}/StructureDefinition/"
            "ingestion-id and .../ingestion-status-url) and in Content-Location. GET the "
            "status URL ([base]/ingestions/{id}) for the receipt; while it is queued or "
            "processing the answer carries Retry-After and X-Progress. POST a Bundle to "
            "[base]/Bundle/$validate to check it and see what submitting it would do, at once "
            "and with nothing stored. A call this service does not offer answers an "
            "OperationOutcome (not-supported): 405 with Allow for a method, 404 for a path."
        ),
        "security": _security(),
        "resource": [_bundle_resource()],
        "interaction": [
            {
                "code": "batch",
                "documentation": "A batch Bundle of document Bundles (one course of care each) "
                "or of DELETE entries naming chart numbers, accepted asynchronously.",
            },
            {
                "code": "transaction",
                "documentation": "Treated as a batch: each course of care is applied on its "
                "own, so a transaction Bundle is not all-or-nothing here.",
            },
        ],
    }


def _security() -> dict[str, Any]:
    return {
        "cors": False,
        # No restful-security-service code fits a static per-practice bearer key (OAuth and
        # SMART would send clients looking for authorization endpoints), so text only.
        "service": [{"text": "Bearer API key (per practice, static; no OAuth flow)"}],
        "description": (
            "Every call except this one needs Authorization: Bearer <API key>. Keys are per "
            "practice (rgk_...), minted in the registry's settings area, and carry the scopes "
            "ingest:write (submit) and ingest:read (poll). There is no OAuth flow: the key is "
            "used as a static bearer token."
        ),
    }


def _bundle_resource() -> dict[str, Any]:
    return {
        "type": "Bundle",
        "profile": "http://hl7.org/fhir/StructureDefinition/Bundle",
        "supportedProfile": [
            "http://hl7.org/fhir/us/bfdr/StructureDefinition/Bundle-document-provider-live-birth-report",
            "http://hl7.org/fhir/us/bfdr/StructureDefinition/Bundle-document-provider-fetal-death-report",
        ],
        "documentation": (
            "create accepts a document Bundle (one course of care), a batch of them, "
            "retractions, or an NVSS message Bundle. The answer is 202 Accepted, never 201: "
            "records are mapped afterwards and reported in the ingestion receipt."
        ),
        "interaction": [{"code": "create", "documentation": "Asynchronous: 202 and a status URL."}],
        "operation": [
            {
                "name": "validate",
                "definition": "http://hl7.org/fhir/OperationDefinition/Resource-validate",
                "documentation": (
                    "POST [base]/Bundle/$validate with a Bundle as the body (no Parameters "
                    "wrapper, no mode or profile): answered at once, 200 and an "
                    "OperationOutcome, and nothing is stored. The same checks, mapping and "
                    "structural validation as a submission; per course of care one "
                    "information issue saying what a submission would do now (would create, "
                    "would amend (version N), would be flagged as a suspected duplicate, "
                    "would be rejected: ..., would retract). At most 1000 entries at once."
                ),
            }
        ],
        "versioning": "no-version",
        "readHistory": False,
        "updateCreate": False,
        "conditionalCreate": False,
        "conditionalUpdate": False,
        "conditionalDelete": "not-supported",
    }


class CapabilityView(FhirView):
    """No key needed: a FHIR client reads this before it knows how to authenticate."""

    what = "metadata"
    takes = "The CapabilityStatement is read with GET, without a key."

    @extend_schema(**schema.metadata)
    def get(self, request: Request) -> Response:
        return Response(capability_statement(api_base(request)))
