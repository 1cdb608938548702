from django.urls import path, re_path

from ingestion.api.capability import CapabilityView
from ingestion.api.fhir_base import SubmitAtBaseView
from ingestion.api.unsupported import BundleInstanceView, NotSupportedView
from ingestion.api.views import IngestionStatusView, SubmitBundleView, ValidateBundleView

urlpatterns = [
    path("", SubmitAtBaseView.as_view(), name="fhir-base"),
    path("metadata", CapabilityView.as_view(), name="fhir-metadata"),
    path("Bundle", SubmitBundleView.as_view(), name="submit-bundle"),
    path("Bundle/$validate", ValidateBundleView.as_view(), name="validate-bundle"),
    # A FHIR id (not _history, _search or an unknown $operation): the type is known, the
    # method never supported, so 405.
    re_path(r"^Bundle/[A-Za-z0-9.\-]{1,64}$", BundleInstanceView.as_view()),
    path("ingestions/<str:ingestion>", IngestionStatusView.as_view(), name="ingestion-status"),
    # Anything else: 404 not-supported, as an OperationOutcome (ingestion.api.unsupported).
    re_path(r"^.*$", NotSupportedView.as_view()),
]
