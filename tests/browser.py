"""Debian's Chromium, driven by Playwright, for the browser tests (`make test` installs it).

No test tool downloads a browser of its own: Playwright launches /usr/bin/chromium with the
flags this machine's closed network needs. A missing browser is a failure, not a skip.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextmanager
def chromium_page(base_url: str, monkeypatch: Any, *, clipboard: bool = False) -> Iterator[Any]:
    """A page in a fresh headless Chromium, for ``base_url`` (a live server)."""
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: `make test` installs it (or run `make chromium`)")
    # Playwright's sync API runs an event loop in this thread, which Django's async-safety
    # check would object to. Tests write their data before the loop starts: a connection
    # opened inside it would belong to another context and outlive the test.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=FLAGS
        )
        context = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 900})
        if clipboard:
            context.grant_permissions(["clipboard-read", "clipboard-write"], origin=base_url)
        page = context.new_page()
        page.set_default_timeout(15_000)
        try:
            yield page
        finally:
            context.close()
            browser.close()
