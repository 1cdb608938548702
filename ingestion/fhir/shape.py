"""How many JSON values a body holds, counted on its bytes before anything decodes it.

The size and depth limits leave a body's shape free: 47.7 MiB of empty arrays nested 62 deep
is 25 million values, and decoding those into Python objects took half a minute and 2.7 GB.
Counting values bounds that work whatever the shape, and costs a few passes of C over the
bytes, a block at a time.

A value is counted by the byte that must come with it: an array or an object by its opening
bracket, and every value (or object member) after the first in its container by the comma
before it; plus one for the body itself. Only brackets and commas outside strings count.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from mmap import mmap
from typing import TypeAlias

import msgspec

from .model import Rejection
from .outcome import error_outcome

# What a body or an entry may be: bytes, the map of a spooled body, or msgspec's slice of it.
Buffer: TypeAlias = bytes | memoryview | mmap | msgspec.Raw

# Bytes per C call: each call holds the GIL for milliseconds, so the event loop keeps answering.
BLOCK_BYTES = 1 << 20
_ESCAPE = re.compile(rb"\\.", re.DOTALL)
_STRING = re.compile(rb'"[^"]*"')
_NOT_MARK = bytes(set(range(256)) - set(b'"[{,'))


def values_over(body: Buffer, limit: int) -> bool:
    """Whether ``body`` holds more than ``limit`` values. Cheap bounds first: a body holds
    no more values than bytes, nor more than its brackets and commas, strings included."""
    view = memoryview(body).cast("B")
    if len(view) < limit:
        return False
    return _marks_anywhere(view) + 1 > limit and values_in(view) > limit


def first_over(entries: Iterable[Buffer], limit: int) -> int | None:
    """The index of the first of ``entries`` holding more than ``limit`` values, if any."""
    for index, entry in enumerate(entries):
        if values_over(entry, limit):
            return index
    return None


def too_many_values(where: str, limit: int, *, per_entry: bool) -> str:
    """What a client is told of a body or an entry (``where``) over the body's limit or the
    entry's (a single Bundle is held to the entry's limit whole)."""
    per = "entry (a single Bundle counts as one entry)" if per_entry else "body"
    return (
        f"{where} holds more than {limit:,} JSON values (arrays, objects and the values in "
        f"them), the limit per {per}; send it in parts or send fewer, flatter values."
    )


def too_many_values_rejection(reference: str, limit: int) -> Rejection:
    """An entry (or a single Bundle) stored before the limit was checked, refused unread."""
    where = "This entry" if "entry" in reference else "The body"
    diagnostics = too_many_values(where, limit, per_entry=True)
    outcome = error_outcome("too-costly", diagnostics, expression=reference)
    return Rejection(reference=reference, operation_outcome=outcome)


def values_in(body: Buffer) -> int:
    """The number of values in ``body`` (a JSON text), as the module's docstring counts."""
    view = memoryview(body).cast("B")
    count, inside, escaped_next = 1, False, False
    for start in range(0, len(view), BLOCK_BYTES):
        marks, escaped_next = _marks(bytes(view[start : start + BLOCK_BYTES]), escaped_next)
        outside, inside = _outside_strings(marks, inside)
        count += len(outside)
    return count


def _marks_anywhere(view: memoryview) -> int:
    count = 0
    for start in range(0, len(view), BLOCK_BYTES):
        block = bytes(view[start : start + BLOCK_BYTES])
        count += block.count(b"[") + block.count(b"{") + block.count(b",")
    return count


def _marks(block: bytes, escaped_next: bool) -> tuple[bytes, bool]:
    """The block's quotes, opening brackets and commas, escaped characters dropped, and
    whether its last backslash escapes the next block's first character."""
    if escaped_next:
        block = block[1:]
    escaped_next = False
    if b"\\" in block:
        block = _ESCAPE.sub(b"", block)
        if block.endswith(b"\\"):  # only a trailing backslash can be left unpaired
            block, escaped_next = block[:-1], True
    return block.translate(None, _NOT_MARK), escaped_next


def _outside_strings(marks: bytes, inside: bool) -> tuple[bytes, bool]:
    """The marks outside strings, and whether the block ends inside one. Two adjacent quotes
    can always go (an empty string, or two strings with nothing between them), which leaves
    few strings for the regex; a quote left over opens a string the next block goes on with."""
    if inside:
        closing = marks.find(b'"')
        if closing < 0:
            return b"", True
        marks = marks[closing + 1 :]
    outside, quote, _ = _STRING.sub(b"", marks.replace(b'""', b"")).partition(b'"')
    return outside, bool(quote)
