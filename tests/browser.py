"""Debian's Chromium, driven by Playwright, for the browser tests (`make test` installs it).

No test tool downloads a browser of its own: Playwright launches /usr/bin/chromium with the
flags this machine's closed network needs. A missing browser is a failure, not a skip.

Every page opened through :func:`chromium_page` is watched: a Content-Security-Policy
violation (the ``securitypolicyviolation`` event, or Chromium's "Refused to ..." console
error) or a page resource that fails to load (a static file, the API docs' script) fails the
test that opened it, after its own checks passed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
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


# Reported from inside the page, before any of its scripts run (an init script is not subject
# to the page's policy), as a console message the watcher recognises.
REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  console.error(`CSP violation: ${event.violatedDirective} blocked ${event.blockedURI || "inline"}`
    + ` at ${event.sourceFile || document.location.pathname}:${event.lineNumber}`);
});
"""
NOT_ASSETS = ("/favicon.ico",)  # asked for by the browser itself, not by a page


@dataclass
class Watcher:
    """What went wrong on the pages of one test: CSP violations and resources that failed."""

    problems: list[str] = field(default_factory=list)

    def console(self, message: Any) -> None:
        text = message.text
        if text.startswith("CSP violation") or "Content Security Policy" in text:
            self.problems.append(text)

    def response(self, response: Any) -> None:
        request = response.request
        if request.resource_type == "document" or request.url.endswith(NOT_ASSETS):
            return  # an error page is a page; only what a page loads is an asset
        if response.status >= 400:
            self.problems.append(f"{response.status} for {request.resource_type} {request.url}")

    def failed(self, request: Any) -> None:
        if request.failure != "net::ERR_ABORTED" and not request.url.endswith(NOT_ASSETS):
            self.problems.append(f"{request.failure} for {request.resource_type} {request.url}")


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
        context.add_init_script(REPORT_VIOLATIONS)
        page = context.new_page()
        page.set_default_timeout(15_000)
        watcher = Watcher()
        page.registry_watcher = watcher  # for a test that looks at what it saw
        page.on("console", watcher.console)
        page.on("response", watcher.response)
        page.on("requestfailed", watcher.failed)
        try:
            yield page
            problems = ["Pages broke under the CSP:", *watcher.problems]
            assert not watcher.problems, "\n".join(problems)
        finally:
            context.close()
            browser.close()
