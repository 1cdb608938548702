"""Checking a submitted body at the door, and cutting it into chunks to stage.

The submit call must answer within milliseconds and must not map records, yet a body that is
not a JSON FHIR Bundle has to be refused there (400). msgspec validates the whole document in
C and hands back each ``Bundle.entry`` as a zero-copy ``Raw`` slice, so even a 70 MB batch is
checked and cut without building its Python objects. Whether it is one course of care or a
batch is decided by the pure core (:func:`ingestion.fhir.submission_kind`) from each entry's
resource type and request method.
"""

from __future__ import annotations

import codecs
import re
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate
from mmap import mmap
from typing import Literal, TypeAlias

import msgspec

from ingestion.fhir import submission_kind

UTF8_CHECK_SLICE = 1 << 20
# Bodies are read in blocks of this size where a whole-body copy would be needed.
BLOCK_BYTES = 8 << 20

# A body is bytes, or a read-only map of the file the web server spooled it to (never copied
# whole: each chunk's bytes are cut from it as that chunk is staged).
Body: TypeAlias = bytes | mmap
# Deepest nesting of arrays and objects a submitted body may have (docs/reliability.md).
MAX_NESTING = 64


class NotABundle(Exception):
    """The body is not a JSON FHIR Bundle. The message is safe to show: it echoes no content."""


class _Resource(msgspec.Struct):
    resourceType: object = None


class _Request(msgspec.Struct):
    method: object = None


_NULL = msgspec.Raw(b"null")


class _EntryHead(msgspec.Struct):
    resource: msgspec.Raw = _NULL
    request: msgspec.Raw = _NULL


@dataclass(frozen=True, slots=True)
class Chunk:
    seq: int
    first_index: int
    entry_count: int
    plaintext: bytes  # single: the whole Bundle; batch: a JSON array of entries


@dataclass(frozen=True, slots=True)
class Submission:
    """A checked body. ``chunks()`` builds each chunk's bytes only when it is asked for."""

    kind: Literal["single", "batch"]
    body: Body
    entries: list[msgspec.Raw]
    bounds: tuple[tuple[int, int], ...]  # (first entry index, entry count) per chunk

    @property
    def entry_count(self) -> int:
        """The courses of care it holds, as the receipt counts them: a single-course Bundle is
        one, however many resources its own entries hold; a batch, one per entry."""
        return 1 if self.kind == "single" else len(self.entries)

    def chunks(self) -> Iterator[Chunk]:
        if self.kind == "single":
            yield Chunk(0, 0, 1, bytes(self.body))
            return
        for seq, (first, count) in enumerate(self.bounds):
            pieces = [bytes(raw) for raw in self.entries[first : first + count]]
            yield Chunk(seq, first, count, b"[" + b",".join(pieces) + b"]")


_top_decoder = msgspec.json.Decoder(dict[str, msgspec.Raw])
_entries_decoder = msgspec.json.Decoder(list[msgspec.Raw])
_head_decoder = msgspec.json.Decoder(_EntryHead)
_resource_decoder = msgspec.json.Decoder(_Resource)
_request_decoder = msgspec.json.Decoder(_Request)


_BLANK = re.compile(rb"\s*\Z")


def parse_submission(body: Body, *, chunk_entries: int, chunk_bytes: int) -> Submission:
    if _BLANK.match(body):
        raise NotABundle("The request body is empty; expected a JSON FHIR Bundle.")
    check_nesting(body)
    top = _decode_top(body)
    _check_utf8(body)
    if _decode_value(top.get("resourceType")) != "Bundle":
        raise NotABundle("resourceType must be 'Bundle'.")
    entries = _decode_entries(top.get("entry"))
    heads = [_entry_head(raw) for raw in entries]
    kind = submission_kind(_decode_value(top.get("type")), heads)
    bounds = (
        ((0, len(entries)),) if kind == "single" else _bounds(entries, chunk_entries, chunk_bytes)
    )
    return Submission(kind=kind, body=body, entries=entries, bounds=bounds)


_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_STRUCTURE = bytes(set(range(256)) - set(b'"[]{}'))
# Depth is what matters here; a "[" closed by "}" is left for the JSON decoder to refuse. An
# opening bracket is a step of +1, a closing one of -1 (0xFF read as a signed byte).
_BRACKET_STEPS = bytes.maketrans(b"[]{}", b"\x01\xff\x01\xff")
# Brackets counted per C call: a bounded hold of the GIL, so the event loop keeps answering.
DEPTH_BLOCK = 1 << 20


def check_nesting(body: Body, limit: int = MAX_NESTING) -> None:
    """Refuse a body whose arrays and objects nest deeper than ``limit``, before any parser
    recurses into it (a deep enough body exhausts the stack of a recursive parser).

    Only quotes and brackets are kept (escapes dropped first), then the strings go; two
    adjacent quotes can always go (an empty string, or two strings with nothing between
    them), which leaves few strings for the regex. With braces read as square brackets, the
    depth is the highest running count of open brackets, taken a block at a time in C (one
    pass, however deep: a pass per level cost 20 s on 400,000 arrays nested 62 deep).
    Unclosed brackets are refused here too (a parser skipping them could recurse as deep).
    """
    structure = _structure(body).replace(b'""', b"")
    # An odd quote left over is deleted here: the decoder refuses it.
    deepest = _deepest(_STRING.sub(b"", structure).translate(_BRACKET_STEPS, b'"'))
    if deepest is None:
        raise NotABundle("The body is not valid JSON: its brackets do not match.")
    if deepest > limit:
        raise NotABundle(
            f"The body nests arrays and objects deeper than {limit} levels; a FHIR Bundle "
            "needs far fewer."
        )


def _deepest(steps: bytes) -> int | None:
    """The highest running sum of ``steps`` (bytes of +1 and -1), or None when the sum goes
    below zero or does not end at zero."""
    deepest, depth = 0, 0
    for start in range(0, len(steps), DEPTH_BLOCK):
        running = list(accumulate(array("b", steps[start : start + DEPTH_BLOCK]), initial=depth))
        if min(running) < 0:
            return None
        deepest, depth = max(deepest, max(running)), running[-1]
    return deepest if depth == 0 else None


def _structure(body: Body) -> bytes:
    """The body's quotes and brackets, escaped characters dropped, read a block at a time
    (a few percent of the body, never a whole copy of it)."""
    view = memoryview(body)
    parts: list[bytes] = []
    escaped_next = False  # the previous block ended with a backslash escaping this one's first
    for start in range(0, len(view), BLOCK_BYTES):
        block = bytes(view[start : start + BLOCK_BYTES])
        if escaped_next:
            block = block[1:]
        escaped_next = False
        if b"\\" in block:
            block = _ESCAPE.sub(b"", block)
            if block.endswith(b"\\"):  # only a trailing backslash can be left unpaired
                block, escaped_next = block[:-1], True
        parts.append(block.translate(None, _NOT_STRUCTURE))
    return b"".join(parts)


def _decode_top(body: Body) -> dict[str, msgspec.Raw]:
    try:
        return _top_decoder.decode(body)
    except msgspec.ValidationError:
        raise NotABundle("The body is JSON but not an object; expected a FHIR Bundle.") from None
    except msgspec.DecodeError as error:
        # msgspec names the byte offset, never the content.
        raise NotABundle(f"The body is not valid JSON: {error}.") from None


def _check_utf8(body: Body) -> None:
    """msgspec skips over strings inside Raw values without checking their encoding."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    view = memoryview(body)
    try:
        for start in range(0, len(view), UTF8_CHECK_SLICE):
            decoder.decode(view[start : start + UTF8_CHECK_SLICE])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise NotABundle("The body is not valid UTF-8 JSON.") from None


def _decode_value(raw: msgspec.Raw | None) -> object:
    if raw is None:
        return None
    return msgspec.json.decode(raw) if len(raw) < 256 else None


def _decode_entries(raw: msgspec.Raw | None) -> list[msgspec.Raw]:
    if raw is None:
        return []
    try:
        return _entries_decoder.decode(raw)
    except msgspec.ValidationError:
        return []  # not an array: the mapping reports it as a structural rejection


def _entry_head(raw: msgspec.Raw) -> tuple[object, object]:
    """(entry.resource.resourceType, entry.request.method), without decoding the rest."""
    try:
        head = _head_decoder.decode(raw)
    except msgspec.ValidationError:
        return None, None
    resource = _decode_struct(_resource_decoder, head.resource)
    request = _decode_struct(_request_decoder, head.request)
    return (
        resource.resourceType if isinstance(resource, _Resource) else None,
        request.method if isinstance(request, _Request) else None,
    )


def _decode_struct(decoder: msgspec.json.Decoder, raw: msgspec.Raw) -> object:
    try:
        return decoder.decode(raw)
    except msgspec.ValidationError:
        return None  # not an object: the mapping reports it where it matters


def _bounds(entries: list[msgspec.Raw], most: int, limit: int) -> tuple[tuple[int, int], ...]:
    """Cut the entries into chunks of at most ``most`` entries and about ``limit`` bytes."""
    bounds: list[tuple[int, int]] = []
    first, size = 0, 0
    for index, raw in enumerate(entries):
        count = index - first
        if count and (count >= most or size + len(raw) > limit):
            bounds.append((first, count))
            first, size = index, 0
        size += len(raw)
    if len(entries) > first:
        bounds.append((first, len(entries) - first))
    return tuple(bounds)
