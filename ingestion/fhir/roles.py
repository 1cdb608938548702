"""A Patient's role in the course of care, read from its ``meta.profile``.

Only the last path segment of each profile is read, case-insensitively, after dropping any
``|version`` suffix, so that canonical URLs (``.../StructureDefinition/Patient-mother-vr``),
build.fhir.org page URLs (``.../StructureDefinition-Patient-mother-vr``) and bare names all
resolve, while a host or path that happens to contain a keyword does not. The keywords
are matched as substrings of that segment (camel-cased names such as ``PatientMother``
resolve too). ``mother``/``maternal`` is the mother; ``fetus``/``decedent`` is a child
born dead; ``child``/``newborn`` is a live-born child. The first profile that names a role
decides it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Literal

from .values import as_dict, as_list

PatientRole = Literal["mother", "live_child", "fetal_child"]

_MOTHER = re.compile("mother|maternal")
_FETAL = re.compile("fetus|decedent")
_LIVE = re.compile("child|newborn")
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}", re.ASCII)


def patient_role(patient: Mapping[str, Any]) -> tuple[PatientRole | None, str | None]:
    """The role and the declared IG version (the profile's ``|version``), if any."""
    for profile in as_list(as_dict(patient.get("meta")).get("profile")):
        if not isinstance(profile, str):
            continue
        canonical, _, version = profile.partition("|")
        role = _role_of(canonical)
        if role is not None:
            return role, _clean_version(version)
    return None, None


def _role_of(canonical: str) -> PatientRole | None:
    segment = canonical.rstrip("/").rpartition("/")[2].lower()
    if _MOTHER.search(segment):
        return "mother"
    if _FETAL.search(segment):
        return "fetal_child"
    if _LIVE.search(segment):
        return "live_child"
    return None


def _clean_version(version: str) -> str | None:
    version = version.strip()
    return version if _VERSION.fullmatch(version) else None
