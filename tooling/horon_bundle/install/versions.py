"""Semantic Version 2.0.0 precedence, for `enable ID` without a version (the highest wins)."""

from __future__ import annotations

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
