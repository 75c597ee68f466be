"""Building the library with the declared cargo command and gathering its evidence.

Shared by `build` (which then bundles it) and `compile` (which writes an artifact record).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import horon_bundle
from horon_bundle import codes
from horon_bundle.abi_probe import probe_advertised
from horon_bundle.abi_section import read_section_file
from horon_bundle.cargo_build import PathNormaliser, run_cargo_build
from horon_bundle.cargo_metadata import Package, load_metadata, workspace_members
from horon_bundle.declaration import Declaration, PluginDeclaration
from horon_bundle.errors import Refused
from horon_bundle.evidence import EVIDENCE_INVOCATION, Advertised, Invocation, RecordedArtifact
from horon_bundle.gates import check_advertised, judge_graph, plugin_features
from horon_bundle.graph import Graph, build_graph, lock_checksums
from horon_bundle.hashing import copy_and_hash, hash_file
from horon_bundle.notices import NOTICES_NAME, NOTICES_ROLE, build_notices, source_packages
from horon_bundle.reporter import Reporter
from horon_bundle.sbom import SBOM_NAME, SBOM_ROLE, SbomSubject, build_sbom
from horon_bundle.source_facts import SourceFacts
from horon_bundle.toolchain import Toolchain


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledLibrary:
    """A library ready to bundle, with everything its provenance records."""

    path: Path
    sha256: str
    size: int
    target: str
    channel: str
    claim: tuple[str, ...]
    features: tuple[str, ...]
    package: Package
    graph: Graph | None
    qa_providers: tuple[dict[str, str | None], ...]
    qa_markers: tuple[str, ...]
    advertised: Advertised | None
    evidence: str
    invocation: Invocation | None
    record: dict[str, Any] | None
    record_sha256: str | None
    cargo_lock_sha256: str
    source_revision: str | None
    source_dirty: bool | None
    generated_assets: dict[str, bytes] = field(default_factory=dict)
    asset_roles: dict[str, str] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    log: str = ""


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


def _normaliser(workspace: Path, target_dir: Path) -> PathNormaliser:
    places = {"$WORKSPACE": workspace, "$TARGET_DIR": target_dir}
    cargo_home = os.environ.get("CARGO_HOME") or str(Path.home() / ".cargo")
    places["$CARGO_HOME"] = Path(cargo_home)
    places["$HOME"] = Path.home()
    return PathNormaliser(places)


def compile_library(*, declaration: Declaration, plugin: PluginDeclaration, target: str,
                    channel: str, target_dir: Path, scratch: Path, toolchain: Toolchain,
                    source: SourceFacts, reporter: Reporter, probe_timeout: float,
                    epoch: int) -> CompiledLibrary:
    workspace = declaration.workspace
    claim = plugin.claim(channel)
    resolve_package(workspace_members(workspace).member(plugin.package), plugin)
    metadata = load_metadata(workspace, target=target, package=plugin.package, claim=claim)
    package = resolve_package(metadata.member(plugin.package), plugin)
    normalise = _normaliser(workspace, target_dir)
    run = run_cargo_build(workspace=workspace, package=plugin.package, claim=claim,
                          profile=plugin.profile, target=target, target_dir=target_dir,
                          normalise=normalise, on_line=reporter.detail)
    lock_path = metadata.workspace_root / "Cargo.lock"
    graph = build_graph(metadata=metadata, plugin=package, units=run.units,
                        checksums=lock_checksums(lock_path))
    reporter.step(f"judging the resolved graph ({len(graph.packages)} packages)")
    providers = judge_graph(graph, claim=claim, channel=channel,
                            patterns=declaration.qa_patterns)
    features = plugin_features(graph)
    copied = scratch / run.library.name
    digest = copy_and_hash(run.library, copied)
    artifacts = [RecordedArtifact(path=normalise.text(str(run.library)), sha256=digest.sha256,
                                  size=digest.size)]
    for other in run.artifacts:
        if other != run.library and other.is_file():
            extra = hash_file(other)
            artifacts.append(RecordedArtifact(path=normalise.text(str(other)),
                                              sha256=extra.sha256, size=extra.size))
    lock_digest = hash_file(lock_path)
    invocation = Invocation(
        argv=run.argv, env=run.env, toolchain=toolchain.to_json(), exit_status=run.exit_status,
        artifacts=tuple(artifacts), source_revision=source.revision, source_dirty=source.dirty,
        cargo_lock_sha256=lock_digest.sha256)
    advertised, notes = read_advertised(copied, target=target, toolchain=toolchain,
                                        reporter=reporter, timeout=probe_timeout)
    if advertised is not None:
        check_advertised(advertised, features=features, plugin_id=plugin.id)
    qa_providers = tuple(p.to_json() for p in providers)
    assets, roles = bundle_assets(
        graph=graph, qa_providers=qa_providers, plugin=plugin, library_name=copied.name,
        library_sha256=digest.sha256, target=target, channel=channel, epoch=epoch,
        packages=source_packages(graph, metadata), workspace_root=metadata.workspace_root)
    return CompiledLibrary(
        path=copied, sha256=digest.sha256, size=digest.size, target=target, channel=channel,
        claim=claim, features=features, package=package, graph=graph,
        qa_providers=qa_providers,
        qa_markers=tuple(sorted(p.id for p in graph.packages.values() if p.qa_marker)),
        advertised=advertised, evidence=EVIDENCE_INVOCATION, invocation=invocation, record=None,
        record_sha256=None, cargo_lock_sha256=lock_digest.sha256,
        source_revision=source.revision, source_dirty=source.dirty, generated_assets=assets,
        asset_roles=roles, notes=tuple(notes), log=run.log)


def bundle_assets(*, graph: Graph, qa_providers: tuple[dict[str, str | None], ...],
                  plugin: PluginDeclaration, library_name: str, library_sha256: str,
                  target: str, channel: str, epoch: int, packages: dict[str, Package],
                  workspace_root: Path | None) -> tuple[dict[str, bytes], dict[str, str]]:
    """The SBOM and THIRD-PARTY-NOTICES of a library (bundle path -> bytes, role -> path)."""
    subject = SbomSubject(
        plugin_id=plugin.id, target=target, profile=plugin.profile, channel=channel,
        library_path=f"lib/{library_name}", library_sha256=library_sha256, epoch=epoch,
        tool_version=horon_bundle.__version__)
    sbom = build_sbom(graph, subject, qa_providers)
    notices = build_notices(graph, packages=packages, workspace_root=workspace_root,
                            plugin_id=plugin.id, target=target,
                            license_path=Path(plugin.license_file).name)
    return ({SBOM_NAME: sbom, NOTICES_NAME: notices},
            {SBOM_ROLE: SBOM_NAME, NOTICES_ROLE: NOTICES_NAME})


def read_advertised(library: Path, *, target: str, toolchain: Toolchain, reporter: Reporter,
                    timeout: float) -> tuple[Advertised | None, list[str]]:
    """What the library advertises: its static section, and the probe where it can run here.

    The section is read first, without loading anything (a malformed one is `abi.section`).
    When the probe runs too, both must say the same (`abi.section-mismatch`, both values
    shown) and the result is observed by both. For a target that cannot be loaded here the
    section alone gives the advertised metadata; with neither, nothing is advertised.
    """
    notes: list[str] = []
    section = read_section_file(library, target=target)
    if target != toolchain.host:
        if section is None:
            notes.append(f"{target} libraries cannot be loaded on {toolchain.host} and this one "
                         "has no .horon_abi section: advertised features not checked")
        else:
            notes.append(f"{target} libraries cannot be loaded on {toolchain.host}: advertised "
                         "metadata read from the static .horon_abi section")
        return section, notes
    reporter.step("reading the advertised ABI metadata in a child process")
    probed = probe_advertised(library, timeout=timeout)
    if section is None:
        notes.append(f"{library.name} has no .horon_abi section: advertised metadata from the "
                     "probe alone")
        return probed, notes
    if not probed.same_metadata(section):
        raise Refused.one(codes.ABI_SECTION_MISMATCH,
                          f"{library.name}: the handshake advertises {probed.summary()}, the "
                          f".horon_abi section says {section.summary()}")
    return merge_observations(probed, section), notes


def merge_observations(*observations: Advertised) -> Advertised:
    """One Advertised whose observed_by lists every observer (all must agree already)."""
    first = observations[0]
    observers = {o for a in observations for o in a.observed_by}
    ordered = tuple(o for o in ("probe", "static-section") if o in observers)
    return Advertised(abi_major=first.abi_major, abi_minor=first.abi_minor,
                      wire_schema=first.wire_schema, features=first.features,
                      plugin_id=first.plugin_id, observed_by=ordered)


def scratch_directory(out: Path) -> tempfile.TemporaryDirectory[str]:
    out.mkdir(parents=True, exist_ok=True)
    return tempfile.TemporaryDirectory(prefix=".horon-scratch-", dir=out)
