"""``registry-submit``: send FHIR Bundles to the registry and collect their receipts.

A command-line client for integrators and for backfills, installed with the project (see
``pyproject.toml``). It imports nothing from the service: it speaks only the HTTP API, with
httpx, and shows its progress with tqdm.
"""
