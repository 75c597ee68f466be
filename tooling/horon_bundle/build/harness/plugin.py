"""One harness plugin: judge it from the workspace (nothing written), then stage, zip, verify
the zip with the verifier and move it into place with its ref.

`plan` reads and judges; `write` writes. A marketplace build plans every plugin before it
writes any, so a refused plugin leaves the output directory untouched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import horon_bundle
from horon_bundle.assets.harness_sbom import SBOM_SUFFIX, harness_sbom
from horon_bundle.build.archive import write_archive
from horon_bundle.build.builder_identity import builder_id
from horon_bundle.build.harness.files import (
    WorkspaceFiles,
    plugin_files,
    refuse_output_over_plugin,
)
from horon_bundle.build.harness.request import HarnessBuildRequest, HarnessBuilt
from horon_bundle.build.stale_signatures import discard_stale_signatures
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.files import staging_directory, write_atomic, write_failed, write_new
from horon_bundle.core.hashing import Digest, copy_stream_and_hash, hash_bytes, hash_stream
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.core.tree import TreeFile
from horon_bundle.model import checksums
from horon_bundle.model.harness.catalogue import Catalogue
from horon_bundle.model.harness.layout import (
    CATALOGUE_NAME,
    CHECKSUMS_NAME,
    ENTRY_NAME,
    PROVENANCE_NAME,
    RESERVED,
)
from horon_bundle.model.harness.manifest import content_version
from horon_bundle.model.harness.mcp_packages import declared_package
from horon_bundle.model.harness.profile import shipped_profiles
from horon_bundle.model.harness.reader import read_plugin
from horon_bundle.model.harness.ref import BundleRef, ref_path
from horon_bundle.model.harness.statement import HarnessFacts, harness_statement
from horon_bundle.rules.harness_events import judge_events
from horon_bundle.rules.harness_lint import MAX_SCRIPT_BYTES, condense, lint, promote
from horon_bundle.rules.harness_quoting import judge_quoting
from horon_bundle.verify import limits
from horon_bundle.verify.harness.judge import judge_harness
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.reading.archive_entries import unpacked_entries
from horon_bundle.verify.reading.archive_source import ArchiveSource


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedPlugin:
    """A plugin that passed every rule, with what its zip will record; its files are read
    through `source` (holding the plugin root's descriptor: `close` it)."""

    root: Path
    source: WorkspaceFiles
    files: dict[str, TreeFile]
    catalogue: Catalogue
    entry: dict[str, Any] | None
    marketplace: str | None
    version_from: str
    warnings: tuple[Finding, ...]

    @property
    def zip_name(self) -> str:
        return f"{self.catalogue.name}-{self.catalogue.version}.zip"

    def close(self) -> None:
        self.source.close()


@dataclass(frozen=True, slots=True, kw_only=True)
class SourceInfo:
    revision: str | None
    dirty: bool | None
    epoch: int


def plan(root: Path, request: HarnessBuildRequest, *, entry: dict[str, Any] | None = None,
         marketplace: str | None = None, exclude: tuple[Path, ...] = ()) -> PlannedPlugin:
    """Read and judge the plugin at `root`; raises Refused with every problem found."""
    refuse_output_over_plugin(root, request.out)
    source = plugin_files(root, exclude=(request.out, *exclude))
    try:
        return _judge(root, source, request, entry, marketplace)
    except BaseException:
        source.close()
        raise


def _judge(root: Path, source: WorkspaceFiles, request: HarnessBuildRequest,
           entry: dict[str, Any] | None, marketplace: str | None) -> PlannedPlugin:
    files = source.files
    refusals, warnings = Findings(), Findings()
    _refuse_over_zip_limits(root, files, entry)
    contents = read_plugin(source, refusals=refusals, warnings=warnings, entry=entry,
                           name=root.name, content_version=lambda: _content_version(source))
    if refusals:
        raise Refused(condense(refusals))
    assert contents is not None
    catalogue, manifest = contents.catalogue, contents.manifest
    warnings.extend(judge_quoting(catalogue.hooks))
    listed_version = entry.get("version") if entry is not None else None
    if isinstance(listed_version, str) and manifest.version not in (None, listed_version):
        warnings.add(codes.MARKETPLACE_VERSION,
                     f"{catalogue.name}: plugin.json says {manifest.version}, the marketplace "
                     f"entry {listed_version}; built and pinned as {manifest.version}")
    profiles = shipped_profiles()
    event_refusals, event_warnings = judge_events(catalogue, profiles, request.host)
    refusals.extend(event_refusals)
    warnings.extend(event_warnings)
    named = (*profiles, *([request.host] if request.host is not None else []))
    result = lint(catalogue, files, _reader(source), named)
    refusals.extend(result.refusals)
    warnings.extend(result.warnings)
    promoted, kept = promote(warnings, strict=request.strict, host=request.host)
    refusals.extend(promoted)
    if refusals:
        raise Refused(condense(refusals))
    return PlannedPlugin(root=root, source=source, files=files, catalogue=catalogue, entry=entry,
                         marketplace=marketplace, version_from=manifest.version_from,
                         warnings=tuple(condense(kept)))


def _refuse_over_zip_limits(root: Path, files: dict[str, TreeFile],
                            entry: dict[str, Any] | None) -> None:
    """Said when the plugin is judged, not after copying every file: its zip, with the root
    files build adds, must be readable by the archive reader with a harness bundle's limits —
    at most as many entries as a zip without ZIP64 holds, and unpacked (as fetch does) no
    more files and directories than an unpacked harness bundle may hold."""
    added = [name for name in RESERVED if entry is not None or name != ENTRY_NAME]
    entries = len(files) + len(added)
    hint = ("Leave generated or vendored files out of the plugin (.gitignore), or split it "
            "into several plugins.")
    if entries > limits.HARNESS_MAX_ARCHIVE_ENTRIES:
        raise Refused.one(codes.HARNESS_TREE_LIMIT,
                          f"{root.name}: {len(files)} files; its zip would hold {entries} "
                          f"entries, and a zip holds at most "
                          f"{limits.HARNESS_MAX_ARCHIVE_ENTRIES} (without ZIP64, which no "
                          "reader of ours accepts)", hint)
    unpacked = unpacked_entries([*files, *added])
    if unpacked > limits.HARNESS_MAX_ENTRIES:
        raise Refused.one(codes.HARNESS_TREE_LIMIT,
                          f"{root.name}: its zip would unpack into {unpacked} files and "
                          f"directories, and an unpacked harness bundle holds at most "
                          f"{limits.HARNESS_MAX_ENTRIES}", hint)


def _content_version(source: WorkspaceFiles) -> str:
    """The version made from the plugin's files (read once more: only a plugin that nothing
    versions needs it)."""
    digests = {}
    for path in source.files:
        with source.open(path) as stream:
            digests[path] = hash_stream(stream).sha256  # type: ignore[arg-type]
    return content_version(digests)


def _reader(source: WorkspaceFiles) -> Any:
    def read_text(path: str) -> str | None:
        info = source.files.get(path)
        if info is None or info.size > MAX_SCRIPT_BYTES:
            return None
        data = source.read_small(path, MAX_SCRIPT_BYTES)
        return None if b"\x00" in data[:8192] else data.decode("utf-8", errors="replace")
    return read_text


def write(planned: PlannedPlugin, request: HarnessBuildRequest, source: SourceInfo,
          ) -> HarnessBuilt:
    """Stage the planned files, add catalogue, provenance and SHA256SUMS, zip, verify the zip
    as `verify` would, then move it and its ref into place."""
    out = request.out
    catalogue = planned.catalogue
    final = out / planned.zip_name
    with staging_directory(out, f".{catalogue.name}.staging-") as staging:
        digests: dict[str, Digest] = {}
        executables: dict[str, bool] = {}
        for path, item in sorted(planned.files.items()):
            destination = staging / path
            destination.parent.mkdir(parents=True, exist_ok=True)
            try:
                with planned.source.open(path) as stream:
                    digests[path] = copy_stream_and_hash(
                        stream, destination, mode=0o755 if item.executable else 0o644)
            except OSError as exc:
                raise write_failed(destination, exc) from None
            executables[path] = bool(item.executable)
        generated: dict[str, bytes] = {CATALOGUE_NAME: catalogue.to_bytes()}
        if planned.entry is not None:
            generated[ENTRY_NAME] = canonical_bytes(planned.entry)
        subjects = {p: d.sha256 for p, d in digests.items()}
        subjects.update({p: hash_bytes(data).sha256 for p, data in generated.items()})
        facts = HarnessFacts(
            name=catalogue.name, version=catalogue.version, version_from=planned.version_from,
            hosts=catalogue.hosts, marketplace=planned.marketplace,
            source_revision=source.revision, source_dirty=source.dirty,
            source_date_epoch=source.epoch,
            builder_id=builder_id(request.builder, request.environ),
            tool_version=horon_bundle.__version__)
        generated[PROVENANCE_NAME] = canonical_bytes(harness_statement(facts, subjects))
        for path, data in generated.items():
            write_new(staging / path, data)
            digests[path] = hash_bytes(data)
            executables[path] = False
        sums = checksums.render({p: d.sha256 for p, d in digests.items()})
        write_new(staging / CHECKSUMS_NAME, sums)
        shipped = {p: d.sha256 for p, d in digests.items()}
        shipped[CHECKSUMS_NAME] = hash_bytes(sums).sha256
        executables[CHECKSUMS_NAME] = False
        unverified = out / f".{final.name}.unverified-{os.getpid()}"
        try:
            digest = write_archive(staging, sorted(executables.items()), unverified,
                                   epoch=source.epoch)
            _verify_written(unverified, catalogue, request)
            unverified.replace(final)
        finally:
            unverified.unlink(missing_ok=True)
    reference = ref_path(final)
    write_atomic(reference, BundleRef(name=catalogue.name, sha256=digest.sha256).to_bytes())
    sbom = final.with_name(final.name.removesuffix(".zip") + SBOM_SUFFIX)
    packages = [p for s in catalogue.servers if (p := declared_package(s)) is not None]
    write_atomic(sbom, harness_sbom(name=catalogue.name, version=catalogue.version,
                                    zip_sha256=digest.sha256, files=shipped, packages=packages,
                                    epoch=source.epoch, tool_version=horon_bundle.__version__))
    removed = discard_stale_signatures(final, digest.sha256, generated[PROVENANCE_NAME])
    return HarnessBuilt(name=catalogue.name, version=catalogue.version, zip=final,
                        ref=reference, sha256=digest.sha256, events=catalogue.events,
                        notes=removed, sbom=sbom)


def _verify_written(archive: Path, catalogue: Catalogue, request: HarnessBuildRequest) -> None:
    report = HarnessReport(path=str(archive))
    with ArchiveSource(archive) as source:
        judge_harness(source, report, HarnessOptions(host=request.host, strict=request.strict))
    if not report.ok or report.catalogue != catalogue:
        first = report.findings[0] if report.findings else None
        what = f"{first.code.name}: {first.message}" if first else "its catalogue differs"
        raise Refused.one(codes.BUILD_NONDETERMINISTIC,
                          f"the written zip did not verify ({what}); did the workspace change "
                          "during the build?")
