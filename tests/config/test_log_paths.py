"""The path a log writes: ids and tokens masked, the routes' shapes kept."""

from __future__ import annotations

import logging
import sys

import pytest

from lib.logfilters import KindOnly, MaskedPaths, logged_path, logged_request_line


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        ("/api/registry/fhir/", "/api/registry/fhir/"),
        ("/api/registry/fhir/metadata", "/api/registry/fhir/metadata"),
        ("/api/registry/fhir/Bundle", "/api/registry/fhir/Bundle"),
        ("/api/registry/fhir/Bundle/$validate", "/api/registry/fhir/Bundle/$validate"),
        ("/api/registry/fhir/Bundle/chart-4711", "/api/registry/fhir/Bundle/:id"),
        (
            "/api/registry/fhir/ingestions/0b6c1c9e-2f9b-4a0e-9d7e-3a1f5b7c9d2e",
            "/api/registry/fhir/ingestions/:id",
        ),
        ("/api/registry/fhir/Patient/pat-mk-77aa1", "/api/registry/fhir/:id"),
        ("/api/registry/fhir/Smith", "/api/registry/fhir/:id"),
        ("/accounts/reset/Mjc/c3po42-8f1d2a6b9e0c4d7f/", "/accounts/reset/:id/"),
        ("/accounts/reset/Mjc/set-password/", "/accounts/reset/:id/"),
        ("/accounts/reset/done/", "/accounts/reset/done/"),
        ("/admin/registry/record/41/change/", "/admin/registry/record/:id/change/"),
        ("/settings/statistics/?practice=st-mary", "/settings/statistics/"),
        ("/static/registry/site.3f2a.css", "/static/registry/site.3f2a.css"),
    ],
)
def test_a_logged_path_masks_ids_and_tokens(path, logged):
    assert logged_path(path) == logged
    assert logged_request_line(f"GET {path} HTTP/1.1") == f"GET {logged} HTTP/1.1"


def test_djangos_request_log_names_the_masked_path():
    record = logging.LogRecord(
        "django.request", logging.WARNING, __file__, 1, "%s: %s", ("Not Found", "/x/"), None
    )
    record.args = ("Not Found", "/api/registry/fhir/Patient/pat-mk-77aa1")
    record.request = object()
    assert MaskedPaths().filter(record)
    assert record.getMessage() == "Not Found: /api/registry/fhir/:id"
    assert record.request is None


def test_an_error_in_a_log_line_names_its_file_relative_to_the_project():
    try:
        int("not a number")
    except ValueError:
        record = logging.LogRecord(
            "registry", logging.ERROR, __file__, 1, "failed", None, sys.exc_info()
        )
    assert KindOnly().filter(record)
    message = record.getMessage()
    assert "(ValueError at tests/config/test_log_paths.py:" in message, message
    assert "/work" not in message and "not a number" not in message
