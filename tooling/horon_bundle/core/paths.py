"""Path rules shared by plugin.json, SHA256SUMS, archives, directories and the declaration:
what a path inside a bundle may be, and when two paths name one file.

The grammars of names that are not paths (ids, versions, targets …) are `core.identifiers`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
    + [f"COM{i}" for i in range(10)] + [f"LPT{i}" for i in range(10)]
)
_DRIVE = re.compile(r"[A-Za-z]:")
MAX_PATH_BYTES = 512
# Characters no bundle path or identifier may hold: C0/C1 controls, format characters (bidi
# overrides, zero-width joiners), surrogates, private use, and the Unicode line and paragraph
# separators (U+2028, U+2029) that some readers treat as line ends.
_INVISIBLE_CATEGORIES = frozenset(["Cc", "Cf", "Cs", "Co", "Zl", "Zp"])


def invisible_character(text: str) -> str | None:
    """The first control, format or separator character in `text`, as U+XXXX (None if none)."""
    for char in text:
        if unicodedata.category(char) in _INVISIBLE_CATEGORIES:
            return f"U+{ord(char):04X}"
    return None


def path_problem(path: str) -> str | None:
    """Why `path` is not a safe, normalised, relative POSIX path inside a bundle (None if it is)."""
    if not path:
        return "empty path"
    if len(path.encode("utf-8", errors="surrogatepass")) > MAX_PATH_BYTES:
        return f"longer than {MAX_PATH_BYTES} bytes"
    if (char := invisible_character(path)) is not None:
        return f"control or format character {char} in path"
    if "\\" in path:
        return "backslash in path"
    if path.startswith("/"):
        return "absolute path"
    if _DRIVE.match(path):  # prefix match: a drive starts the path
        return "drive letter in path"
    for part in path.split("/"):
        if part == "":
            return "empty component (double or trailing slash)"
        if part in (".", ".."):
            return f"{part!r} component"
        if part.endswith((".", " ")):
            return f"component {part!r} ends with a dot or space"
        if ":" in part:
            return f"component {part!r} holds a colon"
        if part.split(".")[0].upper() in _WINDOWS_RESERVED:
            return f"component {part!r} is a reserved device name"
    return None


def fold(path: str) -> str:
    """The key under which two paths collide on case-insensitive, normalising file systems."""
    return unicodedata.normalize("NFC", path).casefold()


def collisions(paths: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of paths that name one file: the same path twice, two paths folding to one key
    (case, Unicode normalisation), or one path being a directory of the other."""
    seen: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for path in paths:
        key = fold(path)
        if key in seen:
            found.append((seen[key], path))
        else:
            seen[key] = path
    for key, path in seen.items():
        parts = key.split("/")
        for depth in range(1, len(parts)):
            prefix = "/".join(parts[:depth])
            if prefix in seen:
                found.append((seen[prefix], path))
    return found
