"""A library ready to bundle, and the one constructor both ways of getting one end in.

`compile_library` (the declared cargo command, run here) and `library_from_record` (a library
built elsewhere, bound by its artifact record) differ in how they obtain the library, its
graph and its evidence; from there on they are the same: the advertised metadata must equal
the claim, the SBOM and notices are rendered from the graph, and a `CompiledLibrary` holds
what the bundle's provenance will record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import horon_bundle
from horon_bundle.assets.notices import NOTICES_NAME, NOTICES_ROLE, build_notices
from horon_bundle.assets.sbom import SBOM_NAME, SBOM_ROLE, build_sbom
from horon_bundle.assets.sbom_subject import SbomSubject
from horon_bundle.cargo.metadata import Metadata, Package
from horon_bundle.cargo.toolchain import Toolchain
from horon_bundle.core.file_identity import FileIdentity
from horon_bundle.core.hashing import Digest
from horon_bundle.core.reporter import Reporter
from horon_bundle.model.declaration import Declaration, PluginDeclaration
from horon_bundle.model.evidence import Advertised, Invocation
from horon_bundle.model.graph import PATH_SOURCE, Graph
from horon_bundle.model.qa import QaProvider
from horon_bundle.model.record import RecordDocument
from horon_bundle.rules.features_and_qa import check_advertised, plugin_features


@dataclass(frozen=True, slots=True, kw_only=True)
class LibraryRequest:
    """What every way of obtaining a library is asked: which plugin, target and channel."""

    declaration: Declaration
    plugin: PluginDeclaration
    target: str
    channel: str
    scratch: Path  # private directory the library is copied into
    toolchain: Toolchain
    reporter: Reporter
    probe_timeout: float
    epoch: int
    environ: Mapping[str, str]  # the environment cargo and rustc run in

    @property
    def claim(self) -> tuple[str, ...]:
        return self.plugin.claim(self.channel)


@dataclass(frozen=True, slots=True, kw_only=True)
class Evidence:
    """How the library was made: an invocation run here, or an artifact record."""

    kind: str
    invocation: Invocation | None
    record: RecordDocument | None
    record_sha256: str | None
    cargo_lock_sha256: str
    source_revision: str | None
    source_dirty: bool | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Judged:
    """The resolved graph and what the release rules found in it."""

    graph: Graph
    claim: tuple[str, ...]
    features: tuple[str, ...]
    qa_providers: tuple[QaProvider, ...]
    qa_markers: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledLibrary:
    """A library ready to bundle, with everything its provenance records."""

    path: Path
    digest: Digest
    # the copy's identity right after it was written and hashed (before the probe child ran
    # it): while it is unchanged, `digest` is still its bytes' (`build.assemble`)
    identity: FileIdentity | None
    target: str
    channel: str
    package: Package
    judged: Judged
    evidence: Evidence
    advertised: Advertised | None
    generated: dict[str, bytes]  # bundle path -> bytes (SBOM, notices)
    asset_roles: dict[str, str]  # role -> bundle path
    notes: tuple[str, ...] = ()
    log: str = ""


def source_packages(graph: Graph, metadata: Metadata) -> dict[str, Package]:
    """Graph package id -> the cargo package of this workspace's metadata, where it has one
    (its source directory holds the licence texts the notices quote)."""
    by_key = {(p.name, p.version, p.source or PATH_SOURCE): p for p in metadata.packages.values()}
    return {package.id: found for package in graph.packages.values()
            if (found := by_key.get((package.name, package.version, package.source)))}


def finish_library(request: LibraryRequest, *, path: Path, digest: Digest,
                   identity: FileIdentity | None, package: Package,
                   metadata: Metadata, graph: Graph, providers: list[QaProvider],
                   advertised: Advertised | None, notes: list[str],
                   evidence: Evidence, log: str = "") -> CompiledLibrary:
    """Check claimed = advertised, render the SBOM and notices, and hold it all together."""
    plugin = request.plugin
    features = plugin_features(graph)
    if advertised is not None:
        check_advertised(advertised, features=features, plugin_id=plugin.id)
    qa_providers = tuple(providers)
    subject = SbomSubject(
        plugin_id=plugin.id, target=request.target, profile=plugin.profile,
        channel=request.channel, library_path=f"lib/{path.name}", library_sha256=digest.sha256,
        epoch=request.epoch, tool_version=horon_bundle.__version__)
    notices = build_notices(graph, packages=source_packages(graph, metadata),
                            workspace_root=metadata.workspace_root, plugin_id=plugin.id,
                            target=request.target, license_path=Path(plugin.license_file).name)
    judged = Judged(graph=graph, claim=request.claim, features=features,
                    qa_providers=qa_providers,
                    qa_markers=tuple(sorted(p.id for p in graph.packages.values()
                                            if p.qa_marker)))
    return CompiledLibrary(
        path=path, digest=digest, identity=identity, target=request.target,
        channel=request.channel,
        package=package, judged=judged, evidence=evidence, advertised=advertised,
        generated={SBOM_NAME: build_sbom(graph, subject, qa_providers), NOTICES_NAME: notices},
        asset_roles={SBOM_ROLE: SBOM_NAME, NOTICES_ROLE: NOTICES_NAME}, notes=tuple(notes),
        log=log)
