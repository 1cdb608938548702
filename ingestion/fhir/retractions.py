r"""Retractions sent as a batch or transaction entry with ``request.method`` DELETE.

The chart number comes from ``request.url``, as ``Bundle?identifier=[system|]VALUE`` or
``Bundle/VALUE`` (optionally after a base URL), percent-decoded (a ``+`` stays a ``+``).
The identifier is a FHIR search token: everything after its first unescaped ``|`` is the
chart number, and ``\|``, ``\,``, ``\$`` and ``\\`` stand for the character itself. So a chart
number holding ``|`` is sent as ``identifier=|AB|12`` (no system), ``identifier=AB\|12``,
``identifier=<system>|AB|12`` or ``Bundle/AB%7C12``.
When the url names none, the entry resource's ``identifier.value`` is used. A Composition
with status ``entered-in-error`` (the other way to retract) is read with the document, in
:mod:`ingestion.fhir.course`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from .chart import read_chart_number
from .model import Rejection, Retraction
from .outcome import issue, operation_outcome
from .values import as_dict, as_str, first_dict

_SEARCH = re.compile(r"(?:^|/)Bundle\?([^#]*)")
_READ = re.compile(r"(?:^|/)Bundle/([^/?#]+)")


def delete_retraction(entry: Mapping[str, Any], reference: str) -> Retraction | Rejection:
    """The Retraction a DELETE entry asks for, or why it cannot be acted on."""
    expression = f"{reference}.request.url"
    named = _named_in_url(as_dict(entry.get("request")).get("url"))
    if not (named and named.strip()):
        named = _resource_identifier(entry.get("resource"))
    if named is None:
        problem = issue(
            "required",
            "The DELETE entry names no chart number: send request.url as"
            " Bundle?identifier=<chart number> or Bundle/<chart number>.",
            expression=expression,
        )
        return Rejection(reference, operation_outcome(problem))
    chart_number = read_chart_number(named, expression)
    if isinstance(chart_number, dict):
        return Rejection(reference, operation_outcome(chart_number))
    return Retraction(reference, chart_number)


def _named_in_url(url: object) -> str | None:
    if not isinstance(url, str):
        return None
    search = _SEARCH.search(url)
    if search is not None:
        return _identifier_parameter(search[1])
    read = _READ.search(url)
    return unquote(read[1]) if read is not None else None


def _identifier_parameter(query: str) -> str | None:
    for parameter in query.split("&"):
        name, _, value = parameter.partition("=")
        if unquote(name) == "identifier":
            return _token_code(unquote(value))
    return None


_SYSTEM = re.compile(r"(?:\\.|[^\\|])*\|", re.DOTALL)
_ESCAPED = re.compile(r"\\([\\|,$])")


def _token_code(token: str) -> str:
    """The code of a FHIR token ``[system|]code``, its search escapes resolved."""
    system = _SYSTEM.match(token)
    code = token[system.end() :] if system is not None else token
    return _ESCAPED.sub(r"\1", code)


def _resource_identifier(resource: object) -> str | None:
    identifier = as_dict(resource).get("identifier")
    if isinstance(identifier, list):
        identifier = first_dict(identifier)
    return as_str(as_dict(identifier).get("value"))
