"""The OpenAPI 3.1 description of the two endpoints (served at ``/openapi.json``).

drf-spectacular discovers the paths; this module supplies what it cannot: the FHIR bodies as
named components, every status code with its OperationOutcome, the headers, the bearer
scheme with its scopes, and realistic examples.
"""

from __future__ import annotations

from typing import Any, get_args

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema

from ingestion.fhir.outcome import IssueCode

SCHEME = "registryApiKey"
FHIR_JSON = "application/fhir+json"


def ref(name: str) -> dict[str, str]:
    return {"$ref": f"#/components/schemas/{name}"}


ISSUE_CODES = sorted(get_args(IssueCode))

COMPONENTS: dict[str, dict[str, Any]] = {
    "OperationOutcome": {
        "type": "object",
        "description": "Every error body, the 202 body, and each per-record rejection.",
        "required": ["resourceType", "issue"],
        "properties": {
            "resourceType": {"const": "OperationOutcome"},
            "issue": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["severity", "code", "diagnostics"],
                    "properties": {
                        "severity": {
                            "type": "string",
                            "enum": ["fatal", "error", "warning", "information"],
                        },
                        "code": {
                            "type": "string",
                            "description": "FHIR issue type. Used here: " + ", ".join(ISSUE_CODES),
                        },
                        "diagnostics": {
                            "type": "string",
                            "description": "Human-readable; never echoes submitted values.",
                        },
                        "expression": {
                            "type": "array",
                            "items": {"type": "string"},
                            "description": "The element at fault, e.g. Bundle.resourceType.",
                        },
                    },
                },
            },
        },
    },
    "Bundle": {
        "type": "object",
        "description": (
            "A FHIR R4 BFDR Bundle. The submit call checks only what this schema says: a JSON "
            "object whose `resourceType` is `Bundle` (anything else is 400). Everything else "
            "is checked per course of care after the 202, and a course that breaks a rule "
            "appears in the receipt's `outcome.rejected` with an OperationOutcome naming the "
            "element at fault.\n\n"
            "Shapes:\n"
            "* one course of care: `type` `document`, the mother and child Patients, "
            "Observations, Practitioners, Encounters and a Consent directly in `entry[]`;\n"
            "* a batch: each `entry[].resource` is an inner Bundle holding one course of "
            "care (non-Bundle entries are ignored);\n"
            "* retractions: a course whose Composition has `status` `entered-in-error`, or a "
            "`transaction`/`batch` entry with `request.method` `DELETE` and `request.url` "
            "`Bundle?identifier=[system|]VALUE` or `Bundle/VALUE`;\n"
            "* an NVSS message Bundle (`type` `message`) is unwrapped to the document it "
            "carries.\n\n"
            "Fields read: `identifier.value` (the chart number, `external_record_id`, unique "
            "per practice; required), `meta.lastUpdated` or `timestamp` (ISO 8601 with offset; "
            "the stale-update guard), and in each course the Patients' `meta.profile` (roles "
            "and the IG version after `|`), Observations by LOINC code (birth weight 8339-4; "
            "gestational age 11884-4, 18185-9, 49051-6; Apgar 9272-6, 9274-2, 9271-8), "
            "Practitioners, Encounter participants (`ATND` attends) and transfers "
            "(`hosp-trans`, `other-hcf`), and the first Consent."
        ),
        "required": ["resourceType"],
        "properties": {"resourceType": {"const": "Bundle"}},
    },
    "AcceptedEntry": {
        "type": "object",
        "required": ["reference", "submission_uuid", "external_record_id"],
        "properties": {
            "reference": {
                "type": "string",
                "description": "Bundle for one course of care, Bundle.entry[i] in a batch.",
            },
            "submission_uuid": {"type": "string", "format": "uuid"},
            "external_record_id": {"type": "string"},
            "amended": {
                "type": "boolean",
                "description": "True when a record already on file was corrected (or re-sent "
                "after it was voided).",
            },
            "version": {"type": "integer", "description": "Present on amendments."},
            "suspected_duplicate": {
                "type": "boolean",
                "description": "Present and true when the record is flagged for review.",
            },
            "voided": {
                "type": "boolean",
                "description": "Present and true on a retraction (also a repeated one).",
            },
        },
    },
    "RejectedEntry": {
        "type": "object",
        "required": ["reference", "operation_outcome"],
        "properties": {
            "reference": {"type": "string"},
            "external_record_id": {"type": "string"},
            "operation_outcome": ref("OperationOutcome"),
        },
    },
    "IngestionReceipt": {
        "type": "object",
        "required": ["id", "status", "accepted", "rejected", "outcome", "completedAt"],
        "properties": {
            "id": {"type": "string", "format": "uuid"},
            "status": {"type": "string", "enum": ["queued", "processing", "completed", "failed"]},
            "accepted": {"type": "integer", "minimum": 0},
            "rejected": {"type": "integer", "minimum": 0},
            "outcome": {
                "description": "null while queued or processing, and when a finished ingestion "
                "has no per-record entries.",
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "required": ["accepted", "rejected"],
                        "properties": {
                            "accepted": {"type": "array", "items": ref("AcceptedEntry")},
                            "rejected": {"type": "array", "items": ref("RejectedEntry")},
                        },
                    },
                ],
            },
            "completedAt": {
                "type": ["string", "null"],
                "format": "date-time",
                "description": "When it completed or failed; null until then.",
            },
        },
    },
}

EXAMPLE_BUNDLE: dict[str, Any] = {
    "resourceType": "Bundle",
    "type": "document",
    "identifier": {"system": "urn:example:chart", "value": "2026-000123"},
    "meta": {"lastUpdated": "2026-11-20T14:05:00+00:00"},
    "entry": [
        {
            "fullUrl": "urn:uuid:5a2b6c1e-0000-4000-8000-000000000001",
            "resource": {
                "resourceType": "Patient",
                "id": "mother",
                "meta": {
                    "profile": [
                        "http://hl7.org/fhir/us/vr-common-library/StructureDefinition/"
                        "Patient-mother-vr|2.0.0"
                    ]
                },
                "name": [{"use": "official", "family": "Example", "given": ["Alex"]}],
                "birthDate": "1994-03-02",
                "address": [{"postalCode": "02139"}],
            },
        },
        {
            "fullUrl": "urn:uuid:5a2b6c1e-0000-4000-8000-000000000002",
            "resource": {
                "resourceType": "Patient",
                "id": "child",
                "meta": {
                    "profile": [
                        "http://hl7.org/fhir/us/vr-common-library/StructureDefinition/"
                        "Patient-child-vr|2.0.0"
                    ]
                },
                "gender": "female",
                "birthDate": "2026-11-19",
            },
        },
        {
            "resource": {
                "resourceType": "Observation",
                "status": "final",
                "code": {"coding": [{"system": "http://loinc.org", "code": "8339-4"}]},
                "subject": {"reference": "Patient/child"},
                "valueQuantity": {
                    "value": 3320,
                    "unit": "g",
                    "system": "http://unitsofmeasure.org",
                    "code": "g",
                },
            },
        },
        {
            "resource": {
                "resourceType": "Observation",
                "status": "final",
                "code": {"coding": [{"system": "http://loinc.org", "code": "11884-4"}]},
                "subject": {"reference": "Patient/child"},
                "valueQuantity": {"value": 39, "unit": "wk", "code": "wk"},
            },
        },
        {
            "resource": {
                "resourceType": "Observation",
                "status": "final",
                "code": {"coding": [{"system": "http://loinc.org", "code": "9274-2"}]},
                "subject": {"reference": "Patient/child"},
                "valueInteger": 9,
            },
        },
        {
            "resource": {
                "resourceType": "Practitioner",
                "id": "pr-1",
                "identifier": [
                    {"system": "urn:example:staff", "value": "MW-0042"},
                    {"system": "http://hl7.org/fhir/sid/us-npi", "value": "1234567893"},
                ],
                "name": [{"text": "Sam Rivera", "suffix": ["CNM"]}],
                "qualification": [{"code": {"text": "Certified Nurse Midwife"}}],
            },
        },
        {
            "resource": {
                "resourceType": "Encounter",
                "status": "finished",
                "participant": [
                    {
                        "type": [
                            {
                                "coding": [
                                    {
                                        "system": "http://terminology.hl7.org/CodeSystem/"
                                        "v3-ParticipationType",
                                        "code": "ATND",
                                    }
                                ]
                            }
                        ],
                        "individual": {"reference": "Practitioner/pr-1"},
                    }
                ],
            },
        },
        {
            "resource": {
                "resourceType": "Consent",
                "status": "active",
                "dateTime": "2026-11-19T08:00:00+00:00",
            }
        },
    ],
}

EXAMPLE_RECEIPT = {
    "id": "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10",
    "status": "completed",
    "accepted": 2,
    "rejected": 1,
    "outcome": {
        "accepted": [
            {
                "reference": "Bundle.entry[0]",
                "submission_uuid": "6a0e4f0e-0d5c-4a8e-8f2b-1c9d2e3f4a5b",
                "external_record_id": "2026-000123",
                "amended": False,
                "suspected_duplicate": True,
            },
            {
                "reference": "Bundle.entry[1]",
                "submission_uuid": "1f2e3d4c-5b6a-4798-8a7b-6c5d4e3f2a1b",
                "external_record_id": "2026-000124",
                "amended": True,
                "version": 2,
            },
        ],
        "rejected": [
            {
                "reference": "Bundle.entry[2]",
                "external_record_id": "2026-000125",
                "operation_outcome": {
                    "resourceType": "OperationOutcome",
                    "issue": [
                        {
                            "severity": "error",
                            "code": "structure",
                            "diagnostics": "No mother Patient: a course of care needs exactly one.",
                            "expression": ["Bundle.entry[2].resource"],
                        }
                    ],
                },
            }
        ],
    },
    "completedAt": "2026-11-22T09:30:12.482113+00:00",
}


def _outcome_example(
    status: int, code: str, diagnostics: str, expression: str | None = None
) -> OpenApiExample:
    issue: dict[str, Any] = {"severity": "error", "code": code, "diagnostics": diagnostics}
    if expression:
        issue["expression"] = [expression]
    return OpenApiExample(
        f"{status} {code}",
        value={"resourceType": "OperationOutcome", "issue": [issue]},
        response_only=True,
        status_codes=[str(status)],
        media_type="application/fhir+json",
    )


def _error(
    status: int, description: str, code: str, diagnostics: str, expression: str | None = None
) -> OpenApiResponse:
    return OpenApiResponse(
        response=ref("OperationOutcome"),
        description=description,
        examples=[_outcome_example(status, code, diagnostics, expression)],
    )


RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    response=[429],
    description="Seconds until the rate-limit window resets.",
)
WWW_AUTHENTICATE = OpenApiParameter(
    "WWW-Authenticate",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    response=[401],
    description="Always `Bearer`.",
)

COMMON_ERRORS = {
    401: _error(
        401,
        "Missing, malformed, unknown or revoked API key.",
        "login",
        "Invalid or revoked API key.",
    ),
    429: _error(
        429,
        "More than 120 requests per minute with this key to this endpoint.",
        "throttled",
        "Rate limit exceeded: at most 120 requests per minute per key for this endpoint. "
        "Retry after 17 seconds.",
    ),
}

submit = extend_schema(
    operation_id="submitBundle",
    summary="Submit a FHIR R4 BFDR Bundle for asynchronous ingestion",
    description=(
        "Checks the request (Content-Type, size, JSON, resourceType Bundle), stages the "
        "payload encrypted, queues it and answers 202 at once; records are mapped afterwards. "
        "Poll the status URL in `Content-Location`. Scope: `ingest:write`.\n\n"
        "**Idempotency-Key**: scoped to the practice and the whole request. The first POST "
        "with a key creates the ingestion; any later POST with that key from the same "
        "practice gets the original 202 and Content-Location, without re-ingesting, even "
        "with a different body. Keys are kept as long as their ingestion (at least 24 hours).\n\n"
        "**Rate limit**: 120 requests per minute per key, counted in the shared cache across "
        "all web processes. If the cache is unreachable the limiter fails open (the "
        "submission is accepted and the event is logged) rather than refuse data."
    ),
    tags=["FHIR"],
    request={"application/fhir+json": ref("Bundle"), "application/json": ref("Bundle")},
    parameters=[
        OpenApiParameter(
            "Idempotency-Key",
            {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[ -~]+$"},
            OpenApiParameter.HEADER,
            required=False,
            description="1 to 255 printable ASCII characters, chosen by the client.",
        ),
        OpenApiParameter(
            "Content-Location",
            OpenApiTypes.URI,
            OpenApiParameter.HEADER,
            response=[202],
            description="Absolute status URL; its last path segment is the ingestion id.",
        ),
        RETRY_AFTER,
        WWW_AUTHENTICATE,
    ],
    examples=[
        OpenApiExample(
            "One course of care",
            value=EXAMPLE_BUNDLE,
            request_only=True,
            media_type="application/fhir+json",
        ),
    ],
    responses={
        202: OpenApiResponse(
            response=ref("OperationOutcome"),
            description="Queued. Content-Location holds the status URL.",
            examples=[
                OpenApiExample(
                    "202 queued",
                    value={
                        "resourceType": "OperationOutcome",
                        "issue": [
                            {
                                "severity": "information",
                                "code": "informational",
                                "diagnostics": "Accepted: ingestion "
                                "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10 is queued. Poll "
                                "https://registry.example.org/api/registry/fhir/ingestions/"
                                "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10 until its status is "
                                "completed or failed.",
                            }
                        ],
                    },
                    response_only=True,
                    status_codes=["202"],
                    media_type="application/fhir+json",
                )
            ],
        ),
        400: _error(
            400,
            "The body is not a JSON FHIR Bundle (malformed JSON, an array, a scalar, another "
            "resource type), or the Idempotency-Key header is not 1-255 printable ASCII.",
            "structure",
            "resourceType must be 'Bundle'.",
            "Bundle.resourceType",
        ),
        401: COMMON_ERRORS[401],
        403: _error(
            403,
            "The key lacks ingest:write.",
            "forbidden",
            "This API key lacks the scope ingest:write that this route needs.",
        ),
        413: _error(
            413,
            "The body is larger than REGISTRY_MAX_BODY_BYTES (64 MiB by default).",
            "too-costly",
            "The body is larger than the limit of 67108864 bytes.",
            "Bundle",
        ),
        415: _error(
            415,
            "Content-Type is not application/fhir+json or application/json.",
            "not-supported",
            "Content-Type must be application/fhir+json (or application/json).",
        ),
        429: COMMON_ERRORS[429],
    },
)

status = extend_schema(
    operation_id="getIngestion",
    summary="Poll an ingestion's receipt",
    description=(
        "The receipt of a submitted Bundle, for the practice that owns the key. While the "
        "ingestion is queued or processing the response carries `Retry-After` (seconds): poll "
        "steadily until `status` is completed or failed. Scope: `ingest:read`."
    ),
    tags=["FHIR"],
    parameters=[
        OpenApiParameter(
            "ingestion",
            OpenApiTypes.STR,
            OpenApiParameter.PATH,
            description="The ingestion id: the last path segment of the submit response's "
            "Content-Location. Unknown, malformed or another practice's ids are 404.",
        ),
        OpenApiParameter(
            "Retry-After",
            OpenApiTypes.INT,
            OpenApiParameter.HEADER,
            response=[200, 429],
            description="Seconds to wait before polling again (while queued or processing; "
            "and on 429).",
        ),
        WWW_AUTHENTICATE,
    ],
    responses={
        (200, "application/json"): OpenApiResponse(
            response=ref("IngestionReceipt"),
            description="The ingestion receipt.",
            examples=[
                OpenApiExample(
                    "Completed batch",
                    value=EXAMPLE_RECEIPT,
                    response_only=True,
                    status_codes=["200"],
                    media_type="application/json",
                )
            ],
        ),
        (401, FHIR_JSON): COMMON_ERRORS[401],
        (403, FHIR_JSON): _error(
            403,
            "The key lacks ingest:read.",
            "forbidden",
            "This API key lacks the scope ingest:read that this route needs.",
        ),
        (404, FHIR_JSON): _error(
            404,
            "No ingestion with that id for the caller's practice.",
            "not-found",
            "No ingestion with this id for this practice.",
        ),
        (429, FHIR_JSON): COMMON_ERRORS[429],
    },
)


class ApiKeyScheme(OpenApiAuthenticationExtension):
    target_class = "keys.authentication.ApiKeyAuthentication"
    name = SCHEME

    def get_security_definition(self, auto_schema: AutoSchema) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "bearerFormat": "rgk_ followed by 40 base62 characters",
            "description": (
                "A per-practice API key, minted in the settings area (/settings/key/) and shown "
                "once. Scopes: `ingest:write` (POST a Bundle) and `ingest:read` (GET an "
                "ingestion). Keys do not expire; they are valid until revoked."
            ),
        }

    def get_security_requirement(self, auto_schema: AutoSchema) -> dict[str, list[str]]:
        scope = getattr(auto_schema.view, "required_scope", None)
        return {SCHEME: [scope] if scope else []}


def add_components(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the named FHIR schemas the operations refer to."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.update(COMPONENTS)
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if "requestBody" in operation:
                operation["requestBody"]["required"] = True  # a Bundle, always
    result["info"]["description"] = (
        "Asynchronous ingestion of FHIR R4 BFDR Bundles for a birth registry. Submit a Bundle, "
        "then poll the status URL until the ingestion is completed or failed. Every error "
        "body is a FHIR OperationOutcome. The API is unversioned; changes are additive where "
        "possible and this document is the authoritative current contract."
    )
    return result
