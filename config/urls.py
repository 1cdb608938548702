from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularJSONAPIView, SpectacularSwaggerSplitView

from config import errors, pages
from config.favicon import favicon
from config.health import healthz
from ingestion.monitoring.health import healthz_pipeline
from ingestion.monitoring.metrics import metrics
from registry import account

urlpatterns = [
    path("", pages.home, name="home"),
    path("favicon.ico", favicon, name="favicon"),
    path("healthz", healthz, name="healthz"),
    path("healthz/pipeline", healthz_pipeline, name="healthz-pipeline"),
    path("metrics", metrics, name="metrics"),
    # The password pages live in the settings area; the admin's and Django's lead there.
    path("admin/password_change/", RedirectView.as_view(pattern_name="password_change")),
    path("admin/", admin.site.urls),
    path(
        "accounts/password_change/",
        RedirectView.as_view(pattern_name="password_change"),
    ),
    path(
        "accounts/password_change/done/",
        RedirectView.as_view(pattern_name="password_change_done"),
    ),
    path("accounts/", include("registry.signin.urls")),  # password reset, by mail
    path("accounts/invitation/", include("registry.members.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("api/registry/fhir/", include("ingestion.api.urls")),
    path("openapi.json", SpectacularJSONAPIView.as_view(), name="openapi"),
    # The split view serves Swagger UI's initialising script from /docs/?script, so the page
    # needs no inline script (Content-Security-Policy: script-src 'self').
    path("docs/", SpectacularSwaggerSplitView.as_view(url_name="openapi"), name="docs"),
    path(
        "settings/",
        RedirectView.as_view(pattern_name="keys:key", query_string=True),
        name="settings",
    ),
    path("settings/password/", account.password_change, name="password_change"),
    path("settings/password/done/", account.password_change_done, name="password_change_done"),
    path("settings/key/", include("keys.urls")),
    path("settings/sandbox/", include("ingestion.sandbox.urls")),
    path("settings/", include("registry.urls")),
    path("registry/", include("office.urls")),  # the registry office's console
]

handler400 = errors.bad_request
handler403 = errors.permission_denied
handler404 = errors.page_not_found
handler500 = errors.server_error
