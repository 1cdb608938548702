"""The site's URLconf plus the test-only API probe, for the browser test to try tokens on."""

from django.urls import include, path

from config.urls import urlpatterns as site_urlpatterns

urlpatterns = [path("probe/", include("tests.keys.urls")), *site_urlpatterns]
