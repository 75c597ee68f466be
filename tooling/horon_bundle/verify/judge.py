"""Verifying a bundle directory or archive from its own bytes: every rule, every finding.

Each file is hashed once (metadata files from the bytes already read, everything else by
streaming); findings are collected, not stopped at the first; nothing is extracted or
written. Only files plugin.json declares are read at all: an undeclared file is refused from
its name alone, never inflated or hashed. Checks that need what an earlier check refused are
reported as skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from horon_bundle.abi.section import StreamWindows, WindowedAccess, read_section
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import Digest, hash_bytes, hash_stream
from horon_bundle.model import checksums
from horon_bundle.model.harness.layout import REF_SUFFIX, is_harness
from horon_bundle.model.manifest import (
    CHECKSUMS_NAME,
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    Manifest,
    parse_manifest,
)
from horon_bundle.model.provenance import (
    MAX_PROVENANCE_BYTES,
    parse_provenance,
)
from horon_bundle.verify.advertised import SectionState, check_advertised
from horon_bundle.verify.claims import check_binding, check_evidence, check_graph
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.source import ArchiveSource, BundleSource, open_bundle


def _refusal_findings(exc: Refused) -> list[Finding]:
    return list(exc.findings)


def verify_path(path: Path, *, qa_patterns: Sequence[str] = (),
                archive_digest: bool = False) -> VerifyReport:
    """Verify a bundle directory or .zip archive; the report lists every check's result.

    `qa_patterns` are the auditor's own QA patterns (a policy's `qa-patterns`), applied on top
    of the built-in ones and those the bundle records. `archive_digest` also hashes the
    archive file (`report.archive_digest`) from the very bytes its entries were judged from,
    read once through the descriptor that was validated (`verify.archive_tape`), so a
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
    report.judged("layout.file-types", source.layout_findings)
    metadata: dict[str, bytes] = {}
    missing = Findings()
    for name, limit in ((MANIFEST_NAME, MAX_MANIFEST_BYTES),
                        (CHECKSUMS_NAME, checksums.MAX_CHECKSUMS_BYTES)):
        if name not in source.files:
            if name == MANIFEST_NAME and is_harness(source.files):
                missing.add(codes.LAYOUT_HARNESS_BUNDLE, f"{source.label}: a harness bundle, "
                                                         "not a native one: no plugin.json at "
                                                         "its root")
                continue
            missing.add(codes.LAYOUT_MISSING, f"{source.label}: {name} is missing")
            continue
        try:
            metadata[name] = source.read_small(name, limit)
        except Refused as exc:
            missing.extend(exc.findings)
    report.judged("layout.metadata-files", missing)

    manifest = None
    if MANIFEST_NAME in metadata:
        try:
            manifest = parse_manifest(metadata[MANIFEST_NAME])
            report.judged("manifest.strict", [])
        except Refused as exc:
            report.judged("manifest.strict", _refusal_findings(exc))
    else:
        report.skipped("manifest.strict", "plugin.json unreadable")
    report.manifest = manifest

    listed: dict[str, str] | None = None
    if CHECKSUMS_NAME in metadata:
        try:
            listed = checksums.parse(metadata[CHECKSUMS_NAME])
            report.judged("checksums.format", [])
        except Refused as exc:
            report.judged("checksums.format", _refusal_findings(exc))
    else:
        report.skipped("checksums.format", "SHA256SUMS unreadable")

    provenance_bytes = None
    provenance_path = None
    if manifest is not None and (asset := manifest.asset("provenance")) is not None:
        provenance_path = asset.file.path
        if provenance_path in source.files:
            try:
                provenance_bytes = source.read_small(provenance_path, MAX_PROVENANCE_BYTES)
            except Refused as exc:
                report.judged("provenance.read", _refusal_findings(exc))
    library_path = manifest.library.path if manifest is not None else None
    windows = StreamWindows()
    wanted = set(metadata) | (set(manifest.declared_files()) if manifest is not None else set())
    try:
        digests = _hash_all(source, wanted & set(source.files),
                            {**metadata, **({provenance_path: provenance_bytes}
                                            if provenance_path and provenance_bytes else {})},
                            watch=(library_path, windows))
    except Refused as exc:  # an archive entry failing its CRC or size check while streaming
        report.judged("integrity.read", _refusal_findings(exc))
        return
    report.digests = digests
    section = _read_section(source, manifest, windows)

    if manifest is not None:
        _check_files(source, manifest, listed, digests, report)
    else:
        report.skipped("layout.declared-files", "plugin.json was refused")
    if manifest is None:
        report.skipped("provenance", "plugin.json was refused")
        return
    if provenance_bytes is None:
        report.skipped("provenance", "provenance.json is missing")
        check_advertised(manifest, None, section, report)
        return
    try:
        provenance = parse_provenance(provenance_bytes)
    except Refused as exc:
        report.judged("provenance.schema", _refusal_findings(exc))
        check_advertised(manifest, None, section, report)
        return
    report.judged("provenance.schema", [])
    report.provenance = provenance
    check_binding(manifest, provenance, digests, report)
    check_evidence(manifest, provenance.facts, digests, report)
    check_graph(manifest, provenance.facts, report, qa_patterns=qa_patterns)
    check_advertised(manifest, provenance.facts, section, report)


def _hash_all(source: BundleSource, wanted: set[str], already_read: dict[str, bytes],
              watch: tuple[str | None, StreamWindows]) -> dict[str, Digest]:
    """Hash every wanted file once; the watched one (the library) also fills its windows."""
    digests = {}
    watched, windows = watch
    for path in sorted(wanted):
        if path in already_read:
            digests[path] = hash_bytes(already_read[path])
            continue
        stream = source.open(path, resumable=path == watched)
        try:
            digests[path] = hash_stream(stream,  # type: ignore[arg-type]
                                        windows.feed if path == watched else None)
        finally:
            stream.close()
    return digests


def _read_section(source: BundleSource, manifest: Manifest | None,
                  windows: StreamWindows) -> SectionState:
    """The library's .horon_abi section, from the windows kept while hashing it.

    Ranges outside the windows cost one targeted re-read of the library: a seek in a
    directory, a re-inflation from the nearest resume point in an archive (never from the
    entry's start); bounded memory, nothing loaded or extracted.
    """
    if manifest is None or manifest.library.path not in source.files:
        return SectionState(None, read=False)
    path = manifest.library.path
    access = WindowedAccess(windows, lambda: source.open(path))
    try:
        advertised = read_section(access, name=path, target=manifest.target)
    except Refused as exc:
        return SectionState(None, tuple(exc.findings))
    return SectionState(advertised)


def _check_files(source: BundleSource, manifest: Manifest, listed: dict[str, str] | None,
                 digests: dict[str, Digest], report: VerifyReport) -> None:
    label = source.label
    declared = manifest.declared_files()
    present = set(source.files)
    layout = Findings()
    for path in sorted(present - set(declared) - {MANIFEST_NAME, CHECKSUMS_NAME}):
        layout.add(codes.LAYOUT_UNDECLARED, f"{label}: {path!r} is not declared in plugin.json")
    for path in sorted(set(declared) - present):
        layout.add(codes.LAYOUT_MISSING, f"{label}: declared {path!r} is missing")
    report.judged("layout.declared-files", layout)

    integrity = Findings()
    for path, ref in sorted(declared.items()):
        digest = digests.get(path)
        if digest is None:
            continue
        if digest.size != ref.size:
            integrity.add(codes.CHECKSUM_SIZE, f"{label}: {path!r} has {digest.size} bytes, "
                                               f"plugin.json says {ref.size}")
        if digest.sha256 != ref.sha256:
            integrity.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digest.sha256} "
                                                   f"!= plugin.json {ref.sha256}")
    for sidecar in manifest.sidecars:
        info = source.files.get(sidecar.file.path)
        if info is not None and info.executable not in (None, sidecar.executable):
            integrity.add(codes.LAYOUT_MODE, f"{label}: {sidecar.file.path!r} executable bit "
                                             f"is {info.executable}, plugin.json says "
                                             f"{sidecar.executable}")
    report.judged("integrity.declared", integrity)

    if listed is None:
        report.skipped("integrity.sha256sums", "SHA256SUMS was refused")
        return
    sums = Findings()
    for path in sorted(present - set(listed) - {CHECKSUMS_NAME}):
        sums.add(codes.CHECKSUM_UNLISTED, f"{label}: {path!r} is not listed in SHA256SUMS")
    for path in sorted(set(listed) - present):
        sums.add(codes.CHECKSUM_MISSING, f"{label}: SHA256SUMS lists {path!r}, not present")
    for path in sorted(set(listed) & set(digests)):
        if digests[path].sha256 != listed[path]:
            sums.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digests[path].sha256} "
                                              f"!= SHA256SUMS {listed[path]}")
    report.judged("integrity.sha256sums", sums)


