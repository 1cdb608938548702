"""The web front: slow and hostile clients are held off before a thread is spent on them.

gunicorn's asyncio ``asgi`` worker reads requests as coroutines, so a connection that sends a
header line a second, or trickles its body, costs a few kilobytes and no thread. Django's ASGI
handler reads the whole body before a thread runs the view. Two bounds keep such connections
from staying forever:

* **Header timeout** (:class:`Worker`): a connection whose request headers are not complete
  ``REGISTRY_HEADER_TIMEOUT_SECONDS`` after it opened is closed.
* **Body timeouts and size** (:class:`RequestLimits`, ASGI middleware): the body must keep
  coming (no gap longer than ``REGISTRY_BODY_IDLE_SECONDS``) and be complete within
  ``REGISTRY_BODY_TIMEOUT_SECONDS`` (408), and may not exceed ``REGISTRY_MAX_BODY_BYTES``,
  however it is framed, chunked included (413). Both answers are sent before the
  application sees a byte of the body; under ``/api/`` they are OperationOutcomes.

The same middleware serves **absolute-form request targets** (``GET http://host/healthz``),
which RFC 9112 section 3.2.2 says a server must accept: gunicorn hands them on as the path,
so Django would answer 404. The target becomes its path and query, and its authority
replaces the Host header, as the RFC says.

And the threads (:class:`OneHandOffHandler`): once its body is in, a request's synchronous
code, the middleware and the view, runs in one hand-off on one of ``REGISTRY_WEB_THREADS``
long-lived threads, not on a thread started for it.

While a body comes in, the event loop only counts its pieces and writes them to the file
Django spools it to; checking and decoding it run on the request's thread. A thread keeps
the GIL for as long as one C call lasts, though, and decoding issue 31's body (25 million
values) was such a call, seconds long, while the loop answered nobody. So the door counts a
body's values a MiB per call and refuses one over the limits before anything decodes it
(ingestion/fhir/shape.py, the API's ``_parse``).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import re
import time
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import FileResponse, HttpRequest, HttpResponseBase
from django.urls import set_script_prefix
from gunicorn.asgi.protocol import ASGIProtocol
from gunicorn.workers.gasgi import ASGIWorker

from ingestion.fhir.outcome import IssueCode, error_outcome

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[..., Awaitable[None]]

API_PREFIX = "/api/"
DISCONNECT: Message = {"type": "http.disconnect"}


# --- Header timeout: the worker ----------------------------------------------------------------


class HeaderTimeoutProtocol(ASGIProtocol):
    """gunicorn's protocol, closing a connection whose first request's headers are late."""

    header_timeout = 10.0

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer = self.worker.loop.call_later(self.header_timeout, self._headers_late)

    def _on_headers_complete(self) -> Any:
        self._header_timer.cancel()
        return super()._on_headers_complete()

    def connection_lost(self, exc: Exception | None) -> None:
        self._header_timer.cancel()
        super().connection_lost(exc)

    def _headers_late(self) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.close()


class Worker(ASGIWorker):
    """``worker_class`` of config/gunicorn.py: gunicorn's asgi worker with a header timeout."""

    def init_process(self) -> None:
        from django.conf import settings

        HeaderTimeoutProtocol.header_timeout = settings.REGISTRY_HEADER_TIMEOUT_SECONDS
        import gunicorn.workers.gasgi as gasgi

        gasgi.ASGIProtocol = HeaderTimeoutProtocol
        super().init_process()


# --- Absolute-form request targets ------------------------------------------------------------

ABSOLUTE_FORM = re.compile(r"\A(?i:https?)://(?P<authority>[^/?#]*)(?P<path>.*)\Z", re.DOTALL)
ABSOLUTE_FORM_RAW = re.compile(rb"\A(?i:https?)://[^/?#]*(?P<path>.*)\Z", re.DOTALL)


def origin_form(scope: Scope) -> Scope:
    """The scope of ``GET http://host:port/path?query`` as if ``GET /path?query`` with
    ``Host: host:port`` had been sent (RFC 9112 section 3.2.2). The connection's scheme is
    kept: a client's word does not make a plain connection secure."""
    match = ABSOLUTE_FORM.match(scope.get("path", ""))
    if match is None:
        return scope
    authority = match["authority"].rpartition("@")[2]  # userinfo is not for requests
    raw = ABSOLUTE_FORM_RAW.match(scope.get("raw_path") or b"")
    rewritten = dict(scope)
    rewritten["path"] = match["path"] or "/"
    rewritten["raw_path"] = (raw["path"] if raw else b"") or b"/"
    if authority:
        headers = [(name, value) for name, value in scope["headers"] if name != b"host"]
        rewritten["headers"] = [*headers, (b"host", authority.encode("latin-1"))]
    return rewritten


# --- Body limits: ASGI middleware --------------------------------------------------------------


class RequestLimits:
    """Wraps the Django ASGI application; see the module's docstring."""

    def __init__(self, app: App, *, limit: int, idle: float, total: float) -> None:
        self.app, self.limit, self.idle, self.total = app, limit, idle, total

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        scope = origin_form(scope)
        body = _LimitedBody(scope, receive, send, self)
        await self.app(scope, body.receive, send)


class _LimitedBody:
    """One request's ``receive``: the body within its limits, or an answer and a disconnect."""

    def __init__(self, scope: Scope, receive: Receive, send: Send, limits: RequestLimits) -> None:
        self.scope, self._receive, self._send, self.limits = scope, receive, send, limits
        self.deadline = time.monotonic() + limits.total
        self.declared, self.size = _declared_length(scope), 0
        self.refused = False
        self.complete = False

    async def receive(self) -> Message:
        if self.refused:
            return DISCONNECT
        if self.declared > self.limits.limit:  # declared too large: not a byte of it is read
            return await self._refuse(413, "too-costly", self._too_large())
        if self.complete:  # after the body, the app only waits for a disconnect
            return await self._receive()
        wait = min(self.limits.idle, self.deadline - time.monotonic())
        try:
            async with asyncio.timeout(max(wait, 0.001)):  # no task of its own, as wait_for
                message = await self._receive()
        except TimeoutError:
            return await self._refuse(408, "timeout", "The request body did not arrive in time.")
        if message["type"] == "http.request":
            self.size += len(message.get("body", b""))
            if self.size > self.limits.limit:
                return await self._refuse(413, "too-costly", self._too_large())
            self.complete = not message.get("more_body", False)
        return message

    def _too_large(self) -> str:
        return f"The body is larger than the limit of {self.limits.limit} bytes."

    async def _refuse(self, status: int, code: IssueCode, diagnostics: str) -> Message:
        self.refused = True
        api = str(self.scope.get("path", "")).startswith(API_PREFIX)
        body, content_type = _answer(api, status, code, diagnostics)
        headers = [(b"content-type", content_type), (b"connection", b"close")]
        if not api:  # a page drawn here, outside Django's middleware: the same policy
            headers.append((b"content-security-policy", _content_security_policy()))
        await self._send({"type": "http.response.start", "status": status, "headers": headers})
        await self._send({"type": "http.response.body", "body": body})
        return DISCONNECT


def _declared_length(scope: Scope) -> int:
    """Content-Length as declared (0 when absent, as for chunked bodies: those are counted)."""
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return max(int(value), 0)
            except ValueError:
                return 0
    return 0


def _content_security_policy() -> bytes:
    from csp.utils import build_policy  # reads the settings: Django is set up by now

    return build_policy().encode("latin-1")


def _answer(api: bool, status: int, code: IssueCode, diagnostics: str) -> tuple[bytes, bytes]:
    if api:
        outcome = error_outcome(code, diagnostics, expression="Bundle" if status == 413 else None)
        return json.dumps(outcome).encode(), b"application/fhir+json"
    from config.errors import error_page_html  # Django is set up by the time anyone asks

    return error_page_html(status, diagnostics).encode(), b"text/html; charset=utf-8"


# --- Threads: a bounded set, reused, and one hand-off per request ------------------------------


class OneHandOffHandler(ASGIHandler):
    """Django's ASGI handler, with a request's synchronous code on one of ``threads``
    long-lived threads, the middleware chain and the view in one call.

    * Django opens a thread-sensitive context per request, and asgiref gives each such
      context a thread of its own: a thread started, and joined, for every request, and no
      bound on how many run at once. Here, once the body has been read (a slow upload holds
      no thread), the request's context is opened with an executor of its own taken from a
      fixed set of single-thread executors (asgiref's ``ThreadSensitiveContext(executor=)``;
      Django's own context then changes nothing). A request waits, as a coroutine, for a
      free one. What a thread keeps (its database connection) is kept across requests.
    * Django builds an asynchronous middleware chain under ASGI and adapts each middleware
      that is only synchronous (WhiteNoise, among others), so a request went back and forth
      between the event loop and its thread at every such boundary, and again for the view.
      Every middleware and view here is synchronous: the chain is built as under WSGI and
      entered once. The body is still read, and the response sent, by the event loop.
    """

    def __init__(self, *, threads: int) -> None:  # not ASGIHandler's asynchronous chain
        self.load_middleware(is_async=False)
        self.threads = threads
        self._free: asyncio.Queue[ThreadPoolExecutor] | None = None

    def _executors(self) -> asyncio.Queue[ThreadPoolExecutor]:
        if self._free is None:  # made in the running loop, at the first request
            self._free = asyncio.Queue()
            for n in range(self.threads):
                prefix = f"request-{n}"
                self._free.put_nowait(ThreadPoolExecutor(1, thread_name_prefix=prefix))
        return self._free

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not {scope['type']}.")
        thread = _RequestThread(self._executors())
        token = _request_thread.set(thread)
        try:
            await self.handle(scope, receive, send)
        finally:
            await thread.release()
            _request_thread.reset(token)

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        """Django's ``handle``, with a response that is not streamed made, and closed (the
        ``request_finished`` signal: the database connection goes back), in the same single
        hand-off as ``request_started`` and the view: one trip to the thread, not three, and
        no task to listen for a disconnect that could not stop a synchronous view anyway.
        A streamed response (a receipt, a file) is sent as Django sends it: stopped when
        the client leaves, then closed."""
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            await signals.request_started.asend(sender=self.__class__, scope=scope)
            body_file.close()
            await self.send_response(error_response, send)
            await sync_to_async(error_response.close)()
            return
        response = await _request_thread.get().run(self._respond, request, scope)
        try:
            if response.streaming:
                await self._stream(response, receive, send)
            else:
                await self._send_made(response, send)
        finally:
            body_file.close()

    def _respond(self, request: HttpRequest, scope: Any) -> HttpResponseBase:
        signals.request_started.send(sender=self.__class__, scope=scope)
        response = self.get_response(request)
        response._handler_class = self.__class__  # type: ignore[attr-defined]
        if isinstance(response, FileResponse):
            response.block_size = self.chunk_size
        if not response.streaming:
            response.close()  # its content is made: request_finished now, in this thread
        return response

    async def _send_made(self, response: HttpResponseBase, send: Any) -> None:
        with contextlib.suppress(OSError):  # the client left meanwhile: nothing is owed to it
            await self.send_response(response, send)

    async def _stream(self, response: HttpResponseBase, receive: Any, send: Any) -> None:
        sending = asyncio.create_task(self.send_response(response, send))
        listening = asyncio.create_task(self.listen_for_disconnect(receive))
        await asyncio.wait([listening, sending], return_when=asyncio.FIRST_COMPLETED)
        for task in (listening, sending):
            if not task.done():
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, RequestAborted, OSError):
                await task
        await sync_to_async(response.close, thread_sensitive=True)()

    async def read_body(self, receive: Any) -> Any:
        body = await super().read_body(receive)
        await _request_thread.get().take()  # every synchronous step comes after the body
        return body

    def create_request(self, scope: Any, body_file: Any) -> Any:
        """The request, with the file Django spooled its body to as ``spooled_body``: the
        API maps large bodies from it instead of reading them into memory."""
        request, error_response = super().create_request(scope, body_file)
        if request is not None:
            request.spooled_body = body_file  # type: ignore[attr-defined]
        return request, error_response


class _RequestThread:
    """A request's hold on one of the handler's threads."""

    def __init__(self, free: asyncio.Queue[ThreadPoolExecutor]) -> None:
        self.free = free
        self.executor: ThreadPoolExecutor | None = None
        self.context: ThreadSensitiveContext | None = None

    async def take(self) -> None:
        self.executor = await self.free.get()
        self.context = ThreadSensitiveContext(executor=self.executor)
        await self.context.__aenter__()

    async def run(self, call: Callable[..., Any], *args: Any) -> Any:
        """``call(*args)`` on the request's thread, in a copy of the request's context. Not
        through ``sync_to_async``: nothing a synchronous view sets is wanted back in the event
        loop's context, and copying it back (asgiref's ``_restore_context``) cost a tenth of
        a request's hand-off."""
        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, context.run, call, *args)

    async def release(self) -> None:
        if self.context is not None:
            await self.context.__aexit__(None, None, None)
        if self.executor is not None:
            self.free.put_nowait(self.executor)


_request_thread: ContextVar[_RequestThread] = ContextVar("request_thread")
