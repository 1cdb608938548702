"""The import layers hold (pyproject.toml's import-linter contracts, docs/architecture.md).

config wires ingestion, which uses keys, which uses registry, with lib at the bottom; no two
modules of a package import each other, in a function body or at the top. A planted import
against the layers is caught, which shows the check is not vacuous.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("config", "ingestion", "keys", "registry", "lib", "registry_client")
LINT_IMPORTS = str(Path(sys.executable).parent / "lint-imports")


def lint_imports(where: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", "--no-logo"],
        cwd=where,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture
def copy_of_the_code(tmp_path: Path) -> Path:
    """The service's packages and pyproject.toml, where a test may plant an import."""
    ignore = shutil.ignore_patterns("__pycache__", "static", "templates", "migrations")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def plant(root: Path, module: str, body: str) -> None:
    (root / Path(*module.split("."))).with_suffix(".py").write_text(body)


def test_the_contracts_are_kept():
    result = lint_imports(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_the_copy_alone_keeps_them(copy_of_the_code):
    result = lint_imports(copy_of_the_code)
    assert result.returncode == 0, result.stdout + result.stderr


def test_registry_importing_ingestion_in_a_function_body_breaks_the_layers(copy_of_the_code):
    plant(
        copy_of_the_code,
        "registry.planted",
        "def hidden() -> object:\n    from ingestion import models\n\n    return models\n",
    )
    result = lint_imports(copy_of_the_code)
    assert result.returncode != 0
    assert "registry.planted -> ingestion.models" in result.stdout


def test_lib_importing_config_breaks_its_contract(copy_of_the_code):
    plant(copy_of_the_code, "lib.planted", "import config.urls\n")
    result = lint_imports(copy_of_the_code)
    assert result.returncode != 0
    assert "lib.planted -> config.urls" in result.stdout


def test_a_cycle_between_sibling_modules_is_caught(copy_of_the_code):
    # registry.selectors is imported by registry.navigation; importing back closes a circle.
    plant(copy_of_the_code, "registry.selectors_helper", "import registry.navigation\n")
    selectors = copy_of_the_code / "registry" / "selectors.py"
    selectors.write_text(selectors.read_text() + "\nimport registry.selectors_helper\n")
    result = lint_imports(copy_of_the_code)
    assert result.returncode != 0
    assert "No cycles are allowed in registry" in result.stdout
