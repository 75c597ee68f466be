"""Building the library with the declared cargo command and gathering its evidence.

Shared by `build` (which then bundles it) and `compile` (which writes an artifact record).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.build import observation
from horon_bundle.build.ahead import IMPORTS, start_ahead
from horon_bundle.build.compiled import CompiledLibrary, Evidence, LibraryRequest, finish_library
from horon_bundle.build.output import SCRATCH_PREFIX
from horon_bundle.build.source_facts import SourceFacts
from horon_bundle.cargo.invocation import CargoRun, PathNormaliser, run_cargo_build
from horon_bundle.cargo.metadata import Metadata, Package, load_metadata, workspace_members
from horon_bundle.cargo.resolve import build_graph, lock_checksums
from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Refused
from horon_bundle.core.file_identity import FileIdentity, identity_of
from horon_bundle.core.files import exclusive_use, write_failed
from horon_bundle.core.hashing import Digest, copy_and_hash, hash_file
from horon_bundle.model.declaration import PluginDeclaration
from horon_bundle.model.evidence import (
    EVIDENCE_INVOCATION,
    Advertised,
    Invocation,
    RecordedArtifact,
)
from horon_bundle.rules.features_and_qa import judge_graph


def resolve_package(metadata_member: Package | None, plugin: PluginDeclaration) -> Package:
    if metadata_member is None:
        raise Refused.one(codes.DECLARATION_PACKAGE,
                          f"plugin {plugin.id}: package {plugin.package!r} is not a member of "
                          "the cargo workspace")
    if metadata_member.cdylib_name is None:
        raise Refused.one(codes.DECLARATION_PACKAGE,
                          f"plugin {plugin.id}: package {plugin.package!r} has no cdylib target",
                          "Add `[lib] crate-type = [\"cdylib\"]` to its Cargo.toml.")
    return metadata_member


TARGET_LOCK = ".horon-bundle.lock"  # in the cargo target directory: one build at a time


def _normaliser(workspace: Path, target_dir: Path, environ: Mapping[str, str]) -> PathNormaliser:
    places = {"$WORKSPACE": workspace, "$TARGET_DIR": target_dir}
    cargo_home = environ.get("CARGO_HOME") or str(Path.home() / ".cargo")
    places["$CARGO_HOME"] = Path(cargo_home)
    places["$HOME"] = Path.home()
    return PathNormaliser(places)


def _metadata(request: LibraryRequest, target_dir: Path | None) -> Metadata:
    """One `cargo metadata` call per build. It is given the build's target dir, so cargo
    reuses the rustc facts it cached there (`.rustc_info.json`) instead of running rustc
    again for `--filter-platform`. Only when it fails is the cheap `--no-deps` call made, to
    say plainly that the declared package is not a workspace member (cargo's own message
    names a feature flag)."""
    plugin = request.plugin
    env = metadata_environment(request.environ, target_dir)
    try:
        return load_metadata(request.declaration.workspace, target=request.target,
                             package=plugin.package, claim=request.claim, env=env)
    except Refused:
        members = workspace_members(request.declaration.workspace, env=request.environ)
        resolve_package(members.member(plugin.package), plugin)
        raise


def metadata_environment(environ: Mapping[str, str], target_dir: Path | None) -> dict[str, str]:
    """The build's environment with its target dir, where cargo caches its rustc facts."""
    env = dict(environ)
    if target_dir is not None:
        env["CARGO_TARGET_DIR"] = str(target_dir)
    return env


@dataclass(frozen=True, slots=True, kw_only=True)
class CargoStep:
    """What the declared cargo command left: its run and the library copied out of the target
    dir. The rest of the library's making (graph, judges, probe, SBOM) needs no cargo."""

    request: LibraryRequest
    metadata: Metadata
    package: Package
    run: CargoRun
    copied: Path
    digest: Digest
    identity: FileIdentity  # the copy's, right after it was written and hashed
    artifacts: tuple[RecordedArtifact, ...]
    source: SourceFacts


def compile_library(request: LibraryRequest, *, target_dir: Path | None,
                    source: SourceFacts) -> CompiledLibrary:
    """Run the declared cargo command, resolve and judge the graph, read what it advertises."""
    return finish_compiled(run_declared_cargo(request, target_dir=target_dir, source=source))


def run_declared_cargo(request: LibraryRequest, *, target_dir: Path | None, source: SourceFacts,
                       metadata: Metadata | None = None) -> CargoStep:
    """Run the declared cargo command and copy its library out. `metadata`: the plugin's
    resolve, when the caller already has it (build/shared_resolve.py); else asked here."""
    plugin, target = request.plugin, request.target
    workspace = request.declaration.workspace
    claim = request.claim
    env = request.environ
    if metadata is None:
        metadata = _metadata(request, target_dir)
    package = resolve_package(metadata.member(plugin.package), plugin)
    if target_dir is None:  # cargo's own: <cargo workspace>/target, or what its config says
        target_dir = metadata.target_directory
    normalise = _normaliser(workspace, target_dir, env)
    # cargo writes every variant's library to one path of the target directory: another
    # build sharing it (the qa variant, a second checkout) must not compile between this
    # cargo run and the copy taken of its library, or that copy is the other's library
    with exclusive_use(target_dir, TARGET_LOCK):
        run = run_cargo_build(workspace=workspace, package=plugin.package, claim=claim,
                              profile=plugin.profile, target=target, target_dir=target_dir,
                              normalise=normalise, environ=env,
                              on_line=request.reporter.detail)
        copied = request.scratch / run.library.name
        try:
            digest = copy_and_hash(run.library, copied, crc=True)  # the one read of it
            identity = identity_of(copied.stat())
        except OSError as exc:
            raise write_failed(copied, exc) from None
        artifacts = [RecordedArtifact(path=normalise.text(str(run.library)),
                                      sha256=digest.sha256, size=digest.size)]
        for other in run.artifacts:
            if other != run.library and other.is_file():
                extra = hash_file(other)
                artifacts.append(RecordedArtifact(path=normalise.text(str(other)),
                                                  sha256=extra.sha256, size=extra.size))
        checkpoint("build.compiled")
    return CargoStep(request=request, metadata=metadata, package=package, run=run,
                     copied=copied, digest=digest, identity=identity,
                     artifacts=tuple(artifacts), source=source)


Observed = tuple[Advertised | None, list[str]]


def observe_library(step: CargoStep) -> Observed:
    """What the copied library advertises (its section, and the probe child where it loads)."""
    request = step.request
    return observation.read_advertised(
        step.copied, target=request.target, toolchain=request.toolchain,
        reporter=request.reporter, timeout=request.probe_timeout)


def finish_compiled(step: CargoStep,
                    observed: Callable[[], Observed] | None = None) -> CompiledLibrary:
    """Resolve and judge the graph, read what the library advertises, render its assets.
    `observed`: that reading, when the caller started it already (its answer, or its refusal,
    is taken where a sequential build would have made it: after the judges)."""
    request, metadata, package, run = step.request, step.metadata, step.package, step.run
    copied, digest, artifacts, source = step.copied, step.digest, step.artifacts, step.source
    identity = step.identity
    claim = request.claim
    lock_path = metadata.workspace_root / "Cargo.lock"
    graph = build_graph(metadata=metadata, plugin=package, units=run.units,
                        checksums=lock_checksums(lock_path))
    count = len(graph.packages)
    request.reporter.step(f"judging the resolved graph ({count} "
                          f"{'package' if count == 1 else 'packages'})")
    providers = judge_graph(graph, claim=claim, channel=request.channel,
                            patterns=request.declaration.qa_patterns)
    lock_digest = hash_file(lock_path)
    invocation = Invocation(
        argv=run.argv, env=run.env, toolchain=request.toolchain.to_json(),
        exit_status=run.exit_status, artifacts=tuple(artifacts),
        source_revision=source.revision, source_dirty=source.dirty,
        cargo_lock_sha256=lock_digest.sha256)
    start_ahead("imports", IMPORTS)  # while the probe child runs (`build.ahead`)
    advertised, notes = observed() if observed is not None else observe_library(step)
    evidence = Evidence(kind=EVIDENCE_INVOCATION, invocation=invocation, record=None,
                        record_sha256=None, cargo_lock_sha256=lock_digest.sha256,
                        source_revision=source.revision, source_dirty=source.dirty)
    return finish_library(request, path=copied, digest=digest, identity=identity,
                          package=package, metadata=metadata, graph=graph, providers=providers,
                          advertised=advertised, notes=notes, evidence=evidence, log=run.log)


def scratch_directory(out: Path) -> tempfile.TemporaryDirectory[str]:
    """A private directory inside `out` for the libraries of one run."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        return tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=out)
    except OSError as exc:
        raise write_failed(out, exc) from None
