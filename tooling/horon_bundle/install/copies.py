"""Verifying a copy in the home (staged or installed) as a whole, and proving it is that copy.

The verifier takes a path. On Linux the path given to it is `/proc/self/fd/<parent>/<name>`:
the parent is reached through the descriptor already checked by the walk, so no link or
renamed ancestor can redirect it, and only the last component is looked up by name. Its
identity (device, inode) is compared with the descriptor held for the copy before and after
verifying, so the copy verified is the copy that is renamed or reported. Elsewhere (macOS has
no directory-traversable /proc) the home path is used with the same identity checks; what
that cannot see (a directory inside the copy swapped and swapped back while it is read) is
written in docs/install.md.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Finding, Refused
from horon_bundle.install.dirs import Chain, lstat_at, same
from horon_bundle.model.manifest import CHECKSUMS_NAME

if TYPE_CHECKING:
    from horon_bundle.verify.report import VerifyReport


@dataclass(frozen=True, slots=True)
class Located:
    """A directory of the home: its parent's descriptor, its name, its own descriptor."""

    parent: int
    name: str
    fd: int
    where: str   # home-relative, for messages
    path: Path   # the absolute path (used where /proc/self/fd is not available)


def _descriptor_path(located: Located) -> Path:
    return through_descriptor(located.parent, located.name, located.path)


def through_descriptor(parent: int, name: str, fallback: Path) -> Path:
    """`name` under the directory `parent` as a path only its last component is looked up in
    (`/proc/self/fd/<parent>/<name>` on Linux); `fallback` elsewhere."""
    if sys.platform.startswith("linux"):
        proc = Path(f"/proc/self/fd/{parent}")
        if proc.is_dir():
            return proc / name
    return fallback


def _identity(located: Located) -> None:
    info = lstat_at(located.parent, located.name, located.where)
    if info is None or not same(info, os.fstat(located.fd)):
        raise Refused.one(codes.INSTALL_RACE,
                          f"{located.where} was replaced while it was being verified")


def verify_copy(located: Located) -> VerifyReport:
    """Every verify rule over the copy; refuses (install.race) a copy swapped meanwhile."""
    _identity(located)
    from horon_bundle.verify.judge import verify_path  # noqa: PLC0415 - `list` never loads it

    report = verify_path(_descriptor_path(located))
    _identity(located)
    report.path = located.where
    return report


def relabel(findings: list[Finding], label: str, where: str) -> list[Finding]:
    """Findings of a copy named by its place in the home rather than its directory name."""
    prefix = f"{label}: "
    return [Finding(f.code, where + ": " + f.message.removeprefix(prefix), f.hint)
            if f.message.startswith(prefix) else f for f in findings]


def content_digest(report: VerifyReport) -> str | None:
    """The SHA-256 of SHA256SUMS: in a bundle that verifies it pins the bytes of every file."""
    digest = report.digests.get(CHECKSUMS_NAME)
    return None if digest is None else digest.sha256


@dataclass(frozen=True, slots=True)
class VerifiedCopy:
    where: str
    path: Path
    content_sha256: str


def installed_copy(chain: Chain, parts: tuple[str, str, str], *,
                   code: Code = codes.INSTALL_TAMPERED) -> VerifiedCopy:
    """The copy the chain (opened down to its target directory) leads to, verified whole and
    naming itself by the id, version and target of its place; refused with `code` (and every
    verify finding) otherwise."""
    parent, last = chain.links[-2], chain.links[-1]
    located = Located(parent.fd, last.name, last.fd, last.where, chain.path())
    report = verify_copy(located)
    findings = relabel(report.findings, last.name, last.where)
    got = report.manifest
    if got is not None and report.ok and (got.id, got.version, got.target) != parts:
        findings.append(Finding(code, f"{last.where}: its plugin.json names {got.id} "
                                      f"{got.version} {got.target}"))
    content = content_digest(report)
    if findings or content is None:
        raise Refused([Finding(code, f"{last.where}: not a copy of {' '.join(parts)} that "
                                     "verifies"), *findings])
    return VerifiedCopy(last.where, located.path, content)
