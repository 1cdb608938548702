"""The 202 body: an OperationOutcome that names the ingestion in structured fields.

A FHIR client often hands its caller the response body and nothing else (fhirpy's
``create()``, fhirclient's ``create(server)``), so the ingestion id and the status URL are
carried as extensions on the issue, not only in ``diagnostics`` and ``Content-Location``.
Their URLs sit under the service's own FHIR base and are documented in ``docs/api.md``:

* ``<base>/StructureDefinition/ingestion-id`` (``valueString``): the ingestion id;
* ``<base>/StructureDefinition/ingestion-status-url`` (``valueUrl``): where to poll.
"""

from __future__ import annotations

from typing import Any

from ingestion.fhir.outcome import error_outcome

INGESTION_ID = "StructureDefinition/ingestion-id"
INGESTION_STATUS_URL = "StructureDefinition/ingestion-status-url"


def accepted_outcome(
    *, base: str, ingestion_id: str, status_url: str, status: str = "queued"
) -> dict[str, Any]:
    """The 202 OperationOutcome for an ingestion at ``status_url``, saying where it stands.

    A retry with the same Idempotency-Key gets the original 202 again, possibly after the
    ingestion finished: then it says so, rather than "queued".
    """
    text = _where_it_stands(ingestion_id, status_url, status)
    outcome = error_outcome("informational", text, severity="information")
    outcome["issue"][0]["extension"] = [
        {"url": f"{base}/{INGESTION_ID}", "valueString": ingestion_id},
        {"url": f"{base}/{INGESTION_STATUS_URL}", "valueUrl": status_url},
    ]
    return outcome


def _where_it_stands(ingestion_id: str, status_url: str, status: str) -> str:
    if status in ("completed", "failed"):
        return f"Accepted: ingestion {ingestion_id} is {status}. Its receipt is at {status_url}."
    return (
        f"Accepted: ingestion {ingestion_id} is {status}. Poll {status_url} until its status "
        f"is completed or failed."
    )
