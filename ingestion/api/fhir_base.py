"""``POST /api/registry/fhir/``: a Bundle posted to the FHIR base.

FHIR clients send batch and transaction Bundles to the base URL (fhirpy's
``client.resource("Bundle", ...).create()``, fhirclient's ``Bundle(...).create(server)``).
It is the submit call itself: the same view code, so the same scope, the same rate-limit
counter (group ``submit``) and the same answers as ``POST .../Bundle``.
"""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from ingestion.api import schema
from ingestion.api.views import SubmitBundleView


class SubmitAtBaseView(SubmitBundleView):
    what = "the FHIR base"
    takes = (
        "The base takes a Bundle with POST, as POST [base]/Bundle does; there is no "
        "system-level search, history or delete. The CapabilityStatement is at [base]/metadata."
    )

    @schema.submit_at_base
    def post(self, request: Request) -> Response:
        return super().post(request)
