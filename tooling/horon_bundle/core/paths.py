"""Path and name rules shared by plugin.json, SHA256SUMS, archives and the declaration."""

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


# --- targets ------------------------------------------------------------------------------
_TRIPLE = re.compile(r"[a-z0-9_]+(?:-[a-z0-9_.]+){2,3}")
_64_BIT_ARCHES = frozenset(
    ["x86_64", "aarch64", "arm64ec", "riscv64gc", "powerpc64", "powerpc64le", "s390x",
     "loongarch64", "sparc64", "mips64", "mips64el"])


def target_os(target: str) -> str | None:
    """linux, darwin or windows for a supported 64-bit triple; None otherwise."""
    if not _TRIPLE.fullmatch(target):
        return None
    arch = target.split("-", 1)[0]
    if arch not in _64_BIT_ARCHES:
        return None
    parts = target.split("-")
    if "apple" in parts and "darwin" in parts:
        return "darwin"
    if "windows" in parts:
        return "windows"
    if "linux" in parts:
        return "linux"
    return None


def target_problem(target: str) -> str | None:
    if not _TRIPLE.fullmatch(target):
        return f"{target!r} is not a target triple"
    if target.split("-", 1)[0] not in _64_BIT_ARCHES:
        return f"{target!r} is not a 64-bit target (ABI v1 is 64-bit only)"
    if target_os(target) is None:
        return f"{target!r} is not a Linux, macOS or Windows target"
    return None


LIBRARY_EXTENSIONS = {"linux": ".so", "darwin": ".dylib", "windows": ".dll"}


# --- identifiers --------------------------------------------------------------------------
PLUGIN_ID = re.compile(r"[a-z][a-z0-9-]{1,62}")
FEATURE = re.compile(r"[a-z0-9][a-z0-9_-]*")
SEMVER = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)"
    r"(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?")
PROFILE = re.compile(r"[a-z][a-z0-9_-]{0,63}")
CRATE_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
SHA256_HEX = re.compile(r"[0-9a-f]{64}")
SPDX_EXPRESSION = re.compile(r"[A-Za-z0-9.+\-() ]{1,200}")


def display_name_problem(name: str) -> str | None:
    if not name or len(name) > 128:
        return "must be 1 to 128 characters"
    if name != name.strip():
        return "leading or trailing whitespace"
    if (char := invisible_character(name)) is not None:
        return f"control or format character {char}"
    return None
