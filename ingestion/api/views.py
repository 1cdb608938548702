"""The FHIR endpoints. They check the request, call one service, and answer."""

from __future__ import annotations

from typing import cast
from uuid import UUID

import orjson
from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import reverse
from rest_framework.request import Request
from rest_framework.response import Response

from ingestion.api import schema
from ingestion.api.accepted import accepted_outcome
from ingestion.api.body import BodyTooLarge, is_chunked, read_chunked, spooled_body
from ingestion.api.capability import api_base
from ingestion.api.errors import FhirError
from ingestion.api.ratelimit import enforce_rate_limit, rate_counter
from ingestion.api.unsupported import FhirView
from ingestion.fhir.shape import first_over, too_many_values, values_over
from ingestion.intake.services import ingestion_for_key, ingestion_retried, ingestion_submit
from ingestion.intake.submission import Body, NotABundle, Submission, parse_submission
from ingestion.lifecycle.preview import bundle_validate
from ingestion.models import Ingestion
from ingestion.receipts.cache import Kept, keep_receipt, kept_receipt
from ingestion.receipts.poll import ingestion_polled
from ingestion.receipts.receipt import pieces_async, receipt_stream, receipt_whole
from keys.authentication import ApiKeyAuthentication
from keys.models import INGEST_READ, INGEST_WRITE, ApiKey
from keys.permissions import HasScope
from lib.logfilters import ingestion_id as about_ingestion_id
from registry.models import Practice

FHIR_MEDIA_TYPES = {"application/fhir+json", "application/json"}
IDEMPOTENCY_HEADER = "Idempotency-Key"


class RegistryApiView(FhirView):
    authentication_classes = [ApiKeyAuthentication]
    permission_classes = [HasScope]
    rate_group = ""  # the endpoint's rate-limit counter, counted as the key is looked up

    def get_authenticators(self) -> list[ApiKeyAuthentication]:  # type: ignore[override]
        return [ApiKeyAuthentication(counter=rate_counter(self.rate_group))]

    def practice(self, request: Request) -> Practice:
        """The key's practice (HasScope has let only requests with an ApiKey through)."""
        return cast(ApiKey, request.auth).practice


class SubmitBundleView(RegistryApiView):
    required_scope = INGEST_WRITE
    rate_group = "submit"
    what = "Bundle"
    takes = (
        "A Bundle is submitted with POST (or checked with POST [base]/Bundle/$validate); "
        "there is no search, read, update or delete of Bundles. What became of a "
        "submission is read at the status URL its 202 names."
    )

    @schema.submit
    def post(self, request: Request) -> Response:
        enforce_rate_limit(request, group=self.rate_group)
        practice = self.practice(request)
        idempotency_key = _idempotency_key(request)
        earlier = ingestion_for_key(practice=practice, idempotency_key=idempotency_key)
        if earlier is not None:
            ingestion_retried(ingestion=earlier)  # its message may have been lost: again
            return _accepted(request, earlier)  # a retry: the original answer, nothing new
        _check_content_type(request)
        submission = _parse(
            _read_body(request),
            chunk_entries=settings.REGISTRY_CHUNK_ENTRIES,
            chunk_bytes=settings.REGISTRY_CHUNK_BYTES,
        )
        ingestion, _ = ingestion_submit(
            practice=practice, submission=submission, idempotency_key=idempotency_key
        )
        return _accepted(request, ingestion)


class ValidateBundleView(RegistryApiView):
    """``POST [base]/Bundle/$validate``: the same door, mapping and lifecycle as a submission,
    answered at once (200 and an OperationOutcome), with nothing stored
    (ingestion.lifecycle.preview)."""

    required_scope = INGEST_WRITE
    rate_group = "validate"
    what = "Bundle/$validate"
    takes = "$validate is called with POST and a Bundle as the body."

    @schema.validate
    def post(self, request: Request) -> Response:
        enforce_rate_limit(request, group=self.rate_group)
        _check_content_type(request)
        most = settings.REGISTRY_VALIDATE_MAX_ENTRIES
        body = _read_body(request)
        submission = _parse(body, chunk_entries=most, chunk_bytes=len(body) + 1)
        if submission.entry_count > most:
            raise FhirError(
                413,
                "too-costly",
                f"This Bundle has {submission.entry_count} entries; $validate checks at most "
                f"{most} at once. Validate it in parts of at most {most} entries (submitting "
                "has no such limit).",
                expression="Bundle.entry",
            )
        return Response(bundle_validate(practice=self.practice(request), submission=submission))


class IngestionStatusView(RegistryApiView):
    required_scope = INGEST_READ
    rate_group = "status"
    what = "an ingestion"
    takes = (
        "An ingestion's receipt is read with GET; an ingestion cannot be changed or deleted "
        "(a record is retracted by submitting a retraction)."
    )

    @schema.status
    def get(self, request: Request, ingestion: str) -> HttpResponseBase:
        enforce_rate_limit(request, group=self.rate_group)
        practice_id = cast(ApiKey, request.auth).practice_id
        ingestion_id = _uuid(ingestion)
        if ingestion_id is not None:
            kept = kept_receipt(practice_id=practice_id, ingestion_id=ingestion_id)
            if kept is not None:  # a queued ingestion polled a moment ago: no SQL
                about_ingestion_id.set(str(ingestion_id))
                return _polled_response(kept)
        found = None
        if ingestion_id is not None:
            found = ingestion_polled(practice_id=practice_id, ingestion_id=ingestion_id)
        if found is None:
            raise FhirError(404, "not-found", "No ingestion with this id for this practice.")
        about_ingestion_id.set(str(found.ingestion.id))  # the request's log lines are about it
        if found.progress is None:  # finished
            return _finished_receipt(request, found.ingestion)
        kept = Kept(found.progress.header(), orjson.dumps(found.receipt()))
        if found.ingestion.status == Ingestion.Status.QUEUED:  # unchanged until it is claimed
            keep_receipt(practice_id=practice_id, ingestion_id=found.ingestion.id, kept=kept)
        return _polled_response(kept)


def _uuid(text: str) -> UUID | None:
    """None for a malformed id: answered as an unknown one."""
    try:
        return UUID(text)
    except ValueError:
        return None


def _polled_response(kept: Kept) -> HttpResponse:
    """An unfinished ingestion's receipt: the body as the API's renderer writes it."""
    headers = {
        "X-Progress": kept.progress,
        "Retry-After": str(settings.REGISTRY_POLL_RETRY_AFTER_SECONDS),
    }
    return HttpResponse(kept.body, content_type="application/json", headers=headers)


def _finished_receipt(request: Request, ingestion: Ingestion) -> HttpResponseBase:
    """A finished receipt, written from the stored outcome rows in bounded memory.

    One of at most a chunk's entries (a single, a small batch: the poll most often read) is
    written whole on the request's thread and sent as one response; streamed, each of its
    eight or so pieces would cross from the event loop to that thread and back, which cost
    a single's poll more of the web's CPU than its submission (docs/performance.md, "The
    web's CPU per request"). A larger one is streamed: under ASGI, Django would gather a
    synchronous iterator whole before sending it, so its pieces are handed over one at a
    time instead (:func:`ingestion.receipts.receipt.pieces_async`).
    """
    if ingestion.entry_count <= settings.REGISTRY_CHUNK_ENTRIES:
        return HttpResponse(receipt_whole(ingestion), content_type="application/json")
    pieces = receipt_stream(ingestion)
    if isinstance(request._request, ASGIRequest):
        return StreamingHttpResponse(pieces_async(pieces), content_type="application/json")
    return StreamingHttpResponse(pieces, content_type="application/json")


def _accepted(request: Request, ingestion: Ingestion) -> Response:
    """The 202. While the ingestion is unfinished it carries ``Retry-After``, the wait before
    the first poll: a poll at once would find it queued, and cost the web what the
    submission did (docs/integrators.md, "Polling")."""
    url = request.build_absolute_uri(reverse("ingestion-status", args=[ingestion.id]))
    body = accepted_outcome(
        base=api_base(request),
        ingestion_id=str(ingestion.id),
        status_url=url,
        status=ingestion.status,
    )
    headers = {"Content-Location": url}
    if not ingestion.finished:
        headers["Retry-After"] = str(settings.REGISTRY_POLL_RETRY_AFTER_SECONDS)
    return Response(body, status=202, headers=headers)


def _idempotency_key(request: Request) -> str | None:
    value = request.headers.get(IDEMPOTENCY_HEADER)
    if value is None:
        return None
    if not 1 <= len(value) <= 255 or not all(" " <= c <= "~" for c in value):
        raise FhirError(
            400,
            "invalid",
            f"The {IDEMPOTENCY_HEADER} header must be 1 to 255 printable ASCII characters.",
        )
    return value


def _parse(body: Body, *, chunk_entries: int, chunk_bytes: int) -> Submission:
    _check_values(body)  # before anything decodes it: its cost grows with its values
    try:
        submission = parse_submission(body, chunk_entries=chunk_entries, chunk_bytes=chunk_bytes)
    except NotABundle as error:
        raise FhirError(400, "structure", str(error), expression="Bundle.resourceType") from None
    _check_entry_values(submission)
    return submission


def _check_values(body: Body) -> None:
    limit = settings.REGISTRY_MAX_BODY_NODES
    if values_over(body, limit):
        diagnostics = too_many_values("The body", limit, per_entry=False)
        raise FhirError(413, "too-costly", diagnostics, expression="Bundle")


def _check_entry_values(submission: Submission) -> None:
    """What the worker decodes at once holds at most ``REGISTRY_MAX_ENTRY_NODES`` values: each
    entry of a batch, or the whole of a single Bundle."""
    limit = settings.REGISTRY_MAX_ENTRY_NODES
    if submission.kind == "single":
        over, where, expression = values_over(submission.body, limit), "The body", "Bundle"
    else:
        index = first_over(submission.entries, limit)
        over, where, expression = index is not None, "This entry", f"Bundle.entry[{index}]"
    if over:
        diagnostics = too_many_values(where, limit, per_entry=True)
        raise FhirError(413, "too-costly", diagnostics, expression=expression)


def _check_content_type(request: Request) -> None:
    media_type = (request.content_type or "").split(";")[0].strip().lower()
    if media_type not in FHIR_MEDIA_TYPES:
        raise FhirError(
            415,
            "not-supported",
            "Content-Type must be application/fhir+json (or application/json).",
        )


def _read_body(request: Request) -> Body:
    limit = settings.REGISTRY_MAX_BODY_BYTES
    too_large = FhirError(
        413,
        "too-costly",
        f"The body is larger than the limit of {limit} bytes.",
        expression="Bundle",
    )
    try:
        spooled = spooled_body(request, limit)
    except BodyTooLarge:
        raise too_large from None
    if spooled is not None:
        return spooled
    if is_chunked(request):
        try:
            return read_chunked(request, limit)
        except BodyTooLarge:
            raise too_large from None
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    if declared > limit:
        raise too_large
    try:
        body: bytes = request.body
    except RequestDataTooBig:
        raise too_large from None
    if len(body) > limit:
        raise too_large
    return body
