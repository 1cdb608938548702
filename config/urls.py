from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView

from config.health import healthz

urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path(
        "settings/",
        RedirectView.as_view(pattern_name="keys:key", query_string=True),
        name="settings",
    ),
    path("settings/key/", include("keys.urls")),
]
