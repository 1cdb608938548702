"""``/favicon.ico``: the registry's icon, for the browsers and tools that ask for it there.

Pages name the icon themselves (``<link rel="icon">``); this answers the request a browser
makes anyway on a page that names none (a JSON answer, a receipt), which would otherwise be a
404 and a ``Not Found`` warning in the log on every visit.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

ICON = "registry/favicon.svg"


@cache
def _icon() -> bytes:
    return Path(str(finders.find(ICON))).read_bytes()


@require_safe
def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(_icon(), content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
