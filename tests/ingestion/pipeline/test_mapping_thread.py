"""A batch's chunks are mapped on a thread nicer than its process
(ingestion.pipeline.chunks.mapping_thread_started): it yields the CPU to the holder of a
practice's lock, to the web and to the singles on a full machine."""

from __future__ import annotations

import os
import sys
import threading
import uuid

import pytest
from django.test import override_settings

from ingestion.models import Ingestion
from ingestion.pipeline import chunks
from ingestion.pipeline.process import ingestion_process
from tests.factories import batch, course
from tests.ingestion.conftest import ingestion_id_of

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice is per thread on Linux"),
]


def niceness() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


@override_settings(REGISTRY_CHUNK_ENTRIES=10)
def test_chunks_are_mapped_on_a_nicer_thread(api, monkeypatch, settings):
    seen: list[tuple[int, int]] = []
    mapped = chunks.decrypt_and_map

    def recording(*arguments):
        seen.append((threading.get_native_id(), niceness()))
        return mapped(*arguments)

    monkeypatch.setattr(chunks, "decrypt_and_map", recording)
    mine = niceness()
    submitted = api.submit(batch(*(course(f"N-{i}") for i in range(30))))
    ingestion_id = uuid.UUID(ingestion_id_of(submitted))

    ingestion_process(ingestion_id)

    assert Ingestion.objects.get(id=ingestion_id).status == Ingestion.Status.COMPLETED
    assert len(seen) == 3  # three chunks of ten, each mapped once
    assert {nice for _, nice in seen} == {min(mine + settings.REGISTRY_MAPPING_NICENESS, 19)}
    assert threading.get_native_id() not in {thread for thread, _ in seen}
    assert niceness() == mine  # the process's own thread, which applies, is as it was


@pytest.mark.parametrize("nicer", [10, 3, 0])
def test_the_mapping_thread_is_as_much_nicer_as_the_setting_says(settings, nicer):
    settings.REGISTRY_MAPPING_NICENESS = nicer
    mine, theirs = niceness(), []

    def started() -> None:
        chunks.mapping_thread_started()
        theirs.append(niceness())

    thread = threading.Thread(target=started)
    thread.start()
    thread.join()
    assert theirs == [min(mine + nicer, 19)]
    assert niceness() == mine
