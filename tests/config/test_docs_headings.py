"""Every page of the manual opens with its title: a level-1 heading as its first non-empty line
(mkdocs takes the page's title from it, and the navigation and search show it)."""

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(DOCS.rglob("*.md"))


def first_line(page: Path) -> str:
    return next((line for line in page.read_text(encoding="utf-8").splitlines() if line.strip()), "")


def test_the_manual_has_pages():
    assert len(PAGES) > 20 and DOCS / "index.md" in PAGES


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(DOCS)))
def test_every_page_opens_with_a_level_1_heading(page):
    line = first_line(page)
    assert line.startswith("# ") and line[2:].strip(), f"{page.relative_to(DOCS)} opens with {line!r}"
