"""Data shipped inside the package: the plugin templates (`horon-bundle new`) and the docs
(`horon-bundle docs`).

A wheel or sdist built by `nox -s dist` carries them as `horon_bundle/templates/` and
`horon_bundle/docs/` (setup.py copies the repository's `templates/` and `docs/` in); a checkout
(an editable install) reads the repository's own folders, so there is one copy of each.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATES = "templates"
DOCS = "docs"
_PACKAGE = Path(__file__).resolve().parent.parent
_CHECKOUT = _PACKAGE.parent.parent  # tooling/horon_bundle -> the repository


def shipped(name: str) -> Path | None:
    """The shipped folder `name` (`templates` or `docs`), or None when it is missing."""
    for root in (_PACKAGE / name, _CHECKOUT / name):
        if root.is_dir():
            return root
    return None


# pages for people working on horon-bundle itself: in the repository, never in the package
# (setup.py leaves them out of the wheel; `horon-bundle docs` does not list them)
DEVELOPER_PAGES = ("benchmarks", "development", "mutants")
SCHEMAS_TOPIC = "schemas"  # docs/schemas/README.md: every JSON Schema and its document


def doc_pages(root: Path) -> list[str]:
    """The topics `horon-bundle docs` offers: the user pages, and `schemas`."""
    pages = {p.stem for p in root.glob("*.md") if p.stem not in DEVELOPER_PAGES}
    if (root / SCHEMAS_TOPIC / "README.md").is_file():
        pages.add(SCHEMAS_TOPIC)
    return sorted(pages)


def doc_page(root: Path, topic: str) -> Path:
    return root / SCHEMAS_TOPIC / "README.md" if topic == SCHEMAS_TOPIC else root / f"{topic}.md"
