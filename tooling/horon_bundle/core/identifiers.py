"""Identifier grammars: plugin ids, features, versions, profiles, crate names, digests, SPDX
expressions, display names and target triples (with the library extension of each system).

Shared by plugin.json, the declaration, provenance, the install state and the publish
destinations: one grammar per kind of name, so every reader refuses the same values.
"""

from __future__ import annotations

import re

from horon_bundle.core.paths import invisible_character

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
