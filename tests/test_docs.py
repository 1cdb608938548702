"""The README and docs/ hold up in a fresh clone: no dead link, nothing outside the repository.

The README stays a front door (under 10 KB, linking into docs/), every setting the service
reads is documented in docs/operations.md, and every docs/*.md a source file cites exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FILE_NAMED = re.compile(r"`((?:[\w.-]+/)+[\w.-]+\.(?:py|md|toml|html|json|css|js))`")
EXTERNAL = ("http://", "https://", "mailto:")


def relative_links(document: Path) -> list[str]:
    links = LINK.findall(document.read_text())
    return [link for link in links if not link.startswith(EXTERNAL)]


def test_docs_hold_what_a_newcomer_needs():
    names = {path.name for path in DOCUMENTS}
    expected = {"api.md", "decisions.md", "architecture.md", "recipes.md", "integrators.md"}
    expected |= {"operations.md", "reliability.md", "performance.md", "clients.md"}
    assert expected <= names


def test_the_readme_is_a_front_door():
    readme = ROOT / "README.md"
    assert readme.stat().st_size < 10_240
    linked = set(relative_links(readme))
    documents = {f"docs/{path.name}" for path in DOCUMENTS if path.parent.name == "docs"}
    assert documents <= linked, f"not linked from the README: {documents - linked}"


SETTING_READ = re.compile(r"env\.(?:bool|int|float|str|list|db|url|email_url|email)\(\s*\"(\w+)\"")


def test_every_setting_is_documented_in_operations():
    settings = "\n".join(path.read_text() for path in (ROOT / "config" / "settings").glob("*.py"))
    names = set(SETTING_READ.findall(settings))
    names |= {"SECRET_KEY", "REGISTRY_FINGERPRINT_KEY", "REGISTRY_PAYLOAD_KEY"}
    assert len(names) > 40  # the pattern finds the reads
    operations = (ROOT / "docs" / "operations.md").read_text()
    assert not [name for name in sorted(names) if f"`{name}`" not in operations]


CITED = re.compile(r"docs/[\w-]+\.md")
PACKAGES = ["config", "lib", "registry", "keys", "ingestion", "registry_client", "bench", "tests"]
SOURCES = [
    *[path for package in PACKAGES for path in (ROOT / package).rglob("*.py")],
    *[ROOT / name for name in ("Makefile", "Procfile", "manage.py", "pyproject.toml")],
]


def test_every_document_a_source_file_cites_exists():
    for source in SOURCES:
        for cited in CITED.findall(source.read_text(errors="replace")):
            assert (ROOT / cited).exists(), f"{source.relative_to(ROOT)} cites {cited}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves_inside_the_repository(document: Path):
    for link in relative_links(document):
        target = link.split("#", 1)[0]
        if not target:
            continue  # a link to a heading of the same page
        resolved = (document.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{link} points outside the repository"
        assert resolved.exists(), f"{link} does not exist"


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_document_refers_to_files_outside_the_repository(document: Path):
    text = document.read_text()
    assert "../shared" not in text
    assert "/work/" not in text
    assert "SPEC.md" not in text and "DECISIONS.md" not in text


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_a_document_names_exists(document: Path):
    for name in FILE_NAMED.findall(document.read_text()):
        assert (ROOT / name).exists() or (document.parent / name).exists(), name


def test_the_link_checker_finds_links():
    readme = relative_links(ROOT / "README.md")
    assert "docs/api.md" in readme
