"""The home's harness store: `harness-bundles/sha256/<hex>.zip`, one zip per digest, 0444.

A stored zip is named by its SHA-256, so two selections of one ref get the same bytes, and
it is never rewritten. Reading one (`check`, `status --verify`, `fetch`) opens it relative
to the store's descriptor with O_NOFOLLOW, hashes it through that descriptor, and judges it
through `/proc/self/fd/<store>/<name>` with its identity (device, inode, size, times)
compared before and after, so the bytes judged are the bytes hashed. A stored zip no record
of state.json names is debris of a killed install or uninstall: every harness writer removes
it under the home's lock (`collect_garbage`).
"""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.install.dirs import (
    READ_FLAGS,
    Chain,
    io_error,
    kind_of,
    regular_fd,
    remove_tree_at,
)
from horon_bundle.install.layout import (
    DIGEST_DIR,
    HARNESS_DIR,
    STORED_SUFFIX,
    stored_name,
    stored_where,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:  # hashing, copies and the ref only when a stored zip is read (start-up of
    # `list`, which lists the store's names)
    from horon_bundle.core.hashing import Digest
    from horon_bundle.install.state import HarnessRecord, HomeState
    from horon_bundle.model.harness.ref import BundleRef
    from horon_bundle.verify.audit import AuditOptions
    from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


@dataclass(slots=True)
class Opened:
    """A regular file opened through a directory descriptor, never through a link."""

    parent: int
    name: str
    fd: int
    where: str
    fallback: Path  # its path, where /proc/self/fd is not available

    @property
    def identity(self) -> tuple[int, ...]:
        return _identity(os.fstat(self.fd))

    def digest(self) -> Digest:
        """The SHA-256 of its bytes, read through the descriptor (from the start)."""
        from horon_bundle.core.hashing import hash_stream  # noqa: PLC0415 - start-up

        duplicate = os.dup(self.fd)
        with os.fdopen(duplicate, "rb") as stream:
            stream.seek(0)
            return hash_stream(stream)

    def path(self) -> Path:
        from horon_bundle.install.copies import through_descriptor  # noqa: PLC0415 - start-up

        return through_descriptor(self.parent, self.name, self.fallback)

    def unchanged(self, before: tuple[int, ...]) -> bool:
        """Still the file that was opened (same name, same bytes by its stat)."""
        try:
            info = os.stat(self.name, dir_fd=self.parent, follow_symlinks=False)
        except OSError:
            return False
        return _identity(info) == before == self.identity

    def close(self) -> None:
        os.close(self.fd)

    def __enter__(self) -> Opened:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_file_at(parent: int, name: str, where: str, fallback: Path) -> Opened | None:
    """`name` under `parent` for reading: None when absent; a link is install.symlink, any
    other non-regular file install.tampered (the store holds only what install wrote)."""
    try:
        fd = os.open(name, READ_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise Refused.one(codes.INSTALL_SYMLINK, f"{where} is a symbolic link; it is not "
                                                     "followed") from None
        raise io_error(where, exc) from None
    if not regular_fd(fd):
        info = os.fstat(fd)
        os.close(fd)
        raise Refused.one(codes.INSTALL_TAMPERED, f"{where} is a {kind_of(info.st_mode)}, "
                                                  "not a stored zip")
    return Opened(parent, name, fd, where, fallback)


def store_chain(chain: Chain) -> None:
    """Descend a home chain into harness-bundles/sha256 (refusing links and non-directories)."""
    for name in (HARNESS_DIR, DIGEST_DIR):
        if not chain.descend(name):
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{HARNESS_DIR}/{DIGEST_DIR}: no harness bundle is stored")


def stored_names(store: Chain) -> list[str]:
    """The `<hex>.zip` names in the store (anything else is not ours and is left alone)."""
    try:
        with os.scandir(store.fd) as scan:
            names = sorted(entry.name for entry in scan)
    except OSError as exc:
        raise io_error(store.where, exc) from None
    return [n for n in names if n.endswith(STORED_SUFFIX)
            and identifiers.SHA256_HEX.fullmatch(n[: -len(STORED_SUFFIX)])]


def collect_garbage(store: Chain, state: HomeState) -> list[str]:
    """Remove stored zips no record names (debris of a killed install or uninstall); the
    caller holds the home's lock. Returns what it removed, home-relative."""
    recorded = {stored_name(sha) for sha in state.harness_digests()}
    removed = []
    for name in stored_names(store):
        if name in recorded:
            continue
        try:  # a directory planted under such a name too: it is not followed, only removed
            remove_tree_at(store.fd, name)
        except OSError as exc:
            raise io_error(f"{store.where}/{name}", exc) from None
        removed.append(f"{HARNESS_DIR}/{DIGEST_DIR}/{name}")
    if removed:
        try:
            os.fsync(store.fd)
        except OSError as exc:
            raise io_error(store.where, exc) from None
    return removed


def judge_opened(opened: Opened, ref: BundleRef, *,
                 options: AuditOptions | None = None,
                 harness: HarnessOptions | None = None) -> HarnessReport | list[Finding]:
    """Judge a zip whose digest the caller has checked against `ref`: every harness rule,
    through its descriptor, the file unchanged meanwhile. Findings when it does not verify."""
    before = opened.identity
    # the verifier only when a bundle is judged: `list` reads the state file alone
    from horon_bundle.verify.audit import AuditOptions  # noqa: PLC0415
    from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport  # noqa: PLC0415
    from horon_bundle.verify.route import judge_target  # noqa: PLC0415

    report = judge_target(opened.path(), options or AuditOptions(), harness or HarnessOptions(),
                          ref=ref, ref_label=opened.where, pinned=True)
    findings = list(report.findings)
    if not opened.unchanged(before):
        findings.insert(0, Finding(codes.INSTALL_RACE,
                                   f"{opened.where} was replaced while it was being verified"))
    if not findings and (not isinstance(report, HarnessReport) or report.catalogue is None):
        findings.append(Finding(codes.INSTALL_TAMPERED,  # refused, it says why already
                                f"{opened.where}: not a harness bundle"))
    if findings or not isinstance(report, HarnessReport):
        return [Finding(f.code, f.message.replace(str(opened.path()), opened.where), f.hint)
                for f in findings]
    return report


def verify_stored(store: Chain, name: str, version: str,
                  record: HarnessRecord) -> list[Finding]:
    """Every problem of the stored copy of `record`: missing, not its digest, not verifying,
    or another catalogue than the one recorded. [] when it is the copy installed."""
    where = stored_where(record.sha256)
    opened = open_file_at(store.fd, stored_name(record.sha256), where,
                          store.path() / stored_name(record.sha256))
    if opened is None:
        return [Finding(codes.INSTALL_NOT_INSTALLED, f"{where}: {name} {version} is recorded "
                                                     "in state.json but its zip is missing")]
    with opened:
        digest = opened.digest()
        if digest.sha256 != record.sha256:
            return [Finding(codes.INSTALL_TAMPERED,
                            f"{where}: sha256 {digest.sha256}, stored as {record.sha256}")]
        from horon_bundle.model.harness.ref import BundleRef  # noqa: PLC0415 - start-up

        judged = judge_opened(opened, BundleRef(name=name, sha256=record.sha256))
    if isinstance(judged, list):
        return [Finding(codes.INSTALL_TAMPERED, f"{where}: {name} {version} does not verify"),
                *judged]
    assert judged.catalogue is not None
    if judged.catalogue.to_json() != record.catalogue:
        return [Finding(codes.INSTALL_RECORD_MISMATCH,
                        f"{where}: its catalogue differs from the one state.json recorded for "
                        f"{name} {version}")]
    if (judged.catalogue.name, judged.catalogue.version) != (name, version):
        return [Finding(codes.INSTALL_RECORD_MISMATCH,
                        f"{where}: holds {judged.catalogue.name} {judged.catalogue.version}, "
                        f"recorded as {name} {version}")]
    return []
