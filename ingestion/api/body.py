"""Reading a request body without holding it in memory twice.

* Under ASGI (config/front.py), Django has spooled the body to a temporary file (on disk past
  ``FILE_UPLOAD_MAX_MEMORY_SIZE``) before the view runs, whatever its framing. A large body
  is mapped from that file read-only (:func:`spooled_body`), not read into memory: the
  parser validates it in place and each chunk's bytes are cut from it as the chunk is
  staged, so the web holds about one body, in the page cache, not several copies.
* Under WSGI (tests, ``runserver``), Django reads a body only as far as ``CONTENT_LENGTH``
  says, so a chunked body looks empty: the server decodes the chunks, and
  :func:`read_chunked` reads the decoded stream a block at a time, stopping one byte past
  the limit, so a body too large is refused (413) without being held whole.
"""

from __future__ import annotations

import mmap
import os
from typing import IO, BinaryIO, cast

from django.conf import settings
from rest_framework.request import Request

from ingestion.intake.submission import Body

BLOCK_BYTES = 1 << 20


class BodyTooLarge(Exception):
    pass


def spooled_body(request: Request, limit: int) -> Body | None:
    """The body Django spooled under ASGI (None under WSGI): small ones read, large ones
    mapped read-only from the spooled file."""
    spooled = cast(IO[bytes] | None, getattr(request._request, "spooled_body", None))
    if spooled is None:
        return None
    size = spooled.seek(0, os.SEEK_END)
    if size > limit:
        raise BodyTooLarge
    spooled.seek(0)
    if size <= settings.FILE_UPLOAD_MAX_MEMORY_SIZE:
        return spooled.read()
    return mmap.mmap(spooled.fileno(), 0, access=mmap.ACCESS_READ)


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
