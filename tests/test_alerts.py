"""The alert rules and scrape configuration in deploy/prometheus, checked by the real promtool
(Debian's prometheus package, which `make test` installs when missing)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
PROMETHEUS = ROOT / "deploy" / "prometheus"
TOKEN = "t" * 8 + "0123456789abcdefghijklmnopqrstuvwxyz"


def promtool(*arguments: str, cwd: Path = PROMETHEUS) -> str:
    tool = shutil.which("promtool")
    assert tool, "promtool is missing: `make test-packages` installs Debian's prometheus"
    done = subprocess.run(
        [tool, *arguments], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_the_alert_rules_are_valid():
    assert "SUCCESS: 9 rules found" in promtool("check", "rules", "alerts.yml")


def test_the_alert_rules_pass_their_unit_tests():
    assert "SUCCESS" in promtool("test", "rules", "alerts.test.yml")


def test_the_scrape_configuration_is_valid(tmp_path):
    token = tmp_path / "registry-metrics-token"
    token.write_text(TOKEN)
    shutil.copy(PROMETHEUS / "alerts.yml", tmp_path)
    configuration = (PROMETHEUS / "prometheus.yml").read_text()
    assert "/etc/prometheus/registry-metrics-token" in configuration
    (tmp_path / "prometheus.yml").write_text(
        configuration.replace("/etc/prometheus/registry-metrics-token", str(token))
    )
    assert "SUCCESS" in promtool("check", "config", "prometheus.yml", cwd=tmp_path)


def test_the_operations_guide_shows_the_scrape_configuration():
    guide = (ROOT / "docs" / "operations.md").read_text()
    scrape = (PROMETHEUS / "prometheus.yml").read_text().split("scrape_configs:", 1)[1]
    assert scrape.strip().splitlines()[0] in guide
    assert "deploy/prometheus/alerts.yml" in guide


@pytest.mark.django_db
@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_every_figure_the_rules_use_is_exposed(client):
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    families = list(text_string_to_metric_families(response.content.decode()))
    exposed = {sample.name for family in families for sample in family.samples}
    exposed |= {f"{family.name}_total" for family in families if family.type == "counter"}
    used = set(re.findall(r"registry_\w+", (PROMETHEUS / "alerts.yml").read_text()))
    assert used and used <= exposed
