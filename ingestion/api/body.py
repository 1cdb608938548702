"""Reading a request body sent with ``Transfer-Encoding: chunked`` (no Content-Length).

Django reads a body only as far as ``CONTENT_LENGTH`` says, so a chunked body looks empty.
The server decodes the chunks; this reads the decoded stream directly, a block at a time, and
stops one byte past the limit: a body too large is refused (413) without being held whole.
"""

from __future__ import annotations

from typing import BinaryIO, cast

from rest_framework.request import Request

BLOCK_BYTES = 1 << 20


class BodyTooLarge(Exception):
    pass


def is_chunked(request: Request) -> bool:
    encoding = request.META.get("HTTP_TRANSFER_ENCODING", "")
    return "chunked" in encoding.lower() and not request.META.get("CONTENT_LENGTH")


def read_chunked(request: Request, limit: int) -> bytes:
    # WSGI: the server's decoded stream. ASGI: the body Django has already read whole (within
    # the front's limit, config/front.py), which HttpRequest.read() gives in full.
    stream = cast(BinaryIO, request.META.get("wsgi.input") or request._request)
    blocks: list[bytes] = []
    size = 0
    while True:
        block = stream.read(min(BLOCK_BYTES, limit + 1 - size))
        if not block:
            return b"".join(blocks)
        blocks.append(block)
        size += len(block)
        if size > limit:
            raise BodyTooLarge
