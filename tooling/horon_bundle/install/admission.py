"""Admitting a bundle, trust before bytes: everything install checks before the home is touched.

The bundle gets the full `verify` with the signature and policy options of `verify`
(`verify.audit.audit_path`), and then what publication requires as well: the release channel
(unless --allow-qa), and a *pass* — a skip is not good enough — for every check of
`verify.judge.NATIVE_CHECKS` that proves a release (`verify.check_table.unproven`). A qa
bundle admitted with --allow-qa may lack a graph or carry QA providers (the rows waived for
qa); nothing else is waived. All findings are collected and any one refuses the install.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.install.copies import content_digest
from horon_bundle.model.manifest import Manifest
from horon_bundle.verify.audit import AuditOptions, audit_path
from horon_bundle.verify.check_table import unproven
from horon_bundle.verify.judge import NATIVE_CHECKS
from horon_bundle.verify.report import VerifyReport


@dataclass(frozen=True, slots=True, kw_only=True)
class Admitted:
    """A bundle that may be installed, and the facts the copy must reproduce."""

    path: Path
    report: VerifyReport
    manifest: Manifest
    content_sha256: str
    archive_sha256: str | None


def stat_key(path: Path) -> tuple[int, int, int, int, int]:
    info = path.stat()
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def same_as_checked(path: Path, sha256: str | None, expected: str | None) -> None:
    """The bytes admitted are the ones a check before the install hashed (its log entry,
    `--log`; its release statement, `--attestation`)."""
    if expected is not None and sha256 != expected:
        raise Refused.one(codes.INSTALL_INTEGRITY, f"{path}: sha256 {sha256} now, {expected} "
                                                   "when it was checked against its log entry "
                                                   "or statement")


def admit(path: Path, options: AuditOptions, *, allow_qa: bool,
          expected_sha256: str | None = None) -> Admitted:
    """Verify `path` (directory or archive) with the trust options; refuse what fails.

    An archive is hashed by the verify itself, from the very bytes its entries are judged
    from (one read: `verify.judge.verify_opened(archive_digest=True)`), and its identity is
    taken before and compared after, so the digest recorded is the digest of the bytes
    verified and of the file the copy will read."""
    archive_stat = archive_sha256 = None
    is_archive = path.is_file() and not path.is_symlink()
    if is_archive:
        try:
            archive_stat = stat_key(path)
        except OSError as exc:
            raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: {exc.strerror}") from None
    report = audit_path(path, options, archive_digest=is_archive)
    if report.archive_digest is not None:
        archive_sha256 = report.archive_digest.sha256
        checkpoint("hashed")
    unchanged_since(path, archive_stat)  # the bytes hashed are the bytes verified
    if archive_sha256 is not None or not is_archive:
        same_as_checked(path, archive_sha256, expected_sha256)
    findings = Findings()
    findings.extend(report.findings)
    manifest = report.manifest
    if manifest is not None and manifest.channel != "release" and not allow_qa:
        findings.add(codes.INSTALL_CHANNEL, f"{path.name}: channel {manifest.channel!r}; "
                                            "install takes release bundles unless --allow-qa")
    findings.extend(unproven(report, NATIVE_CHECKS, code=codes.INSTALL_UNPROVEN,
                             where=path.name,
                             qa_waiver=manifest is not None and manifest.channel == "qa"))
    findings.raise_if_any()
    content = content_digest(report)
    assert manifest is not None and content is not None
    return Admitted(path=path, report=report, manifest=manifest, content_sha256=content,
                    archive_sha256=archive_sha256)


def unchanged_since(path: Path, before: tuple[int, int, int, int, int] | None) -> None:
    """The archive is still the file that was hashed: any write or replacement changes its
    ctime or inode. (What the copy takes from it later is checked against the verified
    digests by verifying the staged copy.)"""
    if before is None:
        return
    try:
        now = stat_key(path)
    except OSError:
        now = None
    if now != before:
        raise Refused.one(codes.INSTALL_INTEGRITY,
                          f"{path.name}: the archive changed while it was being verified")
