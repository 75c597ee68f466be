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
