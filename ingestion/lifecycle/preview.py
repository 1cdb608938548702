"""``Bundle/$validate``: what a submission would do now, answered at once, with nothing stored.

The body is mapped and validated exactly as the worker maps a staged chunk
(:func:`ingestion.fhir.chunks.map_chunk`), and the record lifecycle is planned on the
practice's records as they stand (:func:`records_plan`, the lifecycle's deciding itself run
without its writes). So the preview cannot drift from what ingestion does: the same
rejections, the same lifecycle table, the same duplicate matching, in entry order.

Nothing is written: no ingestion, staged payload, record, version, match key, count or
provider, and nothing is logged. The answer is one OperationOutcome: per course of care (or
retraction, or void) one ``information`` issue whose diagnostics begin with what a submission
would do now (``would create``, ``would amend (version N)``, ``would be flagged as a
suspected duplicate``, ``would be rejected: ...``, ``would retract``), followed by the
entry's own issues (structural errors, warnings). Every issue names its entry in
``expression`` (``Bundle`` for one course of care, ``Bundle.entry[i]...`` in a batch).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from ingestion.fhir import CourseOfCare, Rejection, Result, Retraction
from ingestion.fhir import practice_fingerprint_key as derive_fingerprint_key
from ingestion.fhir.chunks import map_chunk
from ingestion.fhir.outcome import issue, operation_outcome
from ingestion.intake.submission import Submission
from ingestion.lifecycle.deciding import Lifecycle
from ingestion.lifecycle.entries import ChunkOutcome
from registry.models import Practice

Issue = dict[str, Any]


def bundle_validate(*, practice: Practice, submission: Submission) -> dict[str, Any]:
    """The OperationOutcome of ``$validate`` for ``submission``, sent by ``practice``."""
    key = derive_fingerprint_key(settings.REGISTRY_FINGERPRINT_KEY.encode(), practice.pk)
    validate = settings.REGISTRY_FHIR_VALIDATION
    results = [
        result
        for chunk in submission.chunks()
        for result in map_chunk(
            submission.kind,
            chunk.plaintext,
            chunk.first_index,
            key,
            validate=validate,
            most_values=settings.REGISTRY_MAX_ENTRY_NODES,
        )
    ]
    return preview_outcome(results, records_plan(practice=practice, results=results))


def records_plan(*, practice: Practice, results: Sequence[Result]) -> ChunkOutcome:
    """What applying would answer now for ``results``, writing nothing.

    The lifecycle runs as it does for real (the same :class:`Lifecycle` code, in entry order,
    so several courses of one body touching one chart or resembling each other are answered
    as the pipeline would), reading the practice's records and match keys without locking
    them, and stops before storing: no record, version, match key, count or provider row, no
    row lock or advisory lock, no sequence value. At the top level it runs in a read-only
    transaction (one snapshot, and PostgreSQL refuses any write).
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return Lifecycle(practice).plan(results)


def preview_outcome(results: Sequence[Result], planned: ChunkOutcome) -> dict[str, Any]:
    """One preview issue per result, in entry order, each followed by the entry's issues."""
    accepted = {entry["reference"]: entry for entry in planned.accepted}
    rejected = {entry["reference"]: entry for entry in planned.rejected}
    issues: list[Issue] = []
    for result in results:
        if isinstance(result, Rejection):
            details = _naming(result.operation_outcome.get("issue", []), result.reference)
            issues += [_would_be_rejected(details, result.reference), *details]
        elif result.reference in rejected:
            issues.append(_refused(rejected[result.reference], result.reference))
        else:
            issues += _accepted(result, accepted.get(result.reference, {}))
    if not issues:
        issues.append(
            _preview(
                "informational",
                "would do nothing: the Bundle holds no course of care, retraction or void "
                "(in a batch, entries whose resource is not a Bundle are ignored)",
                "Bundle",
            )
        )
    return operation_outcome(*issues)


def _refused(entry: Mapping[str, Any], reference: str) -> Issue:
    """A lifecycle rejection (stale update, conflict, not found): what would happen, not a
    fault of the Bundle, so it is the preview itself rather than an error."""
    problems = (entry.get("operation_outcome") or {}).get("issue", [])
    return _would_be_rejected(problems, reference, chart=entry.get("external_record_id"))


def _accepted(result: Result, entry: Mapping[str, Any]) -> list[Issue]:
    reference = result.reference
    warnings = [*getattr(result, "warnings", ()), *_entry_issues(entry)]
    preview = _preview("informational", _would(result, entry), reference)
    return [preview, *_unique(warnings, reference)]


def _would(result: Result, entry: Mapping[str, Any]) -> str:
    chart = entry.get("external_record_id", "")
    if isinstance(result, Retraction):
        return f"would retract the record for chart number {chart}"
    if not isinstance(result, CourseOfCare):  # an NVSS void: its whole block
        count = int(entry.get("voided_count") or 0)
        if not count:
            return "would retract nothing: none of this void's certificate numbers is on file"
        return f"would retract {count} record(s) of this NVSS void's block"
    flagged = bool(entry.get("suspected_duplicate"))
    if entry.get("amended"):
        text = f"would amend (version {entry.get('version')}) the record for chart number {chart}"
        return text + ("; it is flagged as a suspected duplicate" if flagged else "")
    if flagged:
        return (
            f"would be flagged as a suspected duplicate: a new record for chart number {chart} "
            "would resemble another record of this practice (same mother and newborn birth "
            "date), on file or earlier in this Bundle"
        )
    return f"would create a record for chart number {chart} (version 1)"


def _would_be_rejected(
    problems: Sequence[Issue], reference: str, *, chart: str | None = None
) -> Issue:
    first = problems[0] if problems else {}
    text = str(first.get("diagnostics") or "the entry is not valid").rstrip(".")
    if len(problems) > 1:
        text += f" (and {len(problems) - 1} more issue(s))"
    if chart:
        text += f" (chart number {chart})"
    return _preview(first.get("code", "invalid"), f"would be rejected: {text}", reference)


def _preview(code: Any, diagnostics: str, reference: str) -> Issue:
    return issue(code, diagnostics, expression=reference, severity="information")


def _entry_issues(entry: Mapping[str, Any]) -> list[Issue]:
    """The issues a receipt entry would carry (an NVSS void finding nothing, warnings)."""
    outcome = entry.get("operation_outcome") or {}
    return list(outcome.get("issue", []))


def _naming(issues: Iterable[Issue], reference: str) -> list[Issue]:
    """The issues, each with an ``expression``: its own, or else the entry's reference."""
    return [
        item if item.get("expression") else {**item, "expression": [reference]} for item in issues
    ]


def _unique(issues: Iterable[Issue], reference: str) -> list[Issue]:
    """Each issue once (a warning may come from the course and again from the plan)."""
    seen: set[tuple[Any, ...]] = set()
    kept = []
    for item in _naming(issues, reference):
        marker = (
            item.get("severity"),
            item.get("code"),
            item.get("diagnostics"),
            tuple(item["expression"]),
        )
        if marker not in seen:
            seen.add(marker)
            kept.append(item)
    return kept
