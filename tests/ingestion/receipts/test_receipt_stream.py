"""A finished receipt is streamed from the stored outcome rows, piece by piece.

Its content is that of the receipt built whole (spec 2.6); its pieces are bounded however
many entries it has, so the web process serves a receipt of any size in bounded memory
(``make bench`` prints the web process's peak memory serving a 1,000,000-entry receipt).
"""

from __future__ import annotations

import pytest
from django.utils import timezone

from ingestion.fhir.outcome import error_outcome
from ingestion.models import Ingestion, OutcomeChunk
from ingestion.receipts.receipt import (
    PIECE_BYTES,
    _stored_pages,
    _written_pages,
    receipt_stream,
    receipt_whole,
)
from ingestion.receipts.selectors import ingestion_receipt

pytestmark = pytest.mark.django_db


def finished(practice, *, chunks: int, per_chunk: int, failure=None) -> Ingestion:
    ingestion = Ingestion.objects.create(
        practice=practice,
        kind=Ingestion.Kind.BATCH,
        entry_count=chunks * per_chunk,
        status=Ingestion.Status.FAILED if failure else Ingestion.Status.COMPLETED,
        completed_at=None if failure else timezone.now(),
        failed_at=timezone.now() if failure else None,
        failure=failure,
    )
    rows = []
    for seq in range(chunks):
        first = seq * per_chunk
        accepted = [
            {"reference": f"Bundle.entry[{first + i}]", "external_record_id": f"C-é-{first + i}"}
            for i in range(per_chunk - 1)
        ]
        rejected = [
            {
                "reference": f"Bundle.entry[{first + per_chunk - 1}]",
                "operation_outcome": error_outcome("value", 'A "quoted" value \\ here.'),
            }
        ]
        rows.append(
            OutcomeChunk(ingestion=ingestion, seq=seq, part=0, accepted=accepted, rejected=rejected)
        )
    rows.append(  # an isolated chunk's parts, after its seq
        OutcomeChunk(ingestion=ingestion, seq=chunks, part=1, accepted=[], rejected=[])
    )
    OutcomeChunk.objects.bulk_create(rows)
    Ingestion.objects.filter(id=ingestion.id).update(
        accepted_count=chunks * (per_chunk - 1), rejected_count=chunks
    )
    ingestion.refresh_from_db()
    return ingestion


def test_the_streamed_receipt_is_the_receipt(api):
    ingestion = finished(api.practice, chunks=40, per_chunk=25)
    response = api.receipt(str(ingestion.id))
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"] == "application/json"
    assert response.json() == ingestion_receipt(ingestion)
    references = [e["reference"] for e in response.json()["outcome"]["accepted"]]
    assert references == [f"Bundle.entry[{i}]" for i in range(1000) if i % 25 != 24]


def test_a_receipt_of_at_most_a_chunks_entries_is_written_whole(api, settings):
    """A single's receipt, the poll read most often, is one response: streamed, each piece
    would cross between the event loop and the request's thread."""
    ingestion = finished(api.practice, chunks=2, per_chunk=5)
    settings.REGISTRY_CHUNK_ENTRIES = 10
    response = api.receipt(str(ingestion.id))
    assert not response.streaming
    assert response["Content-Type"] == "application/json"
    assert response.json() == ingestion_receipt(ingestion)
    settings.REGISTRY_CHUNK_ENTRIES = 9
    assert api.receipt(str(ingestion.id)).streaming


@pytest.mark.parametrize("chunks", [0, 2])
def test_a_small_receipt_reads_its_rows_in_one_statement(api, chunks, django_assert_num_queries):
    """Both sides and whether any entry is stored, in one statement rather than three; the
    bytes are the streamed receipt's (null outcome included: only empty rows stored)."""
    ingestion = finished(api.practice, chunks=chunks, per_chunk=5)
    with django_assert_num_queries(1):
        whole = receipt_whole(ingestion)
    assert whole == b"".join(receipt_stream(ingestion))


def test_a_failed_ingestion_streams_its_failure_last(api):
    failure = error_outcome("exception", "Given up.", expression="Bundle")
    ingestion = finished(api.practice, chunks=3, per_chunk=5, failure=failure)
    body = api.receipt(str(ingestion.id)).json()
    assert body == ingestion_receipt(ingestion)
    assert body["outcome"]["rejected"][-1] == {"reference": "Bundle", "operation_outcome": failure}


def test_a_receipt_without_entries_has_a_null_outcome(api):
    ingestion = finished(api.practice, chunks=0, per_chunk=0)
    body = api.receipt(str(ingestion.id)).json()
    assert body["outcome"] is None
    assert body == ingestion_receipt(ingestion)


def test_a_large_receipt_comes_in_bounded_pieces(api):
    ingestion = finished(api.practice, chunks=400, per_chunk=250)  # 100,000 entries
    response = api.client.get(
        f"/api/registry/fhir/ingestions/{ingestion.id}",
        headers={"Authorization": f"Bearer {api.token}"},
    )
    pieces = list(response.streaming_content)
    chunk_bytes = 250 * 200
    assert len(pieces) > 20
    assert max(len(piece) for piece in pieces) < PIECE_BYTES + chunk_bytes
    assert sum(len(p) for p in pieces) > 20 * PIECE_BYTES


@pytest.mark.parametrize("side", ["accepted", "rejected"])
def test_a_receipt_is_written_on_sqlite_in_the_bytes_postgresql_gives(api, side):
    failure = error_outcome("exception", 'Given up, é \u0007 "quoted".', expression="Bundle")
    ingestion = finished(api.practice, chunks=3, per_chunk=4, failure=failure)
    OutcomeChunk.objects.filter(ingestion=ingestion, seq=0).update(
        accepted=[{"reference": "Bundle", "amended": True, "version": 2, "b": {"zz": 1, "a": []}}]
    )
    assert list(_written_pages(ingestion, side)) == list(_stored_pages(ingestion, side))


def test_the_entries_of_a_receipt_share_one_form(api):
    failure = error_outcome("exception", "Given up.", expression="Bundle")
    ingestion = finished(api.practice, chunks=2, per_chunk=2, failure=failure)
    body = api.receipt(str(ingestion.id)).body
    rejected = body.split(b'"rejected":[', 1)[1]
    assert b'}, {"reference": "Bundle", "operation_outcome": {"issue": [' in rejected
