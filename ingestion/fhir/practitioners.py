"""Providers from Practitioner resources (spec 2.3).

Stable id: the first ``identifier.value`` that is not an NPI (system
``http://hl7.org/fhir/sid/us-npi`` or an identifier type coded ``NPI``), else the resource
``id``; a candidate longer than 200 characters is passed over rather than cut, since a cut
key could merge two providers. No stable id: the Practitioner is skipped.

Role: the qualification texts (``code.text`` and every ``coding.display``) are matched
against the spec's keyword table in its order, whole words, case-insensitively, so
"Certified Nurse Midwife" is a midwife. Nothing matched: ``other``.

Display name: ``name[0].text``, else its given names then family. Credentials: the
suffixes of that name ("D.O.", "CNM"), else the qualification texts (code.text, else the
first coding display). Both collapse whitespace and are cut to 200 characters.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from .model import Provider, ProviderRole
from .values import (
    as_dict,
    as_list,
    as_str,
    clean_key,
    dicts,
    first_dict,
    has_code,
    short_text,
)

NPI_SYSTEM = "http://hl7.org/fhir/sid/us-npi"
_KEY_LIMIT = 200
_TEXT_LIMIT = 200
_NPI_LIMIT = 20  # an NPI is ten digits; anything much longer is not one

_ROLE_KEYWORDS: tuple[tuple[ProviderRole, re.Pattern[str]], ...] = (
    ("midwife", re.compile(r"\b(?:midwife|cnm|cpm|lm)\b", re.IGNORECASE)),
    ("doula", re.compile(r"\bdoula\b", re.IGNORECASE)),
    ("nurse", re.compile(r"\b(?:nurse|rn)\b", re.IGNORECASE)),
    ("assistant", re.compile(r"\bassistant\b", re.IGNORECASE)),
)


def provider_from(practitioner: Mapping[str, Any]) -> Provider | None:
    """The Provider a Practitioner describes, or None when it has no stable id."""
    stable_id = _stable_id(practitioner)
    if stable_id is None:
        return None
    name = first_dict(practitioner.get("name"))
    qualification_texts = list(_qualification_texts(practitioner))
    return Provider(
        stable_id=stable_id,
        role=role_from_texts(qualification_texts),
        npi=_npi(practitioner),
        display_name=_display_name(name),
        credentials=_credentials(name, practitioner),
    )


def role_from_texts(texts: list[str]) -> ProviderRole:
    joined = "\n".join(texts)
    for role, keywords in _ROLE_KEYWORDS:
        if keywords.search(joined):
            return role
    return "other"


def carries_attendant_marker(practitioner: Mapping[str, Any]) -> bool:
    """BFDR's practitioner-role extension saying "attendant" (recorded as present only)."""
    for extension in dicts(practitioner.get("extension")):
        url = as_str(extension.get("url")) or ""
        if extension.get("valueCode") == "attendant" and "role" in url.lower():
            return True
    return False


def _is_npi(identifier: Mapping[str, Any]) -> bool:
    if identifier.get("system") == NPI_SYSTEM:
        return True
    return has_code(identifier.get("type"), "NPI")


def _stable_id(practitioner: Mapping[str, Any]) -> str | None:
    for identifier in dicts(practitioner.get("identifier")):
        if not _is_npi(identifier):
            value = clean_key(identifier.get("value"), _KEY_LIMIT)
            if value is not None:
                return value
    return clean_key(practitioner.get("id"), _KEY_LIMIT)


def _npi(practitioner: Mapping[str, Any]) -> str | None:
    for identifier in dicts(practitioner.get("identifier")):
        if _is_npi(identifier):
            value = clean_key(identifier.get("value"), _NPI_LIMIT)
            if value is not None:
                return value
    return None


def _qualification_texts(practitioner: Mapping[str, Any]) -> Iterator[str]:
    for qualification in dicts(practitioner.get("qualification")):
        code = as_dict(qualification.get("code"))
        text = as_str(code.get("text"))
        if text:
            yield text
        for coding in dicts(code.get("coding")):
            display = as_str(coding.get("display"))
            if display:
                yield display


def _display_name(name: Mapping[str, Any]) -> str:
    text = short_text(name.get("text"), _TEXT_LIMIT)
    if text is not None:
        return text
    parts = [part for part in as_list(name.get("given")) if isinstance(part, str)]
    family = as_str(name.get("family"))
    if family:
        parts.append(family)
    return short_text(" ".join(parts), _TEXT_LIMIT) or ""


def _credentials(name: Mapping[str, Any], practitioner: Mapping[str, Any]) -> str:
    suffixes = [part.strip() for part in as_list(name.get("suffix")) if isinstance(part, str)]
    suffixes = [part for part in suffixes if part] or list(_qualification_summaries(practitioner))
    return short_text(", ".join(dict.fromkeys(suffixes)), _TEXT_LIMIT) or ""


def _qualification_summaries(practitioner: Mapping[str, Any]) -> Iterator[str]:
    """One text per qualification: its code.text, else its first coding display."""
    for qualification in dicts(practitioner.get("qualification")):
        code = as_dict(qualification.get("code"))
        text = (as_str(code.get("text")) or "").strip()
        if not text:
            first = first_dict(code.get("coding"))
            text = (as_str(first.get("display")) or "").strip()
        if text:
            yield text
