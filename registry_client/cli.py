"""``registry-submit``: submit Bundles, poll their ingestions, keep every receipt.

    registry-submit births/                       # every *.json and *.ndjson in the folder
    registry-submit one.json backfill.ndjson --receipts out/
    registry-submit --validate births/            # check each with Bundle/$validate only

The API key comes from ``REGISTRY_API_KEY`` (or ``--token``), the FHIR base from
``REGISTRY_URL`` (or ``--url``). Exit status: 0 when every Bundle was taken and no record
was rejected; 1 when a record was rejected, a Bundle was refused or an ingestion failed;
2 when the run could not be done (no key, a path that does not exist, the registry
unreachable or refusing the key). With ``--validate`` nothing is submitted: each Bundle is
checked with ``Bundle/$validate`` (:mod:`registry_client.validation`), and the exit status is
1 when one would be rejected, has an error or is refused.

The summary ends with a line for each file that was refused or failed, or had a record
rejected or accepted with a warning, with the registry's reason (:mod:`registry_client.report`).
``--ca-file`` trusts a private CA's certificate instead of the system's.
"""

from __future__ import annotations

import argparse
import os
import ssl
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tqdm import tqdm

from registry_client import receipts
from registry_client.api import ApiError, Queued, RegistryApi
from registry_client.inputs import InputError, Item, items_from
from registry_client.report import Notes, Retractions
from registry_client.validation import ValidationSummary, validate_all

DEFAULT_URL = "http://127.0.0.1:8000/api/registry/fhir"


@dataclass
class Summary:
    bundles: int = 0
    already_done: int = 0
    completed: int = 0
    failed: int = 0
    refused: int = 0
    accepted: int = 0
    rejected: int = 0
    flagged: int = 0
    retractions: Retractions = field(default_factory=Retractions)
    notes: Notes = field(default_factory=Notes)

    def add(self, record: receipts.Record) -> None:
        if record.refused is not None:
            self.refused += 1
            self.notes.refused(record.source, record.refused)
            return
        receipt = record.receipt or {}
        if receipt.get("status") == "failed":
            self.failed += 1
        else:
            self.completed += 1
        self.accepted += int(receipt.get("accepted") or 0)
        self.rejected += int(receipt.get("rejected") or 0)
        accepted = (receipt.get("outcome") or {}).get("accepted") or []
        self.flagged += sum(1 for entry in accepted if entry.get("suspected_duplicate"))
        for entry in accepted:
            self.retractions.add(entry)
        self.notes.receipt(record.source, receipt)

    @property
    def clean(self) -> bool:
        return not (self.rejected or self.refused or self.failed)

    def lines(self, folder: Path) -> list[str]:
        return [
            f"{self.bundles} Bundle(s): {self.completed} completed, {self.failed} failed, "
            f"{self.refused} refused ({self.already_done} already done in an earlier run)",
            f"records: {self.accepted} accepted, {self.rejected} rejected, "
            f"{self.flagged} flagged for review",
            self.retractions.line(),
            f"receipts: {folder}",
            *self.notes.block(),
        ]


def parse_arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="registry-submit",
        description="Submit FHIR R4 BFDR Bundles to the birth registry and keep the receipts.",
    )
    parser.add_argument("paths", nargs="+", type=Path, help="Bundle files, folders, NDJSON files")
    parser.add_argument(
        "--url",
        default=os.environ.get("REGISTRY_URL", DEFAULT_URL),
        help=f"the registry's FHIR base (env REGISTRY_URL; default {DEFAULT_URL})",
    )
    parser.add_argument(
        "--token",
        default=os.environ.get("REGISTRY_API_KEY"),
        help="the practice's API key (env REGISTRY_API_KEY, preferred: keeps it out of history)",
    )
    parser.add_argument(
        "--receipts",
        type=Path,
        default=Path("receipts"),
        help="folder for the receipt files (default ./receipts)",
    )
    parser.add_argument(
        "--ca-file",
        type=Path,
        default=None,
        help="CA certificates (PEM) to trust instead of the system's, for a registry whose "
        "certificate a private CA signed",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--validate",
        action="store_true",
        help="submit nothing: check each Bundle with Bundle/$validate, say what submitting it "
        "would do now, and keep each answer as <name>.validation.json in the receipts folder",
    )
    return parser.parse_args(argv)


def main(
    argv: Sequence[str] | None = None, *, api: RegistryApi | None = None, out: TextIO = sys.stdout
) -> int:
    arguments = parse_arguments(argv)
    if api is None and not arguments.token:
        print("registry-submit: no API key: set REGISTRY_API_KEY or pass --token", file=sys.stderr)
        return 2
    try:
        items = items_from(arguments.paths)
    except InputError as error:
        print(f"registry-submit: {error}", file=sys.stderr)
        return 2
    if api is None:
        try:
            api = RegistryApi(arguments.url, arguments.token, verify=_trust(arguments.ca_file))
        except OSError as error:  # an unreadable or malformed --ca-file
            print(f"registry-submit: --ca-file: {error}", file=sys.stderr)
            return 2
    try:
        if arguments.validate:
            summary: Summary | ValidationSummary = validate_all(
                items, api, arguments.receipts, progress=not arguments.no_progress
            )
        else:
            summary = run(items, api, arguments.receipts, progress=not arguments.no_progress)
    except ApiError as error:
        print(f"registry-submit: {error}", file=sys.stderr)
        return 2
    for line in summary.lines(arguments.receipts):
        print(line, file=out)
    return 0 if summary.clean else 1


def _trust(ca_file: Path | None) -> ssl.SSLContext | bool:
    if ca_file is None:
        return True  # the system's certificates (or SSL_CERT_FILE's, when set)
    return ssl.create_default_context(cafile=str(ca_file))


def run(items: list[Item], api: RegistryApi, folder: Path, *, progress: bool) -> Summary:
    summary = Summary(bundles=len(items))
    # disable=None: a bar on a terminal, none in a log file or a pipe
    bar = tqdm(total=len(items), unit="bundle", disable=None if progress else True, file=sys.stderr)
    try:
        pending = _submit_all(items, api, folder, summary, bar)
        _first_wait(pending, api)
        _poll_until_finished(pending, api, summary, bar)
    finally:
        bar.close()
    return summary


def _submit_all(
    items: list[Item], api: RegistryApi, folder: Path, summary: Summary, bar: Any
) -> list[tuple[receipts.Record, Path]]:
    """Send what has not been sent; return what is still to be polled."""
    pending = []
    for item in items:
        path = receipts.receipt_path(folder, item)
        record = receipts.load(path, item)
        if record is not None and record.finished:
            summary.already_done += 1
            _finish(record, summary, bar)
            continue
        if record is None or record.status_url is None:
            record = _submit(item, api)
            receipts.save(path, record)
            if record.finished:  # refused at the door
                _finish(record, summary, bar)
                continue
        pending.append((record, path))
    return pending


def _submit(item: Item, api: RegistryApi) -> receipts.Record:
    record = receipts.Record(item.source, item.idempotency_key)
    answer = api.submit(item.body, item.idempotency_key)
    if isinstance(answer, Queued):
        record.ingestion_id, record.status_url = answer.ingestion_id, answer.status_url
        record.first_poll_at = time.monotonic() + answer.wait_seconds
    else:
        record.refused = {
            "http_status": answer.http_status,
            "operation_outcome": answer.operation_outcome,
        }
    return record


def _first_wait(pending: list[tuple[receipts.Record, Path]], api: RegistryApi) -> None:
    """Wait out the last 202's Retry-After before the first poll (a poll at once would find
    the ingestion queued); Bundles resumed from an earlier run are polled at once."""
    due = max((r.first_poll_at for r, _ in pending if r.first_poll_at is not None), default=None)
    if due is not None and due > time.monotonic():
        api.sleep(due - time.monotonic())


def _poll_until_finished(
    pending: list[tuple[receipts.Record, Path]], api: RegistryApi, summary: Summary, bar: Any
) -> None:
    while pending:
        waits = []
        still = []
        for record, path in pending:
            poll = api.poll(str(record.status_url))  # set by _submit_all for every pending one
            record.receipt = poll.receipt
            if poll.finished:
                receipts.save(path, record)
                _finish(record, summary, bar)
            else:
                still.append((record, path))
                waits.append(poll.wait_seconds)
                progress = poll.receipt.get("progress")
                if progress:
                    bar.set_description(f"{progress['processed']}/{progress['total']} entries")
        pending = still
        if pending:
            api.sleep(min(waits))


def _finish(record: receipts.Record, summary: Summary, bar: Any) -> None:
    summary.add(record)
    bar.update(1)
    bar.set_postfix(
        accepted=summary.accepted, rejected=summary.rejected, flagged=summary.flagged, refresh=False
    )


if __name__ == "__main__":
    sys.exit(main())
