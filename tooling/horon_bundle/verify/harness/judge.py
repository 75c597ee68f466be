"""Judging a harness bundle (zip or unpacked directory) from its own bytes.

Every file is hashed once and checked against SHA256SUMS; the plugin is read the way its
host reads it; catalogue.json must equal the catalogue recomputed from the files, and the
provenance statement's subjects the files' digests; then the host's events and the hook lint.
Warnings stay warnings unless `--strict`, or the chosen host profile marks one broken.
Its checks are the rows of `HARNESS_CHECKS`, run in order on one shared context.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import Digest, hash_stream
from horon_bundle.core.strictjson import read_json
from horon_bundle.model import checksums
from horon_bundle.model.checks import PASS, WARN
from horon_bundle.model.harness.catalogue import MAX_CATALOGUE_BYTES, parse_catalogue
from horon_bundle.model.harness.layout import (
    CATALOGUE_NAME,
    CHECKSUMS_NAME,
    ENTRY_NAME,
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_SUMS_BYTES,
    PROVENANCE_NAME,
    REQUIRED,
    RESERVED,
    is_harness,
)
from horon_bundle.model.harness.manifest import content_version
from horon_bundle.model.harness.profile import HostProfile, shipped_profiles
from horon_bundle.model.harness.reader import FileInfo, PluginContents, read_plugin
from horon_bundle.model.harness.statement import MAX_STATEMENT_BYTES, parse_harness_statement
from horon_bundle.rules.harness_events import judge_events
from horon_bundle.rules.harness_lint import MAX_SCRIPT_BYTES, condense, lint, promote
from horon_bundle.rules.harness_quoting import judge_quoting
from horon_bundle.verify.check_table import (
    CheckRow,
    CheckTable,
    Judged,
    Skipped,
    Verdict,
    run_table,
)
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.reading.interface import BundleSource


@dataclass(slots=True)
class PluginView:
    """The plugin's own files of a bundle source: everything but the reserved root files
    (taken once: the readers ask for them per path)."""

    source: BundleSource
    files: Mapping[str, FileInfo] = field(init=False)

    def __post_init__(self) -> None:
        self.files = {p: f for p, f in self.source.files.items() if p not in RESERVED}

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


@dataclass(slots=True)
class HarnessContext:
    """What the harness checks share: the source, the report, the options, and what each row
    produced for the rows after it (None: an earlier row could not produce it)."""

    source: BundleSource
    report: HarnessReport
    options: HarnessOptions
    digests: dict[str, Digest] = field(default_factory=dict)  # every file hashed once
    listed: dict[str, str] | None = None  # SHA256SUMS parsed (checksums.format)
    contents: PluginContents | None = None  # the plugin as its host reads it (harness.plugin)
    profiles: tuple[HostProfile, ...] = ()  # the shipped host profiles (harness.events)
    _view: PluginView | None = None

    @property
    def view(self) -> PluginView:
        if self._view is None:
            self._view = PluginView(self.source)
        return self._view


def _graded(refusals: list[Finding], warnings: list[Finding], options: HarnessOptions, *,
            note: str = "") -> Judged:
    promoted, kept = promote(Findings(list(warnings)), strict=options.strict, host=options.host)
    return Judged(condense([*refusals, *promoted]), warnings=condense(kept), note=note)


def check_file_types(ctx: HarnessContext) -> Verdict:
    """layout.file-types: what the walk or the archive reader refused (links, devices …)."""
    return Judged(list(ctx.source.layout_findings))


def check_required(ctx: HarnessContext) -> Verdict:
    """layout.harness-files: the root files build writes beside the plugin."""
    missing = Findings()
    for name in REQUIRED:
        if name not in ctx.source.files:
            missing.add(codes.LAYOUT_MISSING, f"{ctx.source.label}: {name} is missing")
    return Judged(list(missing))


def hash_files(ctx: HarnessContext) -> Verdict | None:
    """integrity.read: every file hashed once (reported only when an entry cannot be)."""
    try:
        ctx.digests = ctx.report.digests = _hash_all(ctx.source)
    except Refused as exc:
        return Judged(exc.findings)
    return None


def check_checksums_format(ctx: HarnessContext) -> Verdict:
    """checksums.format: SHA256SUMS by its strict reader."""
    try:
        ctx.listed = checksums.parse(ctx.source.read_small(CHECKSUMS_NAME, MAX_SUMS_BYTES),
                                     max_bytes=MAX_SUMS_BYTES)
    except Refused as exc:
        return Judged(exc.findings)
    return Judged()


def check_plugin(ctx: HarnessContext) -> Verdict:
    """harness.plugin: the plugin read the way its host reads it (a plugin without manifest or
    entry named as its catalogue names it; one nothing versions, versioned by its content)."""
    refusals, warnings = Findings(), Findings()
    view = ctx.view
    try:
        entry = _entry(ctx.source)
        ctx.contents = read_plugin(
            view, refusals=refusals, warnings=warnings, entry=entry,
            name=_catalogued_name(ctx.source),
            content_version=lambda: content_version(
                {p: ctx.digests[p].sha256 for p in view.files}))
    except Refused as exc:
        refusals.extend(exc.findings)
    if ctx.contents is not None:
        warnings.extend(judge_quoting(ctx.contents.catalogue.hooks))
    return _graded(list(refusals), list(warnings), ctx.options)


def _catalogued_name(source: BundleSource) -> str | None:
    """The name catalogue.json gives the plugin (None when it cannot be read): the name of a
    plugin that has no manifest and no marketplace entry, as its directory named it."""
    try:
        return parse_catalogue(source.read_small(CATALOGUE_NAME, MAX_CATALOGUE_BYTES)).name
    except Refused:
        return None


def check_catalogue(ctx: HarnessContext) -> Verdict:
    """harness.catalogue: catalogue.json is the catalogue recomputed from the files."""
    if ctx.contents is None:
        return Skipped("the plugin was refused")
    catalogue = ctx.report.catalogue = ctx.contents.catalogue
    try:
        written = ctx.source.read_small(CATALOGUE_NAME, 16 << 20)
    except Refused as exc:
        return Judged(exc.findings)
    same = written == catalogue.to_bytes()
    return Judged([] if same else [Finding(
        codes.HARNESS_CATALOGUE,
        f"{ctx.source.label}: {CATALOGUE_NAME} differs from the catalogue of the files")],
        note="recomputed from the files")


def check_events(ctx: HarnessContext) -> Verdict | None:
    """harness.events: the events the hooks use, against every shipped host and --host."""
    if ctx.contents is None:
        return None
    options = ctx.options
    ctx.profiles = shipped_profiles()
    event_refusals, event_warnings = judge_events(ctx.contents.catalogue, ctx.profiles,
                                                  options.host)
    host_note = f"host {options.host.token}" if options.host is not None else "no --host"
    return _graded(list(event_refusals), list(event_warnings), options, note=host_note)


def check_hooks(ctx: HarnessContext) -> Verdict | None:
    """hook.lint (`rules.harness_lint`), naming the hosts each warning matters to."""
    if ctx.contents is None:
        return None
    options, view = ctx.options, ctx.view
    named = (*ctx.profiles, *([options.host] if options.host is not None else []))
    result = lint(ctx.contents.catalogue, view.files, view.read_text, named)
    ctx.report.scripts = sorted(result.scripts)
    return _graded(list(result.refusals), list(result.warnings), options)


def _entry(source: BundleSource) -> dict[str, object] | None:
    """The marketplace entry the plugin was built from (its metadata where it has none)."""
    if ENTRY_NAME not in source.files:
        return None
    document = read_json(source.read_small(ENTRY_NAME, MAX_JSON_BYTES), source=ENTRY_NAME,
                         max_bytes=MAX_JSON_BYTES, max_depth=MAX_JSON_DEPTH, any_number=True)
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


def check_sha256sums(ctx: HarnessContext) -> Verdict | None:
    """integrity.sha256sums: SHA256SUMS lists every other file, each digest."""
    listed, digests = ctx.listed, ctx.digests
    if listed is None:
        return None
    label, present = ctx.source.label, set(ctx.source.files) - {CHECKSUMS_NAME}
    sums = Findings()
    for path in sorted(present - set(listed)):
        sums.add(codes.CHECKSUM_UNLISTED, f"{label}: {path!r} is not listed in SHA256SUMS")
    for path in sorted(set(listed) - present):
        sums.add(codes.CHECKSUM_MISSING, f"{label}: SHA256SUMS lists {path!r}, not present")
    for path in sorted(set(listed) & present):
        if digests[path].sha256 != listed[path]:
            sums.add(codes.CHECKSUM_MISMATCH, f"{label}: {path!r} sha256 {digests[path].sha256} "
                                              f"!= SHA256SUMS {listed[path]}")
    return Judged(list(sums))


def check_provenance(ctx: HarnessContext) -> Verdict | None:
    """harness.provenance: the statement's subjects are the plugin's files' digests, and it
    names the plugin the catalogue names."""
    if ctx.contents is None:
        return None
    source, digests = ctx.source, ctx.digests
    findings = Findings()
    try:
        provenance = parse_harness_statement(
            source.read_small(PROVENANCE_NAME, MAX_STATEMENT_BYTES))
    except Refused as exc:
        return Judged(exc.findings)
    ctx.report.facts = provenance.facts
    subjects = [*ctx.view.files, CATALOGUE_NAME, *([ENTRY_NAME] if ENTRY_NAME in digests else [])]
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
    catalogue = ctx.report.catalogue
    facts = provenance.facts
    if catalogue is not None and (facts.name, facts.version) != (catalogue.name,
                                                                 catalogue.version):
        findings.add(codes.HARNESS_PROVENANCE,
                     f"{label}: provenance names {facts.name} {facts.version}, the plugin is "
                     f"{catalogue.name} {catalogue.version}")
    revision = facts.source_revision or "no git revision"
    dirty = " (dirty)" if facts.source_dirty else ""
    return Judged(list(findings), note=f"source {revision}{dirty}")


# The checks of a harness bundle, in the order they run. Install and publish require every
# row marked proves_release to have run and passed, warnings allowed (`check_table.unproven`).
HARNESS_CHECKS: CheckTable[HarnessContext] = CheckTable(passing=frozenset([PASS, WARN]), rows=(
    CheckRow("layout.file-types", check_file_types, proves_release=True),
    CheckRow("layout.harness-files", check_required, proves_release=True, stops=True),
    CheckRow("integrity.read", hash_files, stops=True),
    CheckRow("checksums.format", check_checksums_format, proves_release=True),
    CheckRow("integrity.sha256sums", check_sha256sums, proves_release=True),
    CheckRow("harness.plugin", check_plugin, proves_release=True),
    CheckRow("harness.catalogue", check_catalogue, proves_release=True),
    CheckRow("harness.provenance", check_provenance, proves_release=True),
    CheckRow("harness.events", check_events, proves_release=True),
    CheckRow("hook.lint", check_hooks, proves_release=True),
))


def judge_harness(source: BundleSource, report: HarnessReport, options: HarnessOptions) -> None:
    """Every row of `HARNESS_CHECKS` on `source`, into `report`."""
    report.host = options.host
    run_table(HARNESS_CHECKS, HarnessContext(source, report, options), report)


__all__ = ["HarnessOptions", "HarnessReport", "is_harness", "judge_harness"]
