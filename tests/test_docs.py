"""The README and docs/ hold up in a fresh clone: no dead link, nothing outside the repository."""

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
    assert expected <= names


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


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_file_a_document_names_exists(document: Path):
    for name in FILE_NAMED.findall(document.read_text()):
        assert (ROOT / name).exists() or (document.parent / name).exists(), name


def test_the_link_checker_finds_links():
    readme = relative_links(ROOT / "README.md")
    assert "docs/api.md" in readme
