"""Path rules shared by plugin.json, SHA256SUMS, archives, directories and the declaration:
what a path inside a bundle may be, and when two paths name one file.

The grammars of names that are not paths (ids, versions, targets …) are `core.identifiers`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from collections.abc import Iterable, Iterator

_WINDOWS_RESERVED = frozenset(
    ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
    + [f"COM{i}" for i in range(10)] + [f"LPT{i}" for i in range(10)]
)
_DRIVE = re.compile(r"[A-Za-z]:")
# A reserved device name before the first dot of a component, found between slashes of the
# upper-cased path (`_first_refusable`)
_RESERVED_NAMES = "|".join(re.escape(name) for name in sorted(_WINDOWS_RESERVED))
_RESERVED_COMPONENT = re.compile(rf"/(?:{_RESERVED_NAMES})[./]")
MAX_PATH_BYTES = 512
# Characters no bundle path or identifier may hold: C0/C1 controls, format characters (bidi
# overrides, zero-width joiners), surrogates, private use, and the Unicode line and paragraph
# separators (U+2028, U+2029) that some readers treat as line ends.
_INVISIBLE_CATEGORIES = frozenset(["Cc", "Cf", "Cs", "Co", "Zl", "Zp"])


def invisible_character(text: str) -> str | None:
    """The first control, format or separator character in `text`, as U+XXXX (None if none)."""
    if text.isprintable():  # no Other or Separator character but space: none of those
        return None
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
    first = _first_refusable(path)
    if first is None:
        return None
    for part in path.split("/")[first:]:
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


def _first_refusable(path: str) -> int | None:
    """The index of the first component of `path` a check of `path_problem`'s loop refuses
    (None when none does), found at the pace of string searches: each
    check refuses a component exactly when the path, between slashes added at both ends, holds
    its mark there — two slashes in a row (an empty component), a dot or space before a slash
    (`.`, `..`, a trailing dot or space), a colon, or a reserved name between a slash and a dot
    or slash, upper-cased (no character upper-cases to a slash or a dot, so the upper-cased
    path has the same components). The loop then starts at that component: a path of 256
    components costs what one of a few does."""
    slashed = f"/{path}/"
    upper = slashed.upper()
    found = [slashed.count("/", 0, at) - 1 for at in (slashed.find("./"), slashed.find(" /"),
                                                      slashed.find(":")) if at != -1]
    if (at := slashed.find("//")) != -1:
        found.append(slashed.count("/", 0, at))
    if (reserved := _RESERVED_COMPONENT.search(upper)) is not None:
        found.append(upper.count("/", 0, reserved.start()))
    return min(found, default=None)


def fold(path: str) -> str:
    """The key under which two paths collide on case-insensitive, normalising file systems."""
    return unicodedata.normalize("NFC", path).casefold()


def collisions(paths: Iterable[str]) -> list[tuple[str, str]]:
    """Pairs of paths that name one file: the same path twice, two paths folding to one key
    (case, Unicode normalisation), or one path being a directory of the other."""
    return list(iter_collisions(paths))


def iter_collisions(paths: Iterable[str]) -> Iterator[tuple[str, str]]:
    """`collisions`, one pair at a time and in the same order: first each path folding to a
    key already seen, then for each key its directories that are keys too, shortest first.

    A key's directories are looked up only when some key is a directory of another (found by
    bisection in the sorted keys: the keys under `k/` sort in one run from `k/` on), so a list
    with no such pair costs a sort, however deep its paths."""
    seen: dict[str, str] = {}
    for path in paths:
        key = fold(path)
        if key in seen:
            yield seen[key], path
        else:
            seen[key] = path
    ordered = sorted(seen)
    holding = set()
    for key in ordered:
        at = bisect_left(ordered, f"{key}/")
        if at < len(ordered) and ordered[at].startswith(f"{key}/"):
            holding.add(key)
    if not holding:
        return
    for key, path in seen.items():
        slash = key.find("/")
        while slash != -1:
            if key[:slash] in holding:
                yield seen[key[:slash]], path
            slash = key.find("/", slash + 1)
