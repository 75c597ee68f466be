"""Verifying a native bundle directory or archive from its own bytes: every rule, every finding.

Its checks are the rows of `NATIVE_CHECKS`, run in order on one shared context
(`verify.native_context`): the bundle's files (`verify.bundle_files`), the claims of its
provenance (`verify.claims`) and claimed = advertised (`verify.advertised`). Findings are
collected, not stopped at the first; a check that needs what an earlier one refused is
reported as skipped, or not at all when nothing after a refusal can be judged.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.model.checks import PASS
from horon_bundle.model.harness.layout import REF_SUFFIX
from horon_bundle.verify.advertised import check_advertised
from horon_bundle.verify.bundle_files import (
    check_checksums_format,
    check_declared_files,
    check_declared_integrity,
    check_file_types,
    check_manifest,
    check_sha256sums,
    hash_files,
    read_metadata,
)
from horon_bundle.verify.check_table import CheckRow, CheckTable, run_table
from horon_bundle.verify.claims import (
    check_binding,
    check_compiled,
    check_evidence,
    check_graph_present,
    check_qa_free,
    check_schema,
    provenance_absent,
    read_provenance,
)
from horon_bundle.verify.native_context import NativeContext
from horon_bundle.verify.reading.archive_source import ArchiveSource
from horon_bundle.verify.reading.interface import BundleSource
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.report import VerifyReport

# The checks of a native bundle, in the order they run. A release proves itself by a *pass*
# of every row marked proves_release (install and publish require it: `check_table.unproven`);
# a qa bundle installed with --allow-qa may lack a graph or carry QA providers.
NATIVE_CHECKS: CheckTable[NativeContext] = CheckTable(passing=frozenset([PASS]), rows=(
    CheckRow("layout.file-types", check_file_types),
    CheckRow("layout.metadata-files", read_metadata),
    CheckRow("manifest.strict", check_manifest, proves_release=True),
    CheckRow("checksums.format", check_checksums_format),
    CheckRow("provenance.read", read_provenance),
    CheckRow("integrity.read", hash_files, stops=True),
    CheckRow("layout.declared-files", check_declared_files),
    CheckRow("integrity.declared", check_declared_integrity, proves_release=True),
    CheckRow("integrity.sha256sums", check_sha256sums, proves_release=True),
    CheckRow("provenance", provenance_absent),
    CheckRow("provenance.schema", check_schema, proves_release=True),
    CheckRow("provenance.binding", check_binding, proves_release=True),
    CheckRow("evidence", check_evidence, proves_release=True),
    CheckRow("graph.present", check_graph_present, proves_release=True, waived_for_qa=True),
    CheckRow("graph.qa-free", check_qa_free, proves_release=True, waived_for_qa=True),
    CheckRow("features.compiled", check_compiled, proves_release=True),
    CheckRow("features.advertised", check_advertised, proves_release=True),
))


def _refusal_findings(exc: Refused) -> list[Finding]:
    return list(exc.findings)


def verify_path(path: Path, *, qa_patterns: Sequence[str] = (),
                archive_digest: bool = False) -> VerifyReport:
    """Verify a bundle directory or .zip archive; the report lists every check's result.

    `qa_patterns` are the auditor's own QA patterns (a policy's `qa-patterns`), applied on top
    of the built-in ones and those the bundle records. `archive_digest` also hashes the
    archive file (`report.archive_digest`) from the very bytes its entries were judged from,
    read once through the descriptor that was validated (`verify.reading.archive_hasher`), so a
    signature or a publication covers exactly the bytes judged."""
    report = VerifyReport(path=str(path))
    if path.name.endswith(REF_SUFFIX):
        report.judged("archive", [Finding(codes.LAYOUT_HARNESS_BUNDLE,
                                          f"{path}: the ref of a harness bundle, not a native "
                                          "bundle")])
        return report
    try:
        source = open_bundle(path)
    except Refused as exc:
        report.judged("archive", _refusal_findings(exc))
        return report
    with source:
        return verify_opened(source, report, qa_patterns=qa_patterns,
                             archive_digest=archive_digest)


def verify_opened(source: BundleSource, report: VerifyReport, *,
                  qa_patterns: Sequence[str] = (), archive_digest: bool = False) -> VerifyReport:
    """`verify_path` on a bundle already opened (and walked, or validated) once: the caller
    that opened it to decide what it is judges those same files, never a second walk."""
    if isinstance(source, ArchiveSource):
        report.judged("archive", [])
        if archive_digest:
            source.start_digest()
    verify_source(source, report, qa_patterns=qa_patterns)
    if archive_digest and isinstance(source, ArchiveSource):
        report.archive_digest = source.archive_digest()
    return report


def verify_source(source: BundleSource, report: VerifyReport, *,
                  qa_patterns: Sequence[str] = ()) -> None:
    """Every row of `NATIVE_CHECKS` on `source`, into `report`."""
    run_table(NATIVE_CHECKS, NativeContext(source, report, qa_patterns), report)
