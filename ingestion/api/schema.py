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

from ingestion.api import examples
from ingestion.api.accepted import INGESTION_ID, INGESTION_STATUS_URL
from ingestion.fhir.outcome import IssueCode, operation_outcome, warning_issue
from ingestion.fhir.plausibility import RULES

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
                        "details": {
                            "type": "object",
                            "description": "On a plausibility warning: the rule, as "
                            "`coding[0].code` (" + ", ".join(f"`{r.code}`" for r in RULES) + ").",
                            "properties": {
                                "coding": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "properties": {"code": {"type": "string"}},
                                    },
                                }
                            },
                        },
                        "extension": {
                            "type": "array",
                            "description": "On the 202: the ingestion id "
                            "(`<base>/StructureDefinition/ingestion-id`, `valueString`) and the "
                            "status URL (`<base>/StructureDefinition/ingestion-status-url`, "
                            "`valueUrl`).",
                            "items": {
                                "type": "object",
                                "required": ["url"],
                                "properties": {
                                    "url": {"type": "string", "format": "uri"},
                                    "valueString": {"type": "string"},
                                    "valueUrl": {"type": "string", "format": "uri"},
                                },
                            },
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
            "gestational age 11884-4, 18185-9, 49051-6; Apgar 9272-6, 9274-2, 9271-8) with "
            "their BFDR edit flags (`BypassEditFlag`, read for plausibility warnings), "
            "Practitioners, Encounter participants (`ATND` attends) and transfers "
            "(`hosp-trans`, `other-hcf`), and the first Consent."
        ),
        "required": ["resourceType"],
        "properties": {"resourceType": {"const": "Bundle"}},
    },
    "AcceptedEntry": {
        "type": "object",
        "description": "A record stored, amended or voided. A stored course whose values are "
        "implausible (NCHS edit ranges, birth weight for gestational age) is stored as sent "
        "and its `operation_outcome` carries a `warning` (code `value`) per finding, naming the "
        "rule (`details.coding[0].code`, and the diagnostics) and the element(s) "
        "(`expression`); a value the sender marked with the BFDR edit flag as queried and "
        "verified draws none. An NVSS void message gives one entry "
        "for its whole block: `voided_count` and `voided_records` say what it voided; when no "
        "record of the block is on file, `voided_count` is 0, `submission_uuid` is absent and "
        "`operation_outcome` carries a `warning` (`not-found`) saying so.",
        "required": ["reference", "external_record_id"],
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
            "voided_count": {
                "type": "integer",
                "minimum": 0,
                "description": "NVSS void messages only: how many records on file the void "
                "names (voided now or already voided).",
            },
            "voided_records": {
                "type": "array",
                "description": "NVSS void messages only: the records it names.",
                "items": {
                    "type": "object",
                    "required": ["external_record_id", "submission_uuid"],
                    "properties": {
                        "external_record_id": {"type": "string"},
                        "submission_uuid": {"type": "string", "format": "uuid"},
                    },
                },
            },
            "operation_outcome": ref("OperationOutcome"),
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
                "description": "null while queued or processing, when a finished ingestion "
                "has no per-record entries, and once the outcome has been purged "
                "(`outcomePurgedAt`).",
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
            "outcomePurgedAt": {
                "type": "string",
                "format": "date-time",
                "description": "Present only once the receipt is past its retention (additive "
                "field): a finished ingestion's per-record outcome is kept "
                "`REGISTRY_RECEIPT_RETENTION_DAYS` (90 by default) after `completedAt`, then "
                "purged. From then on `outcome` is null; `status`, `accepted`, `rejected` and "
                "`completedAt` are kept, and so is the ingestion's Idempotency-Key.",
            },
            "progress": {
                "type": "object",
                "description": "Present only while queued or processing (additive field): how "
                "many of the submitted Bundle's entries have been processed. The same figures "
                "are sent in the `X-Progress` header, e.g. `1200 of 5000 entries`.",
                "required": ["processed", "total", "unit"],
                "properties": {
                    "processed": {"type": "integer", "minimum": 0},
                    "total": {"type": "integer", "minimum": 0},
                    "unit": {"const": "entries"},
                },
            },
        },
    },
    "CapabilityStatement": {
        "type": "object",
        "description": "A FHIR R4 (4.0.1) CapabilityStatement.",
        "required": ["resourceType", "status", "date", "kind", "fhirVersion", "format"],
        "properties": {
            "resourceType": {"const": "CapabilityStatement"},
            "status": {"type": "string"},
            "date": {"type": "string"},
            "kind": {"type": "string"},
            "fhirVersion": {"const": "4.0.1"},
            "format": {"type": "array", "items": {"type": "string"}},
            "rest": {"type": "array", "items": {"type": "object"}},
        },
    },
}

EXAMPLE_BUNDLE: dict[str, Any] = examples.SINGLE_COURSE

_WEIGHT_RANGE = next(rule for rule in RULES if rule.code == "birth-weight-range")

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
                "operation_outcome": operation_outcome(
                    warning_issue(
                        _WEIGHT_RANGE.code,
                        _WEIGHT_RANGE.diagnostics,
                        expression="Bundle.entry[1].resource.entry[3].resource.valueQuantity",
                    )
                ),
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


PROCESSING_RECEIPT = {
    "id": "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10",
    "status": "processing",
    "accepted": 1200,
    "rejected": 0,
    "outcome": None,
    "completedAt": None,
    "progress": {"processed": 1200, "total": 5000, "unit": "entries"},
}

PURGED_RECEIPT = {
    "id": "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10",
    "status": "completed",
    "accepted": 2,
    "rejected": 1,
    "outcome": None,
    "completedAt": "2026-11-22T09:30:12.482113+00:00",
    "outcomePurgedAt": "2027-02-20T09:40:00.124512+00:00",
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
SUBMIT_RETRY_AFTER = OpenApiParameter(
    "Retry-After",
    OpenApiTypes.INT,
    OpenApiParameter.HEADER,
    response=[202, 429],
    description=(
        "On a 202 for an ingestion not yet finished: seconds to wait before the first poll of "
        "the status URL. On a 429: seconds until the rate-limit window resets."
    ),
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
    503: _error(
        503,
        "The database cannot be reached just now; nothing was stored. Sent with Retry-After.",
        "transient",
        "The registry's database cannot be reached just now; nothing was stored. "
        "Retry after 5 seconds.",
    ),
}

TRY_IT_OUT = (
    '**"Try it out" writes real data.** A request sent from these interactive docs with a '
    "real key is a real submission: it stores records for that key's practice (they count "
    "in its statistics and duplicate checks). Use a sandbox practice's key (`rgk_test_...`: "
    "its records never count in the registry's figures, and its staff can delete them all), "
    "or `POST /api/registry/fhir/Bundle/$validate`, which stores nothing."
)

ACCEPTED_EXAMPLE = {
    "resourceType": "OperationOutcome",
    "issue": [
        {
            "severity": "information",
            "code": "informational",
            "diagnostics": "Accepted: ingestion 0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10 is queued. "
            "Poll https://registry.example.org/api/registry/fhir/ingestions/"
            "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10 until its status is completed or failed.",
            "extension": [
                {
                    "url": f"https://registry.example.org/api/registry/fhir/{INGESTION_ID}",
                    "valueString": "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10",
                },
                {
                    "url": f"https://registry.example.org/api/registry/fhir/{INGESTION_STATUS_URL}",
                    "valueUrl": "https://registry.example.org/api/registry/fhir/ingestions/"
                    "0b6f1c52-8a1e-4d7e-9a55-3f1c2d7a9e10",
                },
            ],
        }
    ],
}

SUBMIT: dict[str, Any] = {
    "summary": "Submit a FHIR R4 BFDR Bundle for asynchronous ingestion",
    "description": (
        TRY_IT_OUT + "\n\n"
        "Checks the request (Content-Type, size, JSON, resourceType Bundle), stages the "
        "payload encrypted, queues it and answers 202 at once; records are mapped afterwards. "
        "Poll the status URL in `Content-Location`. Scope: `ingest:write`.\n\n"
        "**Idempotency-Key**: scoped to the practice and the whole request. The first POST "
        "with a key creates the ingestion; any later POST with that key from the same "
        "practice gets the original 202 and Content-Location, without re-ingesting, even "
        "with a different body. Keys are kept as long as their ingestion (at least 24 hours).\n\n"
        "**Rate limit**: 120 requests per minute per key, counted in the shared cache across "
        "all web processes. If the cache is unreachable the limiter fails open (the "
        "submission is accepted and the event is logged) rather than refuse data.\n\n"
        "**The 202** names the ingestion in `Content-Location` and, for clients that see only "
        "the body, in the issue's extensions `<base>/StructureDefinition/ingestion-id` "
        "(`valueString`) and `<base>/StructureDefinition/ingestion-status-url` (`valueUrl`), "
        "where `<base>` is this service's FHIR base, e.g. "
        "`https://registry.example.org/api/registry/fhir`."
    ),
    "tags": ["FHIR"],
    "request": {"application/fhir+json": ref("Bundle"), "application/json": ref("Bundle")},
    "parameters": [
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
        SUBMIT_RETRY_AFTER,
        WWW_AUTHENTICATE,
    ],
    "examples": [
        OpenApiExample(
            name,
            value=value,
            description=description,
            request_only=True,
            media_type="application/fhir+json",
        )
        for name, (description, value) in examples.SUBMISSIONS.items()
    ],
    "responses": {
        202: OpenApiResponse(
            response=ref("OperationOutcome"),
            description=(
                "Queued. Content-Location holds the status URL; Retry-After, the seconds to "
                "wait before polling it."
            ),
            examples=[
                OpenApiExample(
                    "202 queued",
                    value=ACCEPTED_EXAMPLE,
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
        408: _error(
            408,
            "The body paused longer than REGISTRY_BODY_IDLE_SECONDS (15 s) or was not whole "
            "after REGISTRY_BODY_TIMEOUT_SECONDS (120 s); nothing was stored.",
            "timeout",
            "The request body did not arrive in time.",
        ),
        503: COMMON_ERRORS[503],
    },
}

submit = extend_schema(operation_id="submitBundle", **SUBMIT)
submit_at_base = extend_schema(
    **{
        **SUBMIT,
        "operation_id": "submitBundleAtBase",
        "summary": "Submit a Bundle to the FHIR base (the same operation as POST /Bundle)",
        "description": "FHIR clients POST batch and transaction Bundles to the base URL. This "
        "is the submit call itself: the same scope, the same rate-limit counter and the same "
        "answers as `POST /api/registry/fhir/Bundle`.\n\n" + SUBMIT["description"],
    }
)

VALIDATE_EXAMPLE = {
    "resourceType": "OperationOutcome",
    "issue": [
        {
            "severity": "information",
            "code": "informational",
            "diagnostics": "would create a record for chart number 2026-000123 (version 1)",
            "expression": ["Bundle.entry[0]"],
        },
        {
            "severity": "information",
            "code": "informational",
            "diagnostics": "would amend (version 3) the record for chart number 2026-000124",
            "expression": ["Bundle.entry[1]"],
        },
        {
            "severity": "information",
            "code": "structure",
            "diagnostics": "would be rejected: The course of care has no mother Patient: "
            "exactly one is required (roles are read from Patient.meta.profile)",
            "expression": ["Bundle.entry[2]"],
        },
        {
            "severity": "error",
            "code": "structure",
            "diagnostics": "The course of care has no mother Patient: exactly one is required "
            "(roles are read from Patient.meta.profile).",
            "expression": ["Bundle.entry[2].resource.entry"],
        },
        {
            "severity": "information",
            "code": "conflict",
            "diagnostics": "would be rejected: Stale update ignored (chart number 2026-000125)",
            "expression": ["Bundle.entry[3]"],
        },
    ],
}

validate = extend_schema(
    operation_id="validateBundle",
    summary="Check a Bundle and preview what submitting it would do (stores nothing)",
    description=(
        "FHIR's `$validate` on Bundle, answered at once. The body goes through the same "
        "checks as a submission (Content-Type, size, JSON, resourceType Bundle: 400, 413, "
        "415 as for a submit), then the same mapping and structural validation as "
        "ingestion, and the record lifecycle is worked out on the practice's records as they "
        "stand now. **Nothing is stored**: no ingestion, record, count, match key or staged "
        "payload, and no log line with a submitted value. `Idempotency-Key` is ignored.\n\n"
        "The answer is 200 with an OperationOutcome. For each course of care (retraction, "
        "NVSS void) there is one `information` issue whose `diagnostics` begin with what a "
        "submission would do now: `would create`, `would amend (version N)`, `would be "
        "flagged as a suspected duplicate`, `would be rejected: ...` (a structural fault, a "
        "stale update, a conflict, a chart number not on file; the issue's `code` says "
        "which), or `would retract`. After it come that entry's own issues: `error`s for "
        "structural faults, `warning`s. Every issue's `expression` names its entry: `Bundle` "
        "for one course of care, `Bundle.entry[i]...` in a batch. Several courses in one "
        "body are worked out in order, as the pipeline applies them (the same chart twice, "
        "two courses resembling each other).\n\n"
        "At most 1,000 entries (`REGISTRY_VALIDATE_MAX_ENTRIES`) are checked at once; a "
        "larger body is 413: validate it in parts. Its own rate-limit counter (120 requests "
        "per minute per key). Scope: `ingest:write`. A sandbox key (`rgk_test_...`) previews "
        "against the sandbox practice's records."
    ),
    tags=["FHIR"],
    request={"application/fhir+json": ref("Bundle"), "application/json": ref("Bundle")},
    parameters=[RETRY_AFTER, WWW_AUTHENTICATE],
    examples=SUBMIT["examples"],
    responses={
        200: OpenApiResponse(
            response=ref("OperationOutcome"),
            description="The preview: one information issue per course of care, then its "
            "own issues.",
            examples=[
                OpenApiExample(
                    "200 preview of a batch",
                    value=VALIDATE_EXAMPLE,
                    response_only=True,
                    status_codes=["200"],
                    media_type="application/fhir+json",
                )
            ],
        ),
        400: _error(
            400,
            "The body is not a JSON FHIR Bundle (malformed JSON, an array, a scalar, another "
            "resource type).",
            "structure",
            "resourceType must be 'Bundle'.",
            "Bundle.resourceType",
        ),
        401: COMMON_ERRORS[401],
        403: SUBMIT["responses"][403],
        408: SUBMIT["responses"][408],
        413: _error(
            413,
            "More entries than REGISTRY_VALIDATE_MAX_ENTRIES (1,000 by default): validate the "
            "Bundle in parts. Or a body larger than REGISTRY_MAX_BODY_BYTES (64 MiB).",
            "too-costly",
            "This Bundle has 1500 entries; $validate checks at most 1000 at once. Validate it "
            "in parts of at most 1000 entries (submitting has no such limit).",
            "Bundle.entry",
        ),
        415: SUBMIT["responses"][415],
        429: COMMON_ERRORS[429],
        503: COMMON_ERRORS[503],
    },
)

status = extend_schema(
    operation_id="getIngestion",
    summary="Poll an ingestion's receipt",
    description=(
        "The receipt of a submitted Bundle, for the practice that owns the key. While the "
        "ingestion is queued or processing the response carries `Retry-After` (seconds) and "
        "`X-Progress` (entries processed so far, also in the receipt's `progress`): poll "
        "steadily until `status` is completed or failed. A finished receipt's `outcome` is "
        "kept 90 days (`REGISTRY_RECEIPT_RETENTION_DAYS`), then purged: the receipt keeps its "
        "counts and says when (`outcomePurgedAt`). Scope: `ingest:read`."
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
        OpenApiParameter(
            "X-Progress",
            OpenApiTypes.STR,
            OpenApiParameter.HEADER,
            response=[200],
            description="While queued or processing: how far it has come, as "
            "`<processed> of <total> entries` (e.g. `1200 of 5000 entries`); the receipt's "
            "`progress` field carries the same figures.",
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
                ),
                OpenApiExample(
                    "Batch in progress",
                    value=PROCESSING_RECEIPT,
                    response_only=True,
                    status_codes=["200"],
                    media_type="application/json",
                ),
                OpenApiExample(
                    "Past its retention",
                    value=PURGED_RECEIPT,
                    response_only=True,
                    status_codes=["200"],
                    media_type="application/json",
                ),
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
        (503, FHIR_JSON): COMMON_ERRORS[503],
    },
)


metadata: dict[str, Any] = {
    "operation_id": "getCapabilityStatement",
    "summary": "The FHIR R4 CapabilityStatement (no key needed)",
    "description": "What this FHIR endpoint supports: Bundle submission (asynchronous, 202 and "
    "a status URL), the Bearer key security and the formats. Read by FHIR clients before "
    "anything else, so it needs no key.",
    "tags": ["FHIR"],
    "auth": [],
    "responses": {
        (200, FHIR_JSON): OpenApiResponse(
            response=ref("CapabilityStatement"), description="The CapabilityStatement."
        )
    },
}


def _real_path(path: str, operations: dict[str, Any]) -> str:
    """Django's regex simplification drops the ``$`` of ``Bundle/$validate``: put it back."""
    if any(op.get("operationId") == "validateBundle" for op in operations.values()):
        return path.rsplit("/", 1)[0] + "/$validate"
    return path


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
    result["paths"] = {_real_path(path, ops): ops for path, ops in result.get("paths", {}).items()}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if "requestBody" in operation:
                operation["requestBody"]["required"] = True  # a Bundle, always
    result["info"]["description"] = (
        "Asynchronous ingestion of FHIR R4 BFDR Bundles for a birth registry. Submit a Bundle, "
        "then poll the status URL until the ingestion is completed or failed. Every error "
        "body is a FHIR OperationOutcome. The API is unversioned; changes are additive where "
        "possible and this document is the authoritative current contract. FHIR clients "
        "find the CapabilityStatement at `/api/registry/fhir/metadata` and may POST Bundles "
        "to the FHIR base `/api/registry/fhir/` as well as to `/api/registry/fhir/Bundle`.\n\n"
        + TRY_IT_OUT
    )
    return result
