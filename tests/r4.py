"""Is this JSON valid FHIR R4? Two independent readings must both accept it.

fhirclient's models are generated from FHIR 4.0.1 itself and refuse a missing required
element (strict, the default); fhir.resources' R4B models (pydantic) check cardinalities and
primitive types. R4B changed none of the resources used here in a way that matters.
"""

from __future__ import annotations

import copy
from typing import Any

import fhirclient.models.fhirelementfactory as fhirclient_factory
from fhir.resources.R4B import get_fhir_model_class


def assert_valid_r4(resource: dict[str, Any]) -> None:
    kind = resource["resourceType"]
    get_fhir_model_class(kind).model_validate(copy.deepcopy(resource))
    model = fhirclient_factory.FHIRElementFactory.instantiate(kind, copy.deepcopy(resource))
    model.as_json()  # serialising checks the required elements once more
