"""`verify PATH`: route each path to the judge of its kind, by content, never by name alone.

A `X.zip.ref.json` is checked against `X.zip` beside it (or `--zip`) before any entry is
read; a `X.zip` with a `X.zip.ref.json` beside it is checked against it the same way. The
archive is then validated by the one archive reader; a harness manifest or catalogue inside
sends it to the harness judge, anything else to the native one.
"""

from __future__ import annotations

from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.model.harness.layout import REF_SUFFIX
from horon_bundle.model.harness.ref import BundleRef, ref_path, zip_of_ref
from horon_bundle.verify.audit import AuditOptions, audit_path
from horon_bundle.verify.harness.judge import is_harness, judge_harness
from horon_bundle.verify.harness.ref import check_digest, read_ref
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.source import open_bundle


def verify_any(path: Path, options: AuditOptions, harness: HarnessOptions) -> VerifyReport:
    report = HarnessReport(path=str(path))
    ref: BundleRef | None = None
    target = path
    if path.name.endswith(REF_SUFFIX):
        try:
            ref = read_ref(path)
            zipped = Path(harness.zip_path) if harness.zip_path else zip_of_ref(path)
            if zipped is None:
                raise Refused.one(codes.REF_ZIP_MISSING,
                                  f"{path.name}: not named <zip>{REF_SUFFIX}; pass --zip PATH")
            check_digest(ref, zipped, ref_label=path.name)
        except Refused as exc:
            report.judged("ref.digest", list(exc.findings))
            return report
        target = zipped
        report.judged("ref.digest", [], note=f"{target.name} matches {path.name}")
    elif path.is_file() and ref_path(path).is_file():
        try:
            ref = read_ref(ref_path(path))
            check_digest(ref, path, ref_label=ref_path(path).name)
        except Refused as exc:
            report.judged("ref.digest", list(exc.findings))
            return report
        report.judged("ref.digest", [], note=f"matches {ref_path(path).name} beside it")
    try:
        source = open_bundle(target)
    except Refused as exc:
        if not report.checks:  # nothing says it is a harness bundle: report it as verify does
            unreadable = VerifyReport(path=str(path))
            unreadable.judged("archive", list(exc.findings))
            return unreadable
        report.judged("archive", list(exc.findings))
        return report
    with source:
        if not is_harness(source.files):
            native = VerifyReport(path=str(path))
            native.checks.extend(report.checks)
            return audit_path(target, options, opened=source, report=native)
        if target.is_file():
            report.judged("archive", [])
        if ref is None and target.is_file():
            report.notes.append(f"no {ref_path(target).name} beside it: the zip's digest is "
                                "not pinned by a ref")
        report.ref_sha256 = ref.sha256 if ref is not None else None
        _unsupported(options, report)
        judge_harness(source, report, harness)
    if ref is not None and report.catalogue is not None and ref.name != report.catalogue.name:
        report.judged("ref.name", [Finding(codes.REF_NAME,
                                           f"{path.name}: names {ref.name!r}, the zip holds "
                                           f"{report.catalogue.name!r}")])
    return report


def _unsupported(options: AuditOptions, report: HarnessReport) -> None:
    """Signatures and audit policies judge native bundles today; asking them of a harness zip
    is refused, not silently passed."""
    asked = [what for what, given in (("--require-signature", options.require_signature),
                                      ("--policy", options.policy is not None)) if given]
    if asked:
        report.judged("harness.options", [Finding(
            codes.HARNESS_UNSUPPORTED,
            f"{' and '.join(asked)} do not apply to harness bundles yet")])
    elif options.verifier is not None:
        report.skipped("signature.present", "harness zips are not signed yet")
