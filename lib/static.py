"""Static files through WhiteNoise, cached by browsers and proxies for a year.

collectstatic (``CompressedManifestStaticFilesStorage``) gives every file a name holding a
hash of its content and writes gzip and brotli copies beside it; WhiteNoise answers with the
copy the client accepts (``Content-Encoding: br`` or ``gzip``). A hashed name never changes
content, so it may be cached for good: a year, the longest ``max-age`` caches are asked to
honour (WhiteNoise's own default is ten).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from csp.utils import build_policy
from whitenoise.middleware import WhiteNoiseMiddleware

ONE_YEAR = 365 * 24 * 60 * 60


class StaticFiles(WhiteNoiseMiddleware):
    FOREVER = ONE_YEAR

    def add_cache_headers(self, headers: Any, path: str, url: str) -> None:
        """WhiteNoise's hook for a file's headers (worked out once, at start): an HTML file
        (Swagger UI's oauth2-redirect.html) gets the pages' own security headers too, which
        the middleware after WhiteNoise would add to a page but never sees for a file."""
        super().add_cache_headers(headers, path, url)
        if path.endswith((".html", ".htm")):
            headers["Content-Security-Policy"] = build_policy()
            headers["X-Frame-Options"] = "DENY"


def static_files_stale() -> bool:
    """Whether collectstatic must run: no manifest, a file it lacks, or one changed since.

    Compressing every file again takes seconds (brotli, the API docs' bundles), so the
    commands that start the service collect only when something changed.
    """
    from django.conf import settings
    from django.contrib.staticfiles import finders

    manifest = Path(settings.STATIC_ROOT) / "staticfiles.json"
    try:
        built = manifest.stat().st_mtime
        collected = set(json.loads(manifest.read_text())["paths"])
    except (OSError, ValueError, KeyError):
        return True
    for finder in finders.get_finders():
        for path, storage in finder.list(["CVS", ".*", "*~"]):
            name = getattr(storage, "prefix", None)
            name = f"{name}/{path}" if name else path
            if name.replace("\\", "/") not in collected:
                return True
            if Path(storage.path(path)).stat().st_mtime > built:
                return True
    return False
