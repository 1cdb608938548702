"""The first hour, walked as a newcomer walks it: README.md and docs/operations.md, in order.

Commands are taken from the docs (tests/doc_commands.py) wherever they can run here as
written: the production `.env` of the fresh-machine steps, `generate_secrets --write`, the
database, static and deployment-check commands, the nginx file filled by the guide's `sed`,
the checks of step 7 (the metrics scrape with the token generate_secrets wrote), the README's
first Bundle (its example fetched from the OpenAPI document, then sent with `registry-submit`
through the proxy, with `--ca-file`), and the restore drill with the overrides the guide gives
for a drill on the registry's own machine, ending in `check_registry` and a receipt read from
the restored copy through the address `make run`'s banner prints.

What differs from a real machine, and why: the registry's DNS name is 127.0.0.1 (no DNS
here), nginx listens on free ports with a certificate made here, the database and Redis are
the test suite's (the environment wins over `.env`, as the guide says), and `sudo -u
registry` is dropped. The logs of every process (web, worker, the drill's web) must hold no
WARNING or ERROR line.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.config.test_nginx import nginx
from tests.doc_commands import OPERATIONS, README, ROOT, command_after, run_sh, sh_blocks
from tests.services import Stack, free_port
from tests.workers import celery_worker, wait_for, worker_environment

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

HOST = "registry.example.org"
LOUD = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")


def fresh_machine_block() -> str:
    (block,) = [b for b in sh_blocks(OPERATIONS) if "# 1. Packages" in b]
    return block


def drill_block() -> str:
    (block,) = [b for b in sh_blocks(OPERATIONS) if "createdb registry_drill" in b]
    return block


def dot_env_lines(block: str) -> list[str]:
    """Step 3's heredoc: the production `.env` as the guide writes it."""
    return block.split("<<'ENV'\n", 1)[1].split("\nENV\n", 1)[0].splitlines()


def manage_lines(block: str, *, step: str) -> list[str]:
    """The `manage.py` commands of one numbered step, without `sudo -u registry`."""
    part = block.split(f"# {step}.", 1)[1].split("\n# ", 1)[0]
    return [
        re.sub(r"^sudo -u registry ", "", line).split("  #")[0].strip()
        for line in part.splitlines()
        if "manage.py" in line and not line.lstrip().startswith("#")
    ]


def as_env(lines: list[str]) -> dict[str, str]:
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


class Walk:
    """One newcomer's shell: the production environment, read from the `.env` made so far."""

    def __init__(self, tmp: Path, base: dict[str, str]) -> None:
        self.tmp, self.base = tmp, base
        self.dot_env = tmp / ".env"

    def env(self, **overrides: str) -> dict[str, str]:
        written = as_env(self.dot_env.read_text().splitlines())
        return {**self.base, **written, **self.test_services(), **overrides}

    def test_services(self) -> dict[str, str]:
        keep = ("DATABASE_URL", "REDIS_URL", "REGISTRY_ENV_FILE")
        return {name: self.base[name] for name in keep}

    def sh(self, command: str, **overrides: str) -> str:
        return run_sh(command, env=self.env(**overrides))


def test_a_newcomer_reaches_a_registry_behind_nginx_a_first_bundle_and_a_drill(tmp_path):
    block = fresh_machine_block()
    base = worker_environment(REGISTRY_ENV_FILE=str(tmp_path / ".env"))
    for secret in ("SECRET_KEY", "REGISTRY_FINGERPRINT_KEY", "REGISTRY_PAYLOAD_KEY"):
        del base[secret]  # the walk's secrets are those generate_secrets writes
    # var/ is the suite's own: its static files are collected once per session (conftest.py),
    # so collectstatic_if_changed finds nothing changed, as on a machine past its first start.
    base["REGISTRY_DEV_SECRETS"] = "false"
    walk = Walk(tmp_path, base)

    # Step 3: the production .env (its DNS name is 127.0.0.1 here), then fresh secrets.
    walk.dot_env.write_text("\n".join(dot_env_lines(block)).replace(HOST, "127.0.0.1") + "\n")
    for command in manage_lines(block, step="3"):
        walk.sh(command)
    secrets = as_env(walk.dot_env.read_text().splitlines())
    assert len(secrets["REGISTRY_METRICS_TOKEN"]) >= 32

    # Step 4: database, tables, static files, and the deployment checks, as written.
    for command in manage_lines(block, step="4"):
        walk.sh(command)

    # Step 5: the web and the worker; step 6: nginx in front, filled by the guide's sed.
    stack = Stack(walk.env(), tmp_path)
    with (
        celery_worker(tmp_path, "walk", **walk.env()) as worker,
        stack.web() as web,
        nginx(tmp_path, upstream_port=int(urlsplit(web.url).port or 0)) as proxy,
    ):
        curl = {"CURL_CA_BUNDLE": str(proxy.ca)}
        site = proxy.url

        def through_proxy(command: str) -> str:
            return command.replace(f"https://{HOST}", site).replace("http://127.0.0.1:8000", site)

        # Step 7: the checks, the metrics scrape, the first practice and its key.
        checks = block.split("# 7.", 1)[1]
        assert '"status": "ok"' in walk.sh(through_proxy(checks.splitlines()[1]), **curl)
        scrape = command_after(OPERATIONS, "the metrics scrape")
        scraped = walk.sh(through_proxy(scrape.replace(".env", str(walk.dot_env))), **curl)
        assert re.search(r"^registry_workers_alive 1(\.0)?$", scraped, re.MULTILINE), scraped

        # The README's first Bundle: its example from the OpenAPI document, through nginx,
        # sent with registry-submit (docs/clients.md) trusting the site's CA.
        create_practice, mint_key = sh_blocks(README)[1].splitlines()[:2]
        walk.sh(create_practice)
        token = walk.sh(f'{mint_key}\necho "$TOKEN"').strip()
        assert token.startswith("rgk_")
        fetch = through_proxy(command_after(README, "a course of care: the example Bundle"))
        walk.sh(f"cd {tmp_path} && {fetch}", **curl)
        submitted = subprocess.run(
            [
                str(ROOT / ".venv" / "bin" / "registry-submit"),
                "bundle.json",
                "--receipts",
                "receipts",
                "--ca-file",
                str(proxy.ca),
                "--no-progress",
            ],
            cwd=tmp_path,
            env={
                **os.environ,
                "REGISTRY_URL": f"{site}/api/registry/fhir",
                "REGISTRY_API_KEY": token,
            },
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert submitted.returncode == 0, submitted.stdout + submitted.stderr
        assert "1 Bundle(s): 1 completed" in submitted.stdout
        assert "records: 1 accepted, 0 rejected" in submitted.stdout
        kept = json.loads((tmp_path / "receipts" / "bundle.json.receipt.json").read_text())
        ingestion_id = kept["ingestion_id"]

        # The restore drill: a dump, restored into a database of its own, checked.
        dump = tmp_path / "registry.dump"
        subprocess.run(
            ["pg_dump", "--format=custom", f"--file={dump}", walk.base["DATABASE_URL"]],
            check=True,
        )
    drill_database = f"registry_drill_{os.getpid()}"
    server = walk.base["DATABASE_URL"].rsplit("/", 1)[0]
    created = subprocess.run(
        ["createdb", "-h", "127.0.0.1", "-U", "postgres", drill_database], check=False
    )
    assert created.returncode == 0
    try:
        drill(walk, dump, f"{server}/{drill_database}", token, ingestion_id)
    finally:
        subprocess.run(["dropdb", "-h", "127.0.0.1", "-U", "postgres", drill_database], check=False)

    for name, log in {"web": web.output(), "worker": worker.output()}.items():
        loud = [line for line in log.splitlines() if LOUD.search(line)]
        assert not loud, f"{name}: {loud}"


def drill(walk: Walk, dump: Path, database_url: str, token: str, ingestion_id: str) -> None:
    database_name = database_url.rsplit("/", 1)[1]
    restore = ["pg_restore", "--no-owner", "-h", "127.0.0.1", "-U", "postgres"]
    subprocess.run([*restore, f"--dbname={database_name}", str(dump)], check=True)
    block = drill_block()
    (overrides,) = [line for line in block.splitlines() if line.startswith("export ALLOWED")]
    port = str(free_port())
    overrides = overrides.replace("PORT=8099", f"PORT={port}")
    env = walk.env(DATABASE_URL=database_url)
    commands = [line.split("  #")[0] for line in block.splitlines() if "manage.py" in line]
    assert commands[-1].strip().endswith("check_registry")
    for command in commands:
        output = run_sh(f"{overrides}\n{command}", env=env)
    assert "The derived tables agree with the records." in output

    # make run on the restored copy, with the drill's overrides: its banner's address answers.
    log = walk.tmp / "drill-web.log"
    with log.open("wb") as sink:
        process = subprocess.Popen(
            ["bash", "-c", f"{overrides}\nexec make run"],
            cwd=ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        banner = wait_for(lambda: re.search(r"serving (\S+)", log.read_text()), timeout=90)
        url = banner[1]
        assert url == f"http://127.0.0.1:{port}/"
        receipt = httpx.get(
            f"{url}api/registry/fhir/ingestions/{ingestion_id}",
            headers={"Authorization": f"Bearer {token}"},
        )
        assert receipt.status_code == 200, receipt.text
        assert (receipt.json()["status"], receipt.json()["accepted"]) == ("completed", 1)
        assert httpx.get(f"{url}healthz").status_code == 200
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)
    loud = [line for line in log.read_text().splitlines() if LOUD.search(line)]
    assert not loud, f"drill web: {loud}"
