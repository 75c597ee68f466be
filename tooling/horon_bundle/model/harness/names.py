"""What may name a harness bundle's file (`<name>-<version>.zip`): the name and version rules
a home's state file, a ref and a marketplace entry are read against too.

Apart from `model.harness.manifest` (which reads plugin.json against them) so that reading a
home's state file (`list`) or a ref never loads the manifest's fields, host names and models
(start-up)."""

from __future__ import annotations

import re

from horon_bundle.core import paths

VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a bundle file (None if it can)."""
    if not 1 <= len(name) <= 64:
        return "must be 1 to 64 characters"
    if paths.path_problem(name) or "/" in name or not name.isprintable() or " " in name:
        return "must be a single portable file name component"
    return None
