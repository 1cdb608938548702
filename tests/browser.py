"""Debian's Chromium, driven by Playwright, for the browser tests (`make test` installs it).

No test tool downloads a browser of its own: Playwright launches /usr/bin/chromium with the
flags this machine's closed network needs. A missing browser is a failure, not a skip.

Every page opened through :func:`chromium_page` is watched: a Content-Security-Policy
violation (the ``securitypolicyviolation`` event, or Chromium's "Refused to ..." console
error) or a page resource that fails to load (a static file, the API docs' script) fails the
test that opened it, after its own checks passed.

One Playwright driver and one Chromium serve the whole session (:class:`SharedChromium`);
each test gets a browser context of its own, which shares no cookies, storage, cache or
permissions with any other. Starting the driver and the browser for each test cost 4 to 6 s
on a loaded machine, times some 160 browser tests.
"""

from __future__ import annotations

import asyncio
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


class SharedChromium:
    """The session's Playwright driver and Chromium, started at the first browser test.

    Playwright's sync API runs its event loop in a greenlet of the test's thread and marks the
    loop as running in that thread, which Django's async-safety check and ``async_to_sync``
    both look at. So that no other test runs beside a running loop, the loop is marked
    running only while a test holds a page (:meth:`held`), as when each test started its own
    driver; between tests nothing runs it and its driver waits on its pipe.
    """

    def __init__(self) -> None:
        self.playwright: Any = None
        self.browser: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.holders = 0

    @contextmanager
    def held(self) -> Iterator[Any]:
        """The browser, with the driver's loop marked running until the block ends."""
        self._resume()
        self.holders += 1
        try:
            if self.browser is None or not self.browser.is_connected():
                self.browser = self.playwright.chromium.launch(
                    executable_path=str(CHROMIUM), headless=True, args=FLAGS
                )
            yield self.browser
        finally:
            self.holders -= 1
            if not self.holders:
                self._pause()

    def stop(self) -> None:
        """At the session's end: the browser closed, the driver stopped, the loop closed."""
        if self.playwright is None:
            return
        self._resume()
        try:
            if self.browser is not None and self.browser.is_connected():
                self.browser.close()
        finally:
            self.playwright.stop()
            self.playwright = self.browser = self.loop = None

    def _resume(self) -> None:
        if self.playwright is None:
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.loop = asyncio.get_running_loop()  # the driver's, marked running by start()
        elif not self.holders:
            asyncio._set_running_loop(self.loop)  # as Playwright's own calls leave it

    def _pause(self) -> None:
        asyncio._set_running_loop(None)


SHARED = SharedChromium()


@contextmanager
def chromium_page(base_url: str, monkeypatch: Any, *, clipboard: bool = False) -> Iterator[Any]:
    """A page in a fresh browser context of the session's headless Chromium, for ``base_url``
    (a live server)."""
    if not CHROMIUM.exists():
        pytest.fail("no /usr/bin/chromium: `make test` installs it (or run `make chromium`)")
    # Playwright's sync API runs an event loop in this thread, which Django's async-safety
    # check would object to. Tests write their data before the page is opened: a connection
    # opened while the loop runs would belong to another context and outlive the test.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with SHARED.held() as browser:
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
