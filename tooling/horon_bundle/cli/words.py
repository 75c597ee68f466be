"""Small wording helpers for what the CLI says."""

from __future__ import annotations

import os
from pathlib import Path


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """`1 package`, `2 packages`."""
    return f"{count} {noun if count == 1 else (nouns or noun + 's')}"


def shown_path(path: Path | str) -> str:
    """A path as a user would type it from here: relative when it lies below the current
    directory, absolute otherwise."""
    target = Path(path)
    try:
        return target.relative_to(Path.cwd()).as_posix() or "."
    except ValueError:
        return os.fspath(target)
