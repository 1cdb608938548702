from django.urls import path, re_path

from ingestion.api.views import IngestionStatusView, SubmitBundleView, api_not_found

urlpatterns = [
    path("Bundle", SubmitBundleView.as_view(), name="submit-bundle"),
    path("ingestions/<str:ingestion>", IngestionStatusView.as_view(), name="ingestion-status"),
    re_path(r"^.*$", api_not_found),
]
