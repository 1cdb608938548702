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
    path("Bundle/<str:bundle>", BundleInstanceView.as_view()),
    path("ingestions/<str:ingestion>", IngestionStatusView.as_view(), name="ingestion-status"),
    # Anything else: 404 not-supported, as an OperationOutcome (ingestion.api.unsupported).
    re_path(r"^.*$", NotSupportedView.as_view()),
]
