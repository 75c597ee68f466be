"""From a compiled library to a bundle: provenance, plugin.json, assembly, archive."""

from __future__ import annotations

from pathlib import Path

import horon_bundle
from horon_bundle.assets.spdx_expression import spdx_expression
from horon_bundle.build.archive import write_digest_file
from horon_bundle.build.archive_stream import write_streamed_archive
from horon_bundle.build.assemble import StagedFile, assemble_bundle, manifest_assets
from horon_bundle.build.compiled import CompiledLibrary
from horon_bundle.build.request import BuildResult
from horon_bundle.build.stale_signatures import discard_stale_signatures
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.core.strictjson import canonical_value_bytes
from horon_bundle.model.declaration import Declaration, PluginDeclaration
from horon_bundle.model.manifest import (
    ABI_MAJOR,
    WIRE_SCHEMA,
    FileDigest,
    License,
    Manifest,
    Sidecar,
    bundle_name,
)
from horon_bundle.model.provenance import PROVENANCE_NAME, BuildFacts
from horon_bundle.model.provenance_statement import statement


def package_bundle(*, declaration: Declaration, plugin: PluginDeclaration,
                   library: CompiledLibrary, out: Path, epoch: int,
                   builder: str) -> BuildResult:
    """Stage, verify and rename the bundle into `out`, then write its archive."""
    package = library.package
    workspace = declaration.workspace
    license_path = Path(plugin.license_file).name
    if package.license is None:
        raise Refused.one(codes.DECLARATION_PACKAGE,
                          f"package {package.name} has no `license` (SPDX) in Cargo.toml",
                          "Set `license = \"…\"` in the package's Cargo.toml.")
    lib_path = f"lib/{library.path.name}"
    sidecars = [(s, f"sidecars/{Path(s.source).name}") for s in plugin.sidecars]
    copies = [StagedFile(source=library.path, path=lib_path, moved_digest=library.digest,
                         moved_identity=library.identity),
              StagedFile(source=workspace / plugin.license_file, path=license_path)]
    copies += [StagedFile(source=workspace / s.source, path=path, executable=s.executable)
               for s, path in sidecars]
    judged, evidence = library.judged, library.evidence
    name = bundle_name(plugin.id, package.version, library.target, library.channel)

    def provenance(digests: dict[str, Digest]) -> bytes:
        subjects = {lib_path: digests[lib_path].sha256}
        subjects.update({path: digests[path].sha256 for _, path in sidecars})
        if digests[lib_path] != library.digest:
            raise Refused.one(codes.BUILD_NONDETERMINISTIC,
                              f"{library.path}: changed while it was copied")
        facts = BuildFacts(
            plugin_id=plugin.id, package=package.name, version=package.version,
            target=library.target, profile=plugin.profile, channel=library.channel,
            claim=judged.claim, features=judged.features,
            declaration_sha256=declaration.digest.sha256,
            source_revision=evidence.source_revision, source_dirty=evidence.source_dirty,
            source_date_epoch=epoch, qa_patterns=declaration.qa_patterns,
            qa_markers=judged.qa_markers, qa_providers=judged.qa_providers,
            evidence=evidence.kind, invocation=evidence.invocation, record=evidence.record,
            record_sha256=evidence.record_sha256, graph=judged.graph,
            advertised=library.advertised, cargo_lock_sha256=evidence.cargo_lock_sha256,
            builder_id=builder, tool_version=horon_bundle.__version__)
        # at C speed (a graph of 10,000 packages): the statement holds no float, and the
        # self-check's strict reader would refuse one before anything is written
        return canonical_value_bytes(statement(facts, subjects))

    def manifest(digests: dict[str, Digest]) -> Manifest:
        def ref(path: str) -> FileDigest:
            return FileDigest(path=path, sha256=digests[path].sha256, size=digests[path].size)

        roles = {"provenance": PROVENANCE_NAME, **library.asset_roles}
        return Manifest(
            id=plugin.id, name=plugin.name, version=package.version, target=library.target,
            profile=plugin.profile, channel=library.channel, abi_major=ABI_MAJOR,
            abi_minor=library.advertised.abi_minor if library.advertised else 0,
            wire_schema=WIRE_SCHEMA, features=judged.features, library=ref(lib_path),
            license=License(spdx=spdx_expression(package.license or "") or package.license or "",
                            file=ref(license_path)),
            assets=manifest_assets(digests, roles),
            sidecars=tuple(Sidecar(name=s.name, file=ref(path), executable=s.executable)
                           for s, path in sidecars))

    assembled = assemble_bundle(out=out, name=name, copies=copies, generated=library.generated,
                                provenance=provenance, manifest=manifest)
    archive = out / f"{name}.zip"
    digest = write_streamed_archive(assembled.directory, assembled.files, assembled.written,
                                    archive, epoch=epoch)
    write_digest_file(archive, digest)
    removed = discard_stale_signatures(
        archive, digest.sha256, (assembled.directory / PROVENANCE_NAME).read_bytes())
    return BuildResult(bundle=assembled.directory, archive=archive, archive_sha256=digest.sha256,
                       manifest=assembled.manifest,
                       qa_providers=tuple(p.chain for p in judged.qa_providers),
                       notes=library.notes + removed)
