"""Privacy by construction: nothing identifying outlives the ingestion.

Real corpus documents and synthetic courses go through the real API and pipeline; then the
whole database is dumped with pg_dump, the queued Celery message is read from Redis, and the
captured logs are searched for every name, mother's birth date, full postal code, patient id,
telecom and patient identifier that was submitted.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import subprocess
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from django.db import connection

from ingestion.models import Ingestion
from ingestion.pipeline.process import ingestion_process
from registry.models import Practice, Record
from tests.factories import batch, course
from tests.ingestion.conftest import Api, ingestion_id_of, mint

CORPUS = Path(__file__).resolve().parent / "fixtures/bfdr-examples"
DOCUMENTS = [
    "BirthRecordBabyGQuinn.json",
    "BasicBirthRecord2.json",
    "BirthRecordFakeNoRace.json",
    "FetalDeathReport.json",
    "BirthRecordSubmissionMessage.json",
    "BatchSingleBirthMessage.json",
    "BirthRecordR.json",
]

pytestmark = pytest.mark.django_db(transaction=True)


def patients(node: Any):
    """Every Patient anywhere in a Bundle, however deeply nested."""
    if isinstance(node, dict):
        if node.get("resourceType") == "Patient":
            yield node
        for value in node.values():
            yield from patients(value)
    elif isinstance(node, list):
        for value in node:
            yield from patients(value)


def is_mother(patient: dict) -> bool:
    return any("mother" in str(p).lower() for p in patient.get("meta", {}).get("profile", []))


def birth_times(patient: dict) -> set[str]:
    """The patient-birthTime extension on ``_birthDate``, as sent.

    (Not the clock time alone: a timestamp of the test run itself could hold it.)
    """
    times = set()
    for extension in patient.get("_birthDate", {}).get("extension", []):
        value = extension.get("valueDateTime")
        if extension.get("url", "").endswith("patient-birthTime") and value and "T" in value:
            times.add(value)
    return times


def identifying_values(bundle: dict) -> set[str]:
    found: set[str] = set()
    for patient in patients(bundle):
        for name in patient.get("name", []):
            found.update(v for v in [name.get("family"), *name.get("given", [])] if v)
        if is_mother(patient) and len(patient.get("birthDate", "")) == 10:
            found.add(patient["birthDate"])
        for address in patient.get("address", []):
            if len(address.get("postalCode", "")) > 3:
                found.add(address["postalCode"])
            found.update(line for line in address.get("line", []) if len(line) > 4)
        found.update(t["value"] for t in patient.get("telecom", []) if t.get("value"))
        found.update(i["value"] for i in patient.get("identifier", []) if i.get("value"))
        if len(patient.get("id") or "") >= 8:  # "mother" is also a word in field names
            found.add(patient["id"])
        found.update(birth_times(patient))
    return {value for value in found if isinstance(value, str) and len(value) >= 4}


def dump_database() -> str:
    params = connection.settings_dict
    result = subprocess.run(
        [
            "pg_dump",
            "--data-only",
            "-h",
            params.get("HOST") or "127.0.0.1",
            "-p",
            str(params.get("PORT") or 5432),
            "-U",
            params.get("USER") or "postgres",
            params["NAME"],
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return result.stdout


def found_in(text: str, values: set[str]) -> list[str]:
    """The values that stand in ``text`` as whole tokens.

    A digest, a UUID or a timestamp's microseconds may hold "84116" by chance; a leaked postal
    code, name or identifier stands alone, between delimiters.
    """
    return sorted(
        value
        for value in values
        if re.search(rf"(?<![0-9A-Za-z]){re.escape(value)}(?![0-9A-Za-z])", text)
    )


def queued_messages() -> list[str]:
    from config.celery import app

    with app.connection_for_read() as conn:
        client = conn.default_channel.client
        return [raw.decode() for raw in client.lrange("celery", 0, -1)]


def test_nothing_identifying_reaches_a_table_a_log_or_a_task(client, caplog):
    caplog.set_level(logging.DEBUG)
    practice = Practice.objects.create(slug="st-mary")
    api = Api(client, mint(practice), practice)
    bodies = [orjson.loads((CORPUS / name).read_bytes()) for name in DOCUMENTS]
    synthetic = batch(
        course(
            "P-1",
            family="Zyxwvuts",
            given="Qwertyui",
            born="2024-07-15",
            birth_time="04:37",
        ),
        course("P-2", family="Mnbvcxzl", given="Poiuytre", born="2024-07-16"),
    )
    bodies.append(synthetic)
    forbidden = set().union(*(identifying_values(body) for body in bodies))
    forbidden |= {"2024-07-15", "2024-07-16"}  # newborn dates no stamp shares here
    assert {"Zyxwvuts", "Qwertyui", "84116-1234", "1990-05-20"} <= forbidden
    assert "Quinn" in forbidden
    assert {"2019-02-12T13:00:00-07:00", "2024-07-15T04:37:00-07:00"} <= forbidden  # times

    for body in bodies:  # $validate first: it must leave nothing behind either
        assert api.validate(body).status_code == 200

    ids = []
    for body in bodies:
        response = api.submit(body)
        assert response.status_code == 202
        ids.append(ingestion_id_of(response))

    messages = queued_messages()
    assert messages, "each submission is enqueued as a Celery message"
    for raw in messages:
        envelope = json.loads(raw)
        payload = base64.b64decode(envelope["body"]).decode()
        args = json.loads(payload)[0]
        assert len(args) <= 1  # a beat's recovery (left by a killed worker) has none
        for arg in args:
            uuid.UUID(arg)  # the only argument: an ingestion id

    for ingestion_id in ids:
        ingestion_process(uuid.UUID(ingestion_id))
    assert Ingestion.objects.filter(status=Ingestion.Status.COMPLETED).count() == len(bodies)
    assert Record.objects.count() >= len(DOCUMENTS)

    dump = dump_database()
    assert "P-1" in dump and "st-mary" in dump  # the dump is the real thing
    assert "84116-1234" in found_in("postal\t84116-1234\n", forbidden)  # the search works
    leaks = found_in(dump, forbidden)
    assert leaks == [], f"identifying values in the database: {leaks}"

    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert found_in(logged, forbidden) == []


def test_timeliness_is_kept_as_a_bucket_and_the_birth_date_is_not(client):
    """The delay from birth to receipt is computed at intake; only its bucket is stored."""
    practice = Practice.objects.create(slug="st-mary")
    api = Api(client, mint(practice), practice)
    response = api.submit(course("T-1", family="Timely", born="2024-07-15"))
    ingestion_id = ingestion_id_of(response)
    Ingestion.objects.filter(id=ingestion_id).update(queued_at="2024-07-18T09:30:00Z")
    ingestion_process(uuid.UUID(ingestion_id))

    assert Record.objects.get(external_record_id="T-1").timeliness == "days_0_5"
    dump = dump_database()
    assert "days_0_5" in dump and "2024-07-18" in dump  # the bucket and the day of receipt
    birth_date = {"2024-07-15", "2024/07/15", "20240715", "07/15/2024", "15/07/2024"}
    assert found_in(dump, birth_date) == []
