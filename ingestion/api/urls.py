from django.urls import path, re_path

from ingestion.api.capability import capability_view
from ingestion.api.fhir_base import SubmitAtBaseView
from ingestion.api.views import IngestionStatusView, SubmitBundleView, api_not_found

urlpatterns = [
    path("", SubmitAtBaseView.as_view(), name="fhir-base"),
    path("metadata", capability_view, name="fhir-metadata"),
    path("Bundle", SubmitBundleView.as_view(), name="submit-bundle"),
    path("ingestions/<str:ingestion>", IngestionStatusView.as_view(), name="ingestion-status"),
    re_path(r"^.*$", api_not_found),
]
