"""Judging a harness bundle (zip or unpacked directory) from its own bytes.

Every file is hashed once and checked against SHA256SUMS; the plugin is read the way its
host reads it; catalogue.json must equal the catalogue recomputed from the files, and the
provenance statement's subjects the files' digests; then the host's events and the hook lint.
Warnings stay warnings unless `--strict`, or the chosen host profile marks one broken.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import Digest, hash_stream
from horon_bundle.core.strictjson import read_json
from horon_bundle.model import checksums
from horon_bundle.model.harness.layout import (
    CATALOGUE_NAME,
    CHECKSUMS_NAME,
    ENTRY_NAME,
    MAX_JSON_BYTES,
    PROVENANCE_NAME,
    REQUIRED,
    RESERVED,
    manifest_paths,
)
from horon_bundle.model.harness.profile import shipped_profiles
from horon_bundle.model.harness.reader import FileInfo, read_plugin
from horon_bundle.model.harness.statement import MAX_STATEMENT_BYTES, parse_harness_statement
from horon_bundle.rules.harness_events import judge_events
from horon_bundle.rules.harness_lint import MAX_SCRIPT_BYTES, lint, promote
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.source import BundleSource

# the checks of a harness zip that prove something: install and publish require each to have
# run and passed (warnings allowed); a skip is not good enough
PROVING_CHECKS = (
    "layout.file-types", "layout.harness-files", "checksums.format", "integrity.sha256sums",
    "harness.plugin", "harness.catalogue", "harness.provenance", "harness.events", "hook.lint",
)


@dataclass(slots=True)
class PluginView:
    """The plugin's own files of a bundle source: everything but the reserved root files."""

    source: BundleSource

    @property
    def files(self) -> Mapping[str, FileInfo]:
        return {p: f for p, f in self.source.files.items() if p not in RESERVED}

    def read_small(self, path: str, limit: int) -> bytes:
        return self.source.read_small(path, limit)

    def read_text(self, path: str) -> str | None:
        info = self.source.files.get(path)
        if info is None or info.size > MAX_SCRIPT_BYTES:
            return None
        data = self.source.read_small(path, MAX_SCRIPT_BYTES)
        if b"\x00" in data[:8192]:
            return None
        return data.decode("utf-8", errors="replace")


def is_harness(files: Mapping[str, object]) -> bool:
    """A harness bundle by its content: a harness manifest or a catalogue, no native plugin.json
    at the root."""
    return "plugin.json" not in files and (
        CATALOGUE_NAME in files or any(p in files for p in manifest_paths()))


def _judged(report: HarnessReport, name: str, refusals: list[Finding], warnings: list[Finding],
            options: HarnessOptions, *, note: str = "") -> bool:
    promoted, kept = promote(Findings(list(warnings)), strict=options.strict, host=options.host)
    return report.judged(name, [*refusals, *promoted], warnings=kept, note=note)


def judge_harness(source: BundleSource, report: HarnessReport, options: HarnessOptions) -> None:
    report.host = options.host
    report.judged("layout.file-types", source.layout_findings)
    missing = Findings()
    for name in REQUIRED:
        if name not in source.files:
            missing.add(codes.LAYOUT_MISSING, f"{source.label}: {name} is missing")
    if not report.judged("layout.harness-files", missing):
        return
    try:
        digests = _hash_all(source)
    except Refused as exc:
        report.judged("integrity.read", list(exc.findings))
        return
    report.digests = digests
    _check_sums(source, digests, report)

    view = PluginView(source)
    refusals, warnings = Findings(), Findings()
    try:
        entry = _entry(source)
        contents = read_plugin(view, refusals=refusals, warnings=warnings, entry=entry)
    except Refused as exc:
        refusals.extend(exc.findings)
        contents = None
    _judged(report, "harness.plugin", list(refusals), list(warnings), options)
    if contents is None:
        report.skipped("harness.catalogue", "the plugin was refused")
        return
    catalogue = contents.catalogue
    report.catalogue = catalogue
    try:
        written = source.read_small(CATALOGUE_NAME, 16 << 20)
    except Refused as exc:
        written = b""
        report.judged("harness.catalogue", list(exc.findings))
    else:
        same = written == catalogue.to_bytes()
        report.judged("harness.catalogue", [] if same else [Finding(
            codes.HARNESS_CATALOGUE,
            f"{source.label}: {CATALOGUE_NAME} differs from the catalogue of the files")],
            note="recomputed from the files")
    _check_provenance(source, view, digests, report)

    profiles = shipped_profiles()
    event_refusals, event_warnings = judge_events(catalogue, profiles, options.host)
    host_note = f"host {options.host.token}" if options.host is not None else "no --host"
    _judged(report, "harness.events", list(event_refusals), list(event_warnings), options,
            note=host_note)
    named = (*profiles, *([options.host] if options.host is not None else []))
    result = lint(catalogue, view.files, view.read_text, named)
    report.scripts = sorted(result.scripts)
    _judged(report, "hook.lint", list(result.refusals), list(result.warnings), options)


def _entry(source: BundleSource) -> dict[str, object] | None:
    """The marketplace entry the plugin was built from (its metadata where it has none)."""
    if ENTRY_NAME not in source.files:
        return None
    document = read_json(source.read_small(ENTRY_NAME, MAX_JSON_BYTES), source=ENTRY_NAME,
                         max_bytes=MAX_JSON_BYTES, any_number=True)
    if not isinstance(document, dict) or not isinstance(document.get("name"), str):
        raise Refused.one(codes.MARKETPLACE_INVALID,
                          f"{ENTRY_NAME}: expected a marketplace entry with a name")
    return document


def _hash_all(source: BundleSource) -> dict[str, Digest]:
    digests = {}
    for path in sorted(source.files):
        stream = source.open(path)
        try:
            digests[path] = hash_stream(stream)  # type: ignore[arg-type]
        finally:
            stream.close()
    return digests


def _check_sums(source: BundleSource, digests: dict[str, Digest], report: HarnessReport) -> None:
    try:
        listed = checksums.parse(source.read_small(CHECKSUMS_NAME,
                                                   checksums.MAX_CHECKSUMS_BYTES))
    except Refused as exc:
        report.judged("checksums.format", list(exc.findings))
        return
    report.judged("checksums.format", [])
    label, present = source.label, set(source.files) - {CHECKSUMS_NAME}
    sums = Findings()
    for path in sorted(present - set(listed)):
        sums.add(codes.CHECKSUM_UNLISTED, f"{label}: {path!r} is not listed in SHA256SUMS")
    for path in sorted(set(listed) - present):
        sums.add(codes.CHECKSUM_MISSING, f"{label}: SHA256SUMS lists {path!r}, not present")
    for path in sorted(set(listed) & present):
        if digests[path].sha256 != listed[path]:
            sums.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digests[path].sha256} "
                                              f"!= SHA256SUMS {listed[path]}")
    report.judged("integrity.sha256sums", sums)


def _check_provenance(source: BundleSource, view: PluginView, digests: dict[str, Digest],
                      report: HarnessReport) -> None:
    findings = Findings()
    try:
        provenance = parse_harness_statement(
            source.read_small(PROVENANCE_NAME, MAX_STATEMENT_BYTES))
    except Refused as exc:
        report.judged("harness.provenance", list(exc.findings))
        return
    report.facts = provenance.facts
    subjects = [*view.files, CATALOGUE_NAME, *([ENTRY_NAME] if ENTRY_NAME in digests else [])]
    expected = {p: digests[p].sha256 for p in subjects}
    label = source.label
    for path in sorted(set(expected) | set(provenance.subjects)):
        if path not in provenance.subjects:
            findings.add(codes.HARNESS_PROVENANCE, f"{label}: {path!r} is not a subject")
        elif path not in expected:
            findings.add(codes.HARNESS_PROVENANCE,
                         f"{label}: subject {path!r} is not a file of the bundle")
        elif provenance.subjects[path] != expected[path]:
            findings.add(codes.HARNESS_PROVENANCE,
                         f"{label}: {path!r} sha256 {expected[path]} != provenance subject "
                         f"{provenance.subjects[path]}")
    catalogue = report.catalogue
    facts = provenance.facts
    if catalogue is not None and (facts.name, facts.version) != (catalogue.name,
                                                                 catalogue.version):
        findings.add(codes.HARNESS_PROVENANCE,
                     f"{label}: provenance names {facts.name} {facts.version}, the plugin is "
                     f"{catalogue.name} {catalogue.version}")
    revision = facts.source_revision or "no git revision"
    dirty = " (dirty)" if facts.source_dirty else ""
    report.judged("harness.provenance", findings, note=f"source {revision}{dirty}")


__all__ = ["HarnessOptions", "HarnessReport", "is_harness", "judge_harness"]
