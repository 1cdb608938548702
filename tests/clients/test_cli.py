"""``registry-submit`` against a live server and a real worker."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ingestion.models import Ingestion
from registry.models import Record
from registry_client.api import RegistryApi
from registry_client.cli import main
from tests.clients.conftest import let_the_rate_limit_window_pass
from tests.factories import course, dumps, retraction_document
from tests.fhir.test_voids import void_message

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def no_mother(chart: str) -> dict:
    bundle = course(chart)
    bundle["entry"] = [e for e in bundle["entry"] if e["resource"].get("id") != "mother"]
    return bundle


@pytest.fixture
def inputs(tmp_path) -> list[Path]:
    folder = tmp_path / "births"
    folder.mkdir()
    (folder / "a.json").write_bytes(dumps(course("CLI-1", family="Alpha")))
    (folder / "b.json").write_bytes(dumps(no_mother("CLI-2")))
    (folder / "notes.txt").write_text("not a Bundle: ignored in a folder")
    backfill = tmp_path / "backfill.ndjson"
    lines = [course("CLI-3", family="Beta"), course("CLI-4", family="Beta"), course("CLI-5")]
    backfill.write_bytes(b"\n".join(dumps(b) for b in lines) + b"\n\n")
    return [folder, backfill]


def run(server, paths, receipts: Path, **api_options) -> tuple[int, str]:
    out = io.StringIO()
    api = RegistryApi(server.base, server.token, **api_options)
    argv = [*map(str, paths), "--receipts", str(receipts), "--no-progress"]
    return main(argv, api=api, out=out), out.getvalue()


def test_it_submits_files_folders_and_ndjson_and_keeps_every_receipt(server, inputs, tmp_path):
    receipts = tmp_path / "receipts"
    status, summary = run(server, inputs, receipts)

    assert status == 1  # CLI-2 has no mother: a record was rejected
    assert "5 Bundle(s): 5 completed, 0 failed, 0 refused" in summary
    assert "records: 4 accepted, 1 rejected, 1 flagged for review" in summary
    names = sorted(p.name for p in receipts.iterdir())
    assert names == [
        "a.json.receipt.json",
        "b.json.receipt.json",
        "backfill.ndjson.line-000001.receipt.json",
        "backfill.ndjson.line-000002.receipt.json",
        "backfill.ndjson.line-000003.receipt.json",
    ]
    kept = json.loads((receipts / "b.json.receipt.json").read_text())
    assert kept["receipt"]["status"] == "completed"
    assert kept["receipt"]["outcome"]["rejected"][0]["external_record_id"] == "CLI-2"
    assert kept["idempotency_key"].startswith("registry-submit-")
    assert Record.objects.count() == 4
    assert Record.objects.get(external_record_id="CLI-4").suspected_duplicate


def test_a_rerun_sends_nothing_new(server, inputs, tmp_path):
    receipts = tmp_path / "receipts"
    first = run(server, inputs, receipts)
    ingestions = Ingestion.objects.count()

    again = run(server, inputs, receipts)
    assert again[0] == first[0]
    assert "(5 already done in an earlier run)" in again[1]
    assert Ingestion.objects.count() == ingestions

    # Receipts lost: the same content carries the same Idempotency-Key, so the registry
    # answers with the original ingestions and ingests nothing twice.
    for receipt in receipts.iterdir():
        receipt.unlink()
    lost = run(server, inputs, receipts)
    assert lost[0] == first[0]
    assert Ingestion.objects.count() == ingestions
    assert Record.objects.filter(version__gt=1).count() == 0


def test_a_clean_run_exits_zero_and_a_refused_bundle_exits_one(server, tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(dumps(course("CLI-9")))
    assert run(server, [good], tmp_path / "r1")[0] == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceType": "Patient"}')
    status, summary = run(server, [bad], tmp_path / "r2")
    assert status == 1
    assert "1 refused" in summary
    kept = json.loads((tmp_path / "r2" / "bad.json.receipt.json").read_text())
    assert kept["refused"]["http_status"] == 400
    assert kept["refused"]["operation_outcome"]["issue"][0]["code"] == "structure"


def test_it_waits_out_the_rate_limit(server, tmp_path, settings):
    settings.REGISTRY_RATE_LIMIT = "2/m"
    paths = []
    for i in range(3):
        path = tmp_path / f"{i}.json"
        path.write_bytes(dumps(course(f"RL-{i}", family=f"Rate{'abc'[i]}")))
        paths.append(path)
    waits: list[float] = []

    def sleep(seconds: float) -> None:
        waits.append(seconds)
        let_the_rate_limit_window_pass(seconds)

    status, summary = run(server, paths, tmp_path / "r", sleep=sleep)
    assert status == 0, summary
    assert "records: 3 accepted" in summary
    assert any(w > 1 for w in waits)  # a 429's Retry-After (the minute's remainder) was honoured
    assert Ingestion.objects.count() == 3


def test_it_is_installed_as_a_console_script(tmp_path):
    script = Path(sys.executable).with_name("registry-submit")
    done = subprocess.run([script, "--help"], capture_output=True, text=True, check=True)
    assert "Idempotency" not in done.stderr and "registry-submit" in done.stdout
    missing_key = subprocess.run(
        [script, str(tmp_path)], capture_output=True, text=True, env={"PATH": "/usr/bin"}
    )
    assert missing_key.returncode == 2
    assert "REGISTRY_API_KEY" in missing_key.stderr


def run_validate(server, paths, receipts: Path) -> tuple[int, str]:
    out = io.StringIO()
    api = RegistryApi(server.base, server.token)
    argv = ["--validate", *map(str, paths), "--receipts", str(receipts), "--no-progress"]
    return main(argv, api=api, out=out), out.getvalue()


def test_validate_checks_every_bundle_stores_nothing_and_keeps_each_answer(
    server, inputs, tmp_path
):
    folder = tmp_path / "checked"
    status, summary = run_validate(server, inputs, folder)
    assert status == 1  # CLI-2 has no mother: it would be rejected
    assert "5 Bundle(s) validated, 0 refused; nothing was stored" in summary
    # Each Bundle is checked against the records on file now, not the Bundles before it in
    # the run: CLI-4 resembles CLI-3 only once CLI-3 is on file.
    assert "4 created, 0 amended, 0 flagged, 1 rejected, 0 retracted" in summary
    assert "issues: 1 error(s), 0 warning(s)" in summary
    assert not Ingestion.objects.exists() and not Record.objects.exists()
    names = sorted(p.name for p in folder.iterdir())
    assert names[:2] == ["a.json.validation.json", "b.json.validation.json"]
    assert not [name for name in names if name.endswith(".receipt.json")]
    kept = json.loads((folder / "b.json.validation.json").read_text())
    assert kept["operation_outcome"]["issue"][0]["diagnostics"].startswith("would be rejected")

    # After submitting, the same files would amend what is now on file.
    run(server, inputs, tmp_path / "receipts")
    status, summary = run_validate(server, inputs, folder)
    assert "0 created, 4 amended" in summary


def test_validate_exits_zero_when_all_would_go_through_and_one_when_refused(server, tmp_path):
    good = tmp_path / "good.json"
    good.write_bytes(dumps(course("CLI-9")))
    assert run_validate(server, [good], tmp_path / "r1")[0] == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceType": "Patient"}')
    status, summary = run_validate(server, [bad], tmp_path / "r2")
    assert status == 1 and "1 refused" in summary
    kept = json.loads((tmp_path / "r2" / "bad.json.validation.json").read_text())
    assert kept["refused"]["http_status"] == 400


def test_the_summary_names_each_file_to_look_at_with_its_reason(server, inputs, tmp_path):
    status, summary = run(server, inputs, tmp_path / "receipts")
    assert status == 1
    to_look_at = summary.split("to look at:\n", 1)[1].splitlines()
    assert len(to_look_at) == 1, summary  # only b.json: the others went through cleanly
    rejected = f"  {inputs[0] / 'b.json'}: Bundle (chart number CLI-2) rejected:"
    assert to_look_at[0].startswith(rejected)
    bad = tmp_path / "bad.json"
    bad.write_text('{"resourceType": "Patient"}')
    refused = run(server, [bad], tmp_path / "r2")[1]
    assert f"  {bad}: refused (HTTP 400): " in refused


def test_retractions_are_counted_by_what_they_did(server, tmp_path):
    paths = []
    for name, body in [
        ("a.json", course("CLI-R1")),
        ("b.json", retraction_document("CLI-R1")),
        ("c.json", void_message()),  # no record of its block on file: it retracts nothing
    ]:
        paths.append(tmp_path / name)
        paths[-1].write_bytes(dumps(body))
    run(server, paths[:1], tmp_path / "r1")
    previewed = run_validate(server, paths[1:], tmp_path / "v")[1]
    assert "1 retracted, 1 retracting nothing" in previewed
    summary = run(server, paths[1:], tmp_path / "r2")[1]
    assert "retractions: 1 record(s) retracted, 1 void(s) found nothing to retract" in summary
    void_line = next(line for line in summary.splitlines() if line.startswith(f"  {paths[2]}: "))
    assert "accepted with a warning: None of the 1 certificate number(s)" in void_line


def test_a_stale_update_is_explained_with_both_stamps(server, tmp_path):
    newer, older = tmp_path / "newer.json", tmp_path / "older.json"
    newer.write_bytes(dumps(course("CLI-S", last_updated="2026-03-10T10:00:00Z")))
    stale = course("CLI-S", weight_grams=3999, last_updated="2026-03-09T10:00:00Z")
    older.write_bytes(dumps(stale))
    run(server, [newer], tmp_path / "r1")
    status, summary = run(server, [older], tmp_path / "r2")
    assert status == 1
    line = summary.split("to look at:\n", 1)[1]
    assert "Bundle (chart number CLI-S) rejected: Stale update ignored. " in line
    assert "2026-03-10T10:00:00+00:00" in line and "2026-03-09T10:00:00+00:00" in line
    assert "give it a chart number of its own" in line


def test_a_ca_file_that_cannot_be_read_stops_the_run(tmp_path):
    script = Path(sys.executable).with_name("registry-submit")
    shown = subprocess.run([script, "--help"], capture_output=True, text=True, check=True)
    assert "--ca-file" in shown.stdout
    missing = tmp_path / "no-such-ca.pem"
    done = subprocess.run(
        [script, "--ca-file", str(missing), str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin", "REGISTRY_API_KEY": "rgk_" + "x" * 40},
    )
    assert done.returncode == 2
    assert "--ca-file" in done.stderr and "Traceback" not in done.stderr
