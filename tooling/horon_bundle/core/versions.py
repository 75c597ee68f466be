"""Version order: Semantic Version 2.0.0 precedence (`enable ID` without a version takes the
highest), and the order of harness versions, which need not be semantic versions (the latest
version of a harness bundle a marketplace lists)."""

from __future__ import annotations

import re

from horon_bundle.core import identifiers


def _identifier(part: str) -> tuple[int, int, str]:
    # numeric identifiers sort numerically and below alphanumeric ones (SemVer 11.4)
    return (0, int(part), "") if part.isdigit() else (1, 0, part)


def precedence(version: str) -> tuple[object, ...]:
    """A sort key: build metadata ignored, a pre-release below its release."""
    if not identifiers.SEMVER.fullmatch(version):
        raise ValueError(f"not a semantic version: {version!r}")
    core, _, pre = version.split("+", 1)[0].partition("-")
    major, minor, patch = (int(x) for x in core.split("."))
    if not pre:
        return (major, minor, patch, 1, ())
    return (major, minor, patch, 0, tuple(_identifier(p) for p in pre.split(".")))


def highest(versions: list[str]) -> str | None:
    """The highest version (ties by build metadata broken by the string, for determinism)."""
    if not versions:
        return None
    return max(versions, key=lambda v: (precedence(v), v))


def release_order(version: str) -> tuple[object, ...]:
    """A sort key for any version string: every semantic version above every other string,
    semantic versions by precedence, the others by their dot-, dash-, plus- or
    underscore-separated parts (numbers numerically, below words); the string itself last,
    so that no two versions tie."""
    if identifiers.SEMVER.fullmatch(version):
        return (1, precedence(version), version)
    parts = tuple(_identifier(part) for part in re.split(r"[.+_-]", version))
    return (0, parts, version)
