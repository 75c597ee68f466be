"""`verify PATH`: route each path to the judge of its kind, by content, never by name alone.

A `X.zip.ref.json` is checked against `X.zip` beside it (or `--zip`) before any entry is
read; a `X.zip` with a `X.zip.ref.json` beside it is checked against it the same way. The
archive is then validated by the one archive reader; a harness manifest or catalogue inside
sends it to the harness judge, anything else to the native one. Both get the same signature
checks (`<zip>.sigstore.json` over the zip's SHA-256, `<zip>.provenance.sigstore.json` over
its provenance statement) and the same audit policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.harness.layout import PROVENANCE_NAME, REF_SUFFIX, is_harness, ref_path
from horon_bundle.verify.audit import AuditOptions, audit_path, audit_signature, judge_policy
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.report import VerifyReport

if TYPE_CHECKING:  # the harness models and report only for a harness bundle (start-up)
    from horon_bundle.model.harness.ref import BundleRef
    from horon_bundle.verify.harness.options import HarnessOptions
    from horon_bundle.verify.harness.report import HarnessReport


def verify_any(path: Path, options: AuditOptions, harness: HarnessOptions) -> VerifyReport:
    if not path.name.endswith(REF_SUFFIX) and not (path.is_file()
                                                   and ref_path(path).is_file()):
        return judge_target(path, options, harness, ref_label=path.name)  # no ref to check
    # a ref, or a zip with its ref beside it: a harness bundle's report from the start
    from horon_bundle.model.harness.ref import zip_of_ref  # noqa: PLC0415 - start-up
    from horon_bundle.verify.harness.ref import check_digest, read_ref  # noqa: PLC0415
    from horon_bundle.verify.harness.report import HarnessReport  # noqa: PLC0415

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
    else:
        try:
            ref = read_ref(ref_path(path))
            check_digest(ref, path, ref_label=ref_path(path).name)
        except Refused as exc:
            report.judged("ref.digest", list(exc.findings))
            return report
        report.judged("ref.digest", [], note=f"matches {ref_path(path).name} beside it")
    return judge_target(target, options, harness, report=report, ref=ref,
                        ref_label=path.name)


def judge_target(target: Path, options: AuditOptions, harness: HarnessOptions, *,
                 report: HarnessReport | None = None, ref: BundleRef | None = None,
                 ref_label: str = "", pinned: bool = False) -> VerifyReport:
    """Judge a bundle whose ref (if any) was already checked: open it with the one archive
    reader and route it by content. `pinned` says its digest was checked some other way
    (a stored zip, a fetched one), so no ref beside it is looked for."""
    try:
        source = open_bundle(target)
    except Refused as exc:
        if report is None or not report.checks:  # nothing says it is a harness bundle:
            unreadable = VerifyReport(path=str(target) if report is None else report.path)
            unreadable.judged("archive", list(exc.findings))  # report it as verify does
            return unreadable
        report.judged("archive", list(exc.findings))
        return report
    with source:
        if not is_harness(source.files):
            native = VerifyReport(path=str(target) if report is None else report.path)
            if report is not None:
                native.checks.extend(report.checks)
            return audit_path(target, options, opened=source, report=native)
        if report is None:
            from horon_bundle.verify.harness.report import HarnessReport  # noqa: PLC0415

            report = HarnessReport(path=str(target))
        if target.is_file():
            report.judged("archive", [])
        if ref is None and target.is_file() and not pinned:
            report.notes.append(f"no {ref_path(target).name} beside it: the zip's digest is "
                                "not pinned by a ref")
        report.ref_sha256 = ref.sha256 if ref is not None else None
        from horon_bundle.verify.harness.judge import judge_harness  # noqa: PLC0415 - start-up

        judge_harness(source, report, harness)
    if ref is not None and report.catalogue is not None and ref.name != report.catalogue.name:
        report.judged("ref.name", [Finding(codes.REF_NAME,
                                           f"{ref_label or target.name}: names {ref.name!r}, "
                                           f"the zip holds {report.catalogue.name!r}")])
    statement = report.digests.get(PROVENANCE_NAME)
    signature = audit_signature(target, report, options,
                                statement_sha256=statement.sha256 if statement else None)
    judge_policy(report, options, signature, manifest=None, facts=report.facts,
                 kind=BundleKind.HARNESS)
    return report


def bundle_kind(path: Path) -> BundleKind:
    """`harness` for a ref, or a zip or directory whose content is a harness bundle; `native`
    otherwise (also when it cannot be read: the native judge then says why)."""
    if path.name.endswith(REF_SUFFIX):
        return BundleKind.HARNESS
    try:
        with open_bundle(path) as source:
            return BundleKind.HARNESS if is_harness(source.files) else BundleKind.NATIVE
    except (Refused, OSError):
        return BundleKind.NATIVE
