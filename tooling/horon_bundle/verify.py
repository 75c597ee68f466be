"""Verifying a bundle directory or archive from its own bytes: every rule, every finding.

Each file is hashed once (metadata files from the bytes already read, everything else by
streaming); findings are collected, not stopped at the first; nothing is extracted or
written. Checks that need what an earlier check refused are reported as skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from horon_bundle import checksums, codes
from horon_bundle.abi_section import StreamWindows, WindowedAccess, read_section
from horon_bundle.bundle_source import BundleSource, open_bundle
from horon_bundle.errors import Finding, Findings, Refused
from horon_bundle.evidence import EVIDENCE_INVOCATION, EVIDENCE_RECORD, Advertised
from horon_bundle.gates import advertised_findings, graph_findings, plugin_features
from horon_bundle.hashing import Digest, hash_bytes, hash_stream
from horon_bundle.manifest import (
    CHECKSUMS_NAME,
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    Manifest,
    parse_manifest,
)
from horon_bundle.provenance import MAX_PROVENANCE_BYTES, BuildFacts, Provenance, parse_provenance
from horon_bundle.record import record_findings_for_bundle

REPORT_FORMAT = "horon.verify-report.v1"
PASS, FAIL, SKIP = "pass", "fail", "skip"


@dataclass(slots=True)
class Check:
    name: str
    status: str
    findings: list[Finding] = field(default_factory=list)
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "result": self.status, "note": self.note,
                "findings": [f.to_dict() for f in self.findings]}


@dataclass(slots=True)
class VerifyReport:
    path: str
    checks: list[Check] = field(default_factory=list)
    manifest: Manifest | None = None
    provenance: Provenance | None = None
    digests: dict[str, Digest] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for check in self.checks for f in check.findings]

    @property
    def ok(self) -> bool:
        return not self.findings

    def check(self, name: str, findings: Findings | list[Finding], note: str = "") -> bool:
        items = list(findings)
        self.checks.append(Check(name, FAIL if items else PASS, items, note))
        return not items

    def skip(self, name: str, why: str) -> None:
        self.checks.append(Check(name, SKIP, [], why))

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT, "path": self.path, "ok": self.ok,
            "bundle": None if self.manifest is None else {
                "id": self.manifest.id, "version": self.manifest.version,
                "target": self.manifest.target, "channel": self.manifest.channel},
            "checks": [c.to_json() for c in self.checks],
            "notes": list(self.notes),
        }



def _refusal_findings(exc: Refused) -> list[Finding]:
    return list(exc.findings)


def verify_path(path: Path) -> VerifyReport:
    """Verify a bundle directory or .zip archive; the report lists every check's result."""
    report = VerifyReport(path=str(path))
    try:
        source = open_bundle(path)
    except Refused as exc:
        report.check("archive", _refusal_findings(exc))
        return report
    with source:
        if path.is_file():
            report.check("archive", [])
        verify_source(source, report)
    return report


def verify_source(source: BundleSource, report: VerifyReport) -> None:
    report.check("layout.file-types", source.layout_findings)
    metadata: dict[str, bytes] = {}
    missing = Findings()
    for name, limit in ((MANIFEST_NAME, MAX_MANIFEST_BYTES),
                        (CHECKSUMS_NAME, checksums.MAX_CHECKSUMS_BYTES)):
        if name not in source.files:
            missing.add(codes.LAYOUT_MISSING, f"{source.label}: {name} is missing")
            continue
        try:
            metadata[name] = source.read_small(name, limit)
        except Refused as exc:
            missing.extend(exc.findings)
    report.check("layout.metadata-files", missing)

    manifest = None
    if MANIFEST_NAME in metadata:
        try:
            manifest = parse_manifest(metadata[MANIFEST_NAME])
            report.check("manifest.strict", [])
        except Refused as exc:
            report.check("manifest.strict", _refusal_findings(exc))
    else:
        report.skip("manifest.strict", "plugin.json unreadable")
    report.manifest = manifest

    listed: dict[str, str] | None = None
    if CHECKSUMS_NAME in metadata:
        try:
            listed = checksums.parse(metadata[CHECKSUMS_NAME])
            report.check("checksums.format", [])
        except Refused as exc:
            report.check("checksums.format", _refusal_findings(exc))
    else:
        report.skip("checksums.format", "SHA256SUMS unreadable")

    provenance_bytes = None
    provenance_path = None
    if manifest is not None and (asset := manifest.asset("provenance")) is not None:
        provenance_path = asset.file.path
        if provenance_path in source.files:
            try:
                provenance_bytes = source.read_small(provenance_path, MAX_PROVENANCE_BYTES)
            except Refused as exc:
                report.check("provenance.read", _refusal_findings(exc))
    library_path = manifest.library.path if manifest is not None else None
    windows = StreamWindows()
    try:
        digests = _hash_all(source, {**metadata, **({provenance_path: provenance_bytes}
                                                    if provenance_path and provenance_bytes
                                                    else {})},
                            watch=(library_path, windows))
    except Refused as exc:  # an archive entry failing its CRC or size check while streaming
        report.check("integrity.read", _refusal_findings(exc))
        return
    report.digests = digests
    section = _read_section(source, manifest, windows)

    if manifest is not None:
        _check_files(source, manifest, listed, digests, report)
    else:
        report.skip("layout.declared-files", "plugin.json was refused")
    if manifest is None:
        report.skip("provenance", "plugin.json was refused")
        return
    if provenance_bytes is None:
        report.skip("provenance", "provenance.json is missing")
        _check_advertised(manifest, None, section, report)
        return
    try:
        provenance = parse_provenance(provenance_bytes)
    except Refused as exc:
        report.check("provenance.schema", _refusal_findings(exc))
        _check_advertised(manifest, None, section, report)
        return
    report.check("provenance.schema", [])
    report.provenance = provenance
    _check_binding(manifest, provenance, digests, report)
    _check_evidence(manifest, provenance.facts, digests, report)
    _check_graph(manifest, provenance.facts, report)
    _check_advertised(manifest, provenance.facts, section, report)


def _hash_all(source: BundleSource, already_read: dict[str, bytes],
              watch: tuple[str | None, StreamWindows]) -> dict[str, Digest]:
    """Hash every file once; the watched one (the library) also fills its windows."""
    digests = {}
    watched, windows = watch
    for path in sorted(source.files):
        if path in already_read:
            digests[path] = hash_bytes(already_read[path])
            continue
        stream = source.open(path)
        try:
            digests[path] = hash_stream(stream,  # type: ignore[arg-type]
                                        windows.feed if path == watched else None)
        finally:
            stream.close()
    return digests


@dataclass(frozen=True, slots=True)
class SectionState:
    """What the library's static section said: metadata, absent (None), or refused."""

    advertised: Advertised | None
    findings: tuple[Finding, ...] = ()
    read: bool = True


def _read_section(source: BundleSource, manifest: Manifest | None,
                  windows: StreamWindows) -> SectionState:
    """The library's .horon_abi section, from the windows kept while hashing it.

    Ranges outside the windows cost one targeted re-read of the library (bounded memory);
    nothing is loaded or extracted.
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
    report.check("layout.declared-files", layout)

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
    report.check("integrity.declared", integrity)

    if listed is None:
        report.skip("integrity.sha256sums", "SHA256SUMS was refused")
        return
    sums = Findings()
    for path in sorted(present - set(listed) - {CHECKSUMS_NAME}):
        sums.add(codes.CHECKSUM_UNLISTED, f"{label}: {path!r} is not listed in SHA256SUMS")
    for path in sorted(set(listed) - present):
        sums.add(codes.CHECKSUM_MISSING, f"{label}: SHA256SUMS lists {path!r}, not present")
    for path in sorted(set(listed) & present):
        if digests[path].sha256 != listed[path]:
            sums.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digests[path].sha256} "
                                              f"!= SHA256SUMS {listed[path]}")
    report.check("integrity.sha256sums", sums)


def _check_binding(manifest: Manifest, provenance: Provenance, digests: dict[str, Digest],
                   report: VerifyReport) -> None:
    findings = Findings()
    expected = {manifest.library.path: manifest.library.sha256}
    expected.update({s.file.path: s.file.sha256 for s in manifest.sidecars})
    for name in sorted(set(expected) | set(provenance.subjects)):
        want, got = expected.get(name), provenance.subjects.get(name)
        if want is None:
            findings.add(codes.PROVENANCE_SUBJECT, f"provenance.json: subject {name!r} is not "
                                                   "the library or a sidecar")
        elif got is None:
            findings.add(codes.PROVENANCE_SUBJECT, f"provenance.json: no subject for {name!r}")
        elif got != want or (name in digests and digests[name].sha256 != got):
            actual = digests[name].sha256 if name in digests else "(missing)"
            findings.add(codes.PROVENANCE_SUBJECT,
                         f"provenance.json: subject {name!r} sha256 {got} != file {actual}")
    facts = provenance.facts
    pairs = [("id", facts.plugin_id, manifest.id), ("version", facts.version, manifest.version),
             ("target", facts.target, manifest.target), ("profile", facts.profile,
                                                         manifest.profile),
             ("channel", facts.channel, manifest.channel),
             ("features", list(facts.features), list(manifest.features))]
    for name, recorded, declared in pairs:
        if recorded != declared:
            findings.add(codes.PROVENANCE_CONTRADICTION,
                         f"provenance.json: {name} {recorded!r} != plugin.json {declared!r}")
    report.check("provenance.binding", findings)


def _check_evidence(manifest: Manifest, facts: BuildFacts, digests: dict[str, Digest],
                    report: VerifyReport) -> None:
    findings = Findings()
    library = digests.get(manifest.library.path)
    if facts.evidence == EVIDENCE_INVOCATION:
        if facts.invocation is None:
            findings.add(codes.EVIDENCE_MISSING, "provenance.json: evidence 'invocation' but no "
                                                 "recorded cargo invocation")
        elif library is not None:
            name = manifest.library.path.rsplit("/", 1)[-1]
            matching = [a for a in facts.invocation.artifacts if a.path.endswith("/" + name)]
            if not any(a.sha256 == library.sha256 and a.size == library.size for a in matching):
                findings.add(codes.EVIDENCE_MISMATCH,
                             f"provenance.json: no artifact of the recorded invocation has the "
                             f"library's sha256 {library.sha256}")
    elif facts.evidence == EVIDENCE_RECORD:
        if facts.record is None:
            findings.add(codes.EVIDENCE_MISSING, "provenance.json: evidence 'artifact-record' but "
                                                 "no record")
        else:
            findings.extend(record_findings_for_bundle(facts, manifest, library))
    report.check("evidence", findings, note=facts.evidence)


def _check_graph(manifest: Manifest, facts: BuildFacts, report: VerifyReport) -> None:
    graph = facts.graph
    if graph is None:
        if manifest.channel == "release":
            report.check("graph.present", [Finding(
                codes.GRAPH_MISSING, "provenance.json: release bundle without a recorded graph")])
        else:
            report.skip("graph.present", "qa bundle without a recorded graph")
        return
    report.check("graph.present", [])
    providers, findings = graph_findings(graph, claim=facts.claim, channel=manifest.channel,
                                         patterns=facts.qa_patterns)
    qa_findings = [f for f in findings if f.code is codes.GRAPH_QA_PROVIDER]
    drift = [f for f in findings if f.code is not codes.GRAPH_QA_PROVIDER]
    if manifest.channel == "release":
        report.check("graph.qa-free", qa_findings)
    else:
        report.skip("graph.qa-free", f"qa bundle with {len(providers)} QA provider(s)")
    if plugin_features(graph) != tuple(manifest.features):
        drift.append(Finding(codes.FEATURES_DRIFT,
                             f"graph: {graph.root_package.name} compiled "
                             f"{list(plugin_features(graph))}, plugin.json lists "
                             f"{list(manifest.features)}"))
    report.check("features.compiled", drift)


def _check_advertised(manifest: Manifest, facts: BuildFacts | None, section: SectionState,
                      report: VerifyReport) -> None:
    """Claimed = advertised, from the library's static section (any target, nothing loaded)
    and from the advertised metadata recorded at build time; without a section, the recorded
    metadata alone, and the check's note says so."""
    recorded = facts.advertised if facts is not None else None
    if section.findings:
        report.check("features.advertised", list(section.findings),
                     note="the library's .horon_abi section")
        return
    if not section.read:
        report.skip("features.advertised", "the library is missing")
        return
    observed = ", ".join(recorded.observed_by) if recorded is not None else ""
    sources: list[tuple[Advertised, str]] = []
    if section.advertised is not None:
        sources.append((section.advertised, f"{manifest.library.path}'s .horon_abi section"))
        note = "read from the library's .horon_abi section"
    elif recorded is not None:
        note = ("no .horon_abi section: using the advertised metadata recorded at build time ("
                f"{observed})")
    else:
        report.skip("features.advertised", "no .horon_abi section and no advertised metadata "
                                           "recorded at build time")
        return
    if recorded is not None:
        sources.append((recorded, f"the advertised metadata recorded in provenance.json "
                                  f"({observed})"))
    findings: list[Finding] = []
    for advertised, who in sources:
        findings += advertised_findings(advertised, features=manifest.features,
                                        plugin_id=manifest.id, who=who)
        if advertised.abi_minor != manifest.abi_minor:
            findings.append(Finding(codes.ABI_METADATA,
                                    f"{who} advertises ABI minor {advertised.abi_minor}, "
                                    f"plugin.json says {manifest.abi_minor}"))
    if section.advertised is not None and recorded is not None:
        if section.advertised.same_metadata(recorded):
            note += f"; agrees with the metadata recorded at build time ({observed})"
        else:
            findings.append(Finding(
                codes.ABI_SECTION_MISMATCH,
                f"{manifest.library.path}: the .horon_abi section says "
                f"{section.advertised.summary()}; provenance.json recorded "
                f"{recorded.summary()} ({observed}) at build time"))
    report.check("features.advertised", findings, note=note)
