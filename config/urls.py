from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerView

from config.health import healthz

handler500 = "config.errors.server_error"

admin.site.site_header = "Birth registry administration"
admin.site.site_url = "/settings/"

urlpatterns = [
    # The API is the product: its interactive documentation is the front page.
    path("", RedirectView.as_view(pattern_name="docs"), name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/registry/fhir/", include("ingestion.api.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="openapi"), name="docs"),
    path(
        "settings/",
        RedirectView.as_view(pattern_name="keys:key", query_string=True),
        name="settings",
    ),
    path("settings/key/", include("keys.urls")),
    path("settings/", include("registry.urls")),
]
