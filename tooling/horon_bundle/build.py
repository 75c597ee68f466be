"""`horon-bundle build`: declaration → cargo → graph → gates → evidence → bundle → archive.

One public entry, `build`, taking a `BuildRequest` and returning one `BuildResult` per
target. Every gate runs before anything is written under the output directory.
"""

from __future__ import annotations

import datetime
import os
import platform
from dataclasses import dataclass, field
from pathlib import Path

import horon_bundle
from horon_bundle import codes
from horon_bundle.archive import write_archive, write_digest_file
from horon_bundle.assemble import StagedFile, assemble_bundle, manifest_assets
from horon_bundle.builder_identity import builder_id
from horon_bundle.declaration import (
    DECLARATION_NAME,
    Declaration,
    PluginDeclaration,
    load_declaration,
)
from horon_bundle.errors import Findings, Refused
from horon_bundle.fsutil import write_atomic
from horon_bundle.hashing import Digest
from horon_bundle.library_build import CompiledLibrary, compile_library, scratch_directory
from horon_bundle.manifest import ABI_MAJOR, WIRE_SCHEMA, FileDigest, License, Manifest, Sidecar
from horon_bundle.provenance import PROVENANCE_NAME, BuildFacts, statement
from horon_bundle.record import library_from_record
from horon_bundle.reporter import Reporter, SilentReporter
from horon_bundle.signature_check import SignatureVerifier, require_signature
from horon_bundle.source_facts import SourceFacts, source_date_epoch, source_facts
from horon_bundle.strictjson import canonical_bytes
from horon_bundle.toolchain import Toolchain, probe_toolchain, require_targets

BUILD_RECORD_FORMAT = "horon.build-run.v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildRequest:
    workspace: Path
    out: Path
    plugin_id: str | None = None
    targets: tuple[str, ...] = ()
    all_targets: bool = False
    channel: str = "release"
    target_dir: Path | None = None
    prebuilt: Path | None = None
    record: Path | None = None
    builder: str | None = None
    probe_timeout: float = 20.0
    epoch: int | None = None  # set: this SOURCE_DATE_EPOCH, whatever the environment says
    record_signer: SignatureVerifier | None = None  # set: --record must carry its signature


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    bundle: Path
    archive: Path
    archive_sha256: str
    manifest: Manifest
    qa_providers: tuple[str, ...]
    notes: tuple[str, ...] = field(default_factory=tuple)


def select_targets(plugin: PluginDeclaration, request: BuildRequest, host: str) -> list[str]:
    if request.all_targets:
        return list(plugin.targets)
    if request.targets:
        for target in request.targets:
            if target not in plugin.targets:
                raise Refused.one(codes.DECLARATION_TARGET,
                                  f"target {target} is not declared for plugin {plugin.id} "
                                  f"(declared: {', '.join(plugin.targets)})")
        return list(request.targets)
    if host not in plugin.targets:
        raise Refused.one(codes.DECLARATION_TARGET,
                          f"the host target {host} is not declared for plugin {plugin.id}; "
                          f"pass --target (declared: {', '.join(plugin.targets)})")
    return [host]


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except ValueError:
        return False
    return True


def default_target_dir(out: Path) -> Path:
    return out / ".cargo-target"


def build(request: BuildRequest, reporter: Reporter | None = None) -> list[BuildResult]:
    reporter = reporter or SilentReporter()
    if request.channel not in ("release", "qa"):
        raise Refused.one(codes.DECLARATION_VALUE,
                          f"--channel {request.channel!r}: expected release or qa")
    workspace = request.workspace.resolve()
    declaration = load_declaration(workspace)
    plugin = declaration.plugin(request.plugin_id)
    out = request.out.resolve()
    target_dir = (request.target_dir or default_target_dir(out)).resolve()
    for what, path in (("--out", out), ("the cargo target directory", target_dir)):
        if _inside(path, workspace):
            raise Refused.one(codes.OUTPUT_INSIDE_SOURCE,
                              f"{what} {path} lies inside the plugin workspace {workspace}")
    if request.prebuilt is not None and request.record is None:
        raise Refused.one(codes.EVIDENCE_MISSING,
                          f"--prebuilt {request.prebuilt.name} has no artifact record: nothing "
                          "binds it to the declared build")
    signed_record = None
    if request.record_signer is not None:
        if request.record is None or request.prebuilt is None:
            raise Refused.one(codes.SIGNATURE_OPTIONS,
                              "--require-signed-record needs --prebuilt LIB --record REC")
        signed_record = require_signature(request.record, request.record_signer).sha256
    toolchain = probe_toolchain(workspace)
    targets = select_targets(plugin, request, toolchain.host)
    if not request.targets and not request.all_targets:
        reporter.note(f"building the host target {toolchain.host} (declared)")
    _require_declared_files(workspace, plugin)
    if request.prebuilt is None:
        require_targets(workspace, targets)
    facts = source_facts(workspace)
    epoch, epoch_origin = ((request.epoch, "requested") if request.epoch is not None
                           else source_date_epoch(facts))
    results = []
    with scratch_directory(out) as scratch_name:
        for target in targets:
            results.append(_build_target(
                request=request, declaration=declaration, plugin=plugin, target=target,
                out=out, target_dir=target_dir, scratch=Path(scratch_name), toolchain=toolchain,
                facts=facts, epoch=epoch, epoch_origin=epoch_origin, reporter=reporter,
                signed_record=signed_record))
    return results


def _build_target(*, request: BuildRequest, declaration: Declaration,
                  plugin: PluginDeclaration, target: str, out: Path, target_dir: Path,
                  scratch: Path, toolchain: Toolchain, facts: SourceFacts, epoch: int,
                  epoch_origin: str, reporter: Reporter,
                  signed_record: str | None = None) -> BuildResult:
    started = datetime.datetime.now(datetime.timezone.utc)
    if request.prebuilt is not None:
        assert request.record is not None
        library = library_from_record(
            declaration=declaration, plugin=plugin, target=target, channel=request.channel,
            prebuilt=request.prebuilt, record_path=request.record, toolchain=toolchain,
            scratch=scratch, reporter=reporter, probe_timeout=request.probe_timeout,
            epoch=epoch)
        if signed_record is not None and library.record_sha256 != signed_record:
            raise Refused.one(codes.SIGNATURE_INVALID,
                              f"{request.record.name} changed after its signature was checked")
    else:
        reporter.step(f"building {plugin.package} for {target} ({request.channel})")
        library = compile_library(
            declaration=declaration, plugin=plugin, target=target, channel=request.channel,
            target_dir=target_dir, scratch=scratch, toolchain=toolchain, source=facts,
            reporter=reporter, probe_timeout=request.probe_timeout, epoch=epoch)
    reporter.step(f"assembling {plugin.id} {library.package.version} for {target}")
    result = _package(declaration=declaration, plugin=plugin, library=library, out=out,
                      epoch=epoch, builder=builder_id(request.builder))
    _write_run_record(result, started=started, epoch=epoch, epoch_origin=epoch_origin,
                      log=library.log, toolchain=toolchain)
    return result


def _require_declared_files(workspace: Path, plugin: PluginDeclaration) -> None:
    """The licence and sidecars are regular files of the workspace, checked before building."""
    findings = Findings()
    wanted = [("license-file", plugin.license_file, codes.DECLARATION_VALUE)]
    wanted += [(f"sidecar {s.name}", s.source, codes.SIDECAR_INVALID) for s in plugin.sidecars]
    for what, relative, code in wanted:
        path = workspace / relative
        if path.is_symlink() or not path.is_file():
            findings.add(code, f"{DECLARATION_NAME}: {what} {relative!r} is not a regular file "
                               "in the workspace")
    findings.raise_if_any()


def bundle_name(plugin_id: str, version: str, target: str, channel: str) -> str:
    base = f"{plugin_id}-{version}-{target}"
    return base if channel == "release" else f"{base}-qa"


def _package(*, declaration: Declaration, plugin: PluginDeclaration, library: CompiledLibrary,
             out: Path, epoch: int, builder: str) -> BuildResult:
    package = library.package
    workspace = declaration.workspace
    license_source = workspace / plugin.license_file
    license_path = Path(plugin.license_file).name
    if package.license is None:
        raise Refused.one(codes.DECLARATION_PACKAGE,
                          f"package {package.name} has no `license` (SPDX) in Cargo.toml",
                          "Set `license = \"…\"` in the package's Cargo.toml.")
    lib_path = f"lib/{library.path.name}"
    copies = [StagedFile(source=library.path, path=lib_path,
                         moved_digest=Digest(library.sha256, library.size)),
              StagedFile(source=license_source, path=license_path)]
    copies += [StagedFile(source=workspace / s.source, path=f"sidecars/{Path(s.source).name}",
                          executable=s.executable) for s in plugin.sidecars]
    generated = dict(library.generated_assets)
    name = bundle_name(plugin.id, package.version, library.target, library.channel)

    def provenance(digests: dict[str, Digest]) -> bytes:
        subjects = {lib_path: digests[lib_path].sha256}
        subjects.update({c.path: digests[c.path].sha256 for c in copies[2:]})
        if digests[lib_path].sha256 != library.sha256:
            raise Refused.one(codes.BUILD_NONDETERMINISTIC,
                              f"{library.path}: changed while it was copied")
        facts = BuildFacts(
            plugin_id=plugin.id, package=package.name, version=package.version,
            target=library.target, profile=plugin.profile, channel=library.channel,
            claim=library.claim, features=library.features,
            declaration_sha256=declaration.digest.sha256,
            source_revision=library.source_revision, source_dirty=library.source_dirty,
            source_date_epoch=epoch, qa_patterns=declaration.qa_patterns,
            qa_markers=library.qa_markers, qa_providers=library.qa_providers,
            evidence=library.evidence, invocation=library.invocation, record=library.record,
            record_sha256=library.record_sha256, graph=library.graph,
            advertised=library.advertised, cargo_lock_sha256=library.cargo_lock_sha256,
            builder_id=builder, tool_version=horon_bundle.__version__)
        return canonical_bytes(statement(facts, subjects))

    def manifest(digests: dict[str, Digest]) -> Manifest:
        def ref(path: str) -> FileDigest:
            return FileDigest(path=path, sha256=digests[path].sha256, size=digests[path].size)

        roles = {"provenance": PROVENANCE_NAME, **library.asset_roles}
        return Manifest(
            id=plugin.id, name=plugin.name, version=package.version, target=library.target,
            profile=plugin.profile, channel=library.channel, abi_major=ABI_MAJOR,
            abi_minor=library.advertised.abi_minor if library.advertised else 0,
            wire_schema=WIRE_SCHEMA, features=library.features, library=ref(lib_path),
            license=License(spdx=package.license or "", file=ref(license_path)),
            assets=manifest_assets(digests, roles),
            sidecars=tuple(Sidecar(name=s.name, file=ref(f"sidecars/{Path(s.source).name}"),
                                   executable=s.executable) for s in plugin.sidecars))

    assembled = assemble_bundle(out=out, name=name, copies=copies, generated=generated,
                                provenance=provenance, manifest=manifest)
    archive = out / f"{name}.zip"
    digest = write_archive(assembled.directory, assembled.files, archive, epoch=epoch)
    write_digest_file(archive, digest)
    return BuildResult(bundle=assembled.directory, archive=archive, archive_sha256=digest.sha256,
                       manifest=assembled.manifest,
                       qa_providers=tuple(p["chain"] or "" for p in library.qa_providers),
                       notes=library.notes)


def _write_run_record(result: BuildResult, *, started: datetime.datetime, epoch: int,
                      epoch_origin: str, log: str, toolchain: Toolchain) -> None:
    """`<archive>.build.json`: this run's non-deterministic facts, outside the content address."""
    finished = datetime.datetime.now(datetime.timezone.utc)
    record = {
        "format": BUILD_RECORD_FORMAT,
        "archive": {"name": result.archive.name, "sha256": result.archive_sha256},
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "runner": {"name": os.environ.get("RUNNER_NAME") or platform.node(),
                   "os": platform.system(), "machine": platform.machine()},
        "source_date_epoch": {"value": epoch, "from": epoch_origin},
        "toolchain": toolchain.to_json(),
        "horon_bundle": horon_bundle.__version__,
        "cargo_log": log[-200_000:],
    }
    path = result.archive.with_name(result.archive.name + ".build.json")
    write_atomic(path, canonical_bytes(record))
