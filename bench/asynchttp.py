"""A small HTTP/1.1 client on asyncio streams, for the open-loop section's many clients.

bench.openloop keeps hundreds of requests in flight when the server falls behind, on one
event loop that must also keep the arrivals on time. httpx's AsyncClient cost the bench
8-10 ms of CPU per single (a POST and two polls) on the 2-core machine, as much as the
web's own share, and with some 900 connections open its pool (each request scanning every
connection) stalled a run for minutes. This client does only what the bench needs: a
request with a body of bytes, the answer's status, headers and body (by Content-Length or
chunked), and kept connections reused last-in first-out, dropped after ``keepalive``
seconds idle (under the web's 2 s, as nginx does: deploy/nginx/registry.conf). A kept
connection that the server closed as it was reused is replaced and the request sent again.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]  # names in lower case
    body: bytes
    resent: int = 0  # times the request was sent again on a fresh connection


class Closed(Exception):
    """The connection ended before a whole answer came."""


class Client:
    def __init__(self, host: str, port: int, *, keepalive: float = 1.0) -> None:
        self.host, self.port, self.keepalive = host, port, keepalive
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter, float]] = []

    async def request(
        self, method: str, path: str, headers: dict[str, str], body: bytes = b""
    ) -> Answer:
        head = f"{method} {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        message = (head + f"Content-Length: {len(body)}\r\n\r\n").encode() + body
        for attempt in range(3):
            reader, writer = await self._connection()
            try:
                writer.write(message)
                status, headers_in, content, reusable = await _answer(reader)
            except (Closed, ConnectionError):
                writer.close()
                if attempt == 2:
                    raise
                continue
            if reusable:
                self._idle.append((reader, writer, time.monotonic()))
            else:
                writer.close()
            return Answer(status, headers_in, content, attempt)
        raise AssertionError("unreachable")

    async def _connection(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        now = time.monotonic()
        while self._idle:
            reader, writer, since = self._idle.pop()
            if now - since < self.keepalive and not reader.at_eof():
                return reader, writer
            writer.close()
        reader, writer = await asyncio.open_connection(self.host, self.port)
        return reader, writer

    async def close(self) -> None:
        for _, writer, _ in self._idle:
            writer.close()
        self._idle.clear()


async def _answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes, bool]:
    """Status, headers, body, and whether the connection may be kept."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as error:
        raise Closed from error
    status_line, _, raw_headers = head.decode("latin-1").partition("\r\n")
    status = int(status_line.split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in raw_headers.split("\r\n"):
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    try:
        if headers.get("transfer-encoding", "").lower() == "chunked":
            body = await _chunked(reader)
        elif "content-length" in headers:
            body = await reader.readexactly(int(headers["content-length"]))
        else:
            return status, headers, await reader.read(), False
    except asyncio.IncompleteReadError as error:
        raise Closed from error
    reusable = headers.get("connection", "").lower() != "close"
    return status, headers, body, reusable


async def _chunked(reader: asyncio.StreamReader) -> bytes:
    parts = []
    while True:
        size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
        if size == 0:
            await reader.readuntil(b"\r\n")  # no trailers are sent
            return b"".join(parts)
        parts.append(await reader.readexactly(size))
        await reader.readexactly(2)
