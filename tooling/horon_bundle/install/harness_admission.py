"""Admitting a harness zip, trust before bytes: all that is checked before the home is touched.

The input is a zip or its `<zip>.ref.json` (then the zip beside it, or `--zip`). Its SHA-256
(its name in the store) is taken first, then it gets the full harness judge of `verify` with
the trust options verify accepts — `--host`, `--strict`, signatures and identity policies
(`verify.route.verify_any`: a ref, or a ref beside the zip, is checked before any entry is
read) — and its stat is compared afterwards: the bytes hashed are the bytes judged. Every
check of `verify.harness.judge.HARNESS_CHECKS` that proves a release must have run and passed
(warnings are allowed unless --strict): `verify.check_table.unproven`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.hashing import Digest, hash_file
from horon_bundle.install.admission import same_as_checked, stat_key, unchanged_since
from horon_bundle.model.harness.layout import REF_SUFFIX
from horon_bundle.model.harness.ref import zip_of_ref
from horon_bundle.verify.audit import AuditOptions
from horon_bundle.verify.check_table import unproven
from horon_bundle.verify.harness.judge import HARNESS_CHECKS
from horon_bundle.verify.harness.ref import read_ref
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.route import verify_any


@dataclass(frozen=True, slots=True, kw_only=True)
class AdmittedHarness:
    """A harness zip that may be installed, and the facts the stored copy must reproduce."""

    path: Path   # the zip
    named: Path  # what the command line named (the zip or its ref)
    report: HarnessReport
    digest: Digest

    @property
    def name(self) -> str:
        assert self.report.catalogue is not None
        return self.report.catalogue.name

    @property
    def version(self) -> str:
        assert self.report.catalogue is not None
        return self.report.catalogue.version

    @property
    def catalogue(self) -> dict[str, Any]:
        assert self.report.catalogue is not None
        return self.report.catalogue.to_json()


def zip_of(path: Path, harness: HarnessOptions) -> Path:
    """The zip a command line names: a zip itself, or the zip of a ref (--zip, else beside)."""
    if not path.name.endswith(REF_SUFFIX):
        if harness.zip_path is not None:
            raise Refused.one(codes.USAGE_INVALID, "--zip goes with a <zip>.ref.json")
        if path.is_dir():
            raise Refused.one(codes.INSTALL_HARNESS_DIRECTORY,
                              f"{path}: a harness bundle directory; install its zip (or ref)")
        return path
    read_ref(path)  # the ref first: a missing or malformed ref is named, not the zip it names
    zipped = Path(harness.zip_path) if harness.zip_path else zip_of_ref(path)
    if zipped is None:
        raise Refused.one(codes.REF_ZIP_MISSING,
                          f"{path.name}: not named <zip>{REF_SUFFIX}; pass --zip PATH")
    return zipped


def admit_harness(path: Path, options: AuditOptions, harness: HarnessOptions, *,
                  expected_sha256: str | None = None) -> AdmittedHarness:
    zipped = zip_of(path, harness)
    if zipped.is_symlink() or not zipped.is_file():
        code = codes.REF_ZIP_MISSING if zipped != path else codes.INPUT_UNREADABLE
        what = "a symbolic link, which is not followed" if zipped.is_symlink() else \
            "not a regular file" if zipped.exists() else "no such file"
        raise Refused.one(code, f"{zipped}: {what}")
    try:
        before = stat_key(zipped)
        digest = hash_file(zipped)
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{zipped}: {exc.strerror}") from None
    checkpoint("hashed")
    same_as_checked(zipped, digest.sha256, expected_sha256)
    report = verify_any(path, options, harness)
    unchanged_since(zipped, before)
    findings = Findings()
    findings.extend(report.findings)
    if report.ok and not isinstance(report, HarnessReport):
        findings.add(codes.INSTALL_UNPROVEN, f"{path.name}: not a harness bundle")
    if isinstance(report, HarnessReport):
        findings.extend(unproven(report, HARNESS_CHECKS, code=codes.INSTALL_UNPROVEN,
                                 where=path.name))
    findings.raise_if_any()
    assert isinstance(report, HarnessReport) and report.catalogue is not None
    return AdmittedHarness(path=zipped, named=path, report=report, digest=digest)
