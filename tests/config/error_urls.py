"""The site's URLconf plus views that fail, for the error-page tests (handlers included)."""

from django.core.exceptions import SuspiciousOperation
from django.http import HttpRequest, HttpResponse
from django.urls import path

from config.urls import handler400, handler403, handler404, handler500  # noqa: F401
from config.urls import urlpatterns as site_urlpatterns

SECRET = "CHART-7731 of Jane Q Public"  # what a failing view had in hand


def boom(request: HttpRequest) -> HttpResponse:
    raise RuntimeError(SECRET)


def suspicious(request: HttpRequest) -> HttpResponse:
    raise SuspiciousOperation(SECRET)


urlpatterns = [
    path("boom/", boom),
    path("suspicious/", suspicious),
    path("api/registry/fhir/boom", boom),
    *site_urlpatterns,
]
