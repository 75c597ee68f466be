"""Artifact records (evidence kind 2): a library built elsewhere, bound by five facts.

`horon-bundle compile` builds the library alone on its native runner and writes a record
binding it by sha256, size, target, profile and feature set, carrying that build's
invocation, resolved graph and advertised ABI metadata. `build --prebuilt LIB --record REC`
bundles it on another machine, refusing it if any of the five differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle import codes
from horon_bundle.cargo_metadata import Metadata, Package, load_metadata
from horon_bundle.declaration import Declaration, PluginDeclaration
from horon_bundle.errors import Finding, Findings, Refused
from horon_bundle.evidence import EVIDENCE_RECORD, Advertised, Invocation
from horon_bundle.fields import FieldReader
from horon_bundle.gates import check_advertised, judge_graph, plugin_features
from horon_bundle.graph import Graph, graph_from_json
from horon_bundle.hashing import Digest, copy_and_hash, hash_bytes
from horon_bundle.library_build import (
    CompiledLibrary,
    bundle_assets,
    merge_observations,
    read_advertised,
)
from horon_bundle.manifest import Manifest
from horon_bundle.notices import source_packages
from horon_bundle.provenance import BuildFacts
from horon_bundle.reporter import Reporter
from horon_bundle.strictjson import canonical_bytes, read_json
from horon_bundle.toolchain import Toolchain

RECORD_FORMAT = "horon.artifact-record.v1"
RECORD_NAME = "record.json"
MAX_RECORD_BYTES = 32 << 20


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactRecord:
    plugin_id: str
    package: str
    version: str
    library_name: str
    sha256: str
    size: int
    target: str
    profile: str
    channel: str
    claim: tuple[str, ...]
    features: tuple[str, ...]
    invocation: Invocation
    graph: Graph
    advertised: Advertised | None
    raw: dict[str, Any]


def record_json(*, plugin_id: str, package: str, version: str, library_name: str,
                digest: Digest, target: str, profile: str, channel: str, claim: tuple[str, ...],
                features: tuple[str, ...], invocation: Invocation, graph: Graph,
                advertised: Advertised | None) -> dict[str, Any]:
    return {
        "format": RECORD_FORMAT, "plugin": plugin_id, "package": package, "version": version,
        "library": {"name": library_name, "sha256": digest.sha256, "size": digest.size},
        "target": target, "profile": profile, "channel": channel, "claim": list(claim),
        "features": list(features), "invocation": invocation.to_json(),
        "graph": graph.to_json(),
        "advertised": None if advertised is None else advertised.to_json(),
    }


def parse_record(value: object, source: str) -> ArtifactRecord:
    findings = Findings()
    reader = FieldReader(source, findings, codes.EVIDENCE_RECORD, codes.EVIDENCE_RECORD,
                         codes.EVIDENCE_RECORD)
    document = reader.typed(value, dict, "")
    if document is None:
        raise Refused(findings)
    raw = dict(document)
    doc = dict(document)
    fmt = reader.take(doc, "format", str, "")
    if fmt is not None and fmt != RECORD_FORMAT:
        raise Refused.one(codes.EVIDENCE_RECORD, f"{source}: format {fmt!r}, expected "
                                                 f"{RECORD_FORMAT!r}")
    plugin_id = reader.take(doc, "plugin", str, "")
    package = reader.take(doc, "package", str, "")
    version = reader.take(doc, "version", str, "")
    library = reader.take(doc, "library", dict, "") or {}
    target = reader.take(doc, "target", str, "")
    profile = reader.take(doc, "profile", str, "")
    channel = reader.take(doc, "channel", str, "")
    claim = reader.strings(reader.take(doc, "claim", list, ""), "claim")
    features = reader.strings(reader.take(doc, "features", list, ""), "features")
    raw_invocation = reader.take(doc, "invocation", dict, "")
    raw_graph = reader.take(doc, "graph", dict, "")
    raw_advertised = doc.pop("advertised", None)
    reader.finish(doc, "")
    library = dict(library)
    name = reader.take(library, "name", str, "library")
    sha256 = reader.take(library, "sha256", str, "library")
    size = reader.take(library, "size", int, "library")
    reader.finish(library, "library")
    invocation = Invocation.from_json(raw_invocation, reader, "invocation")
    advertised = None
    if raw_advertised is not None:
        advertised = Advertised.from_json(raw_advertised, reader, "advertised",
                                          codes.EVIDENCE_RECORD)
    findings.raise_if_any()
    graph = graph_from_json(raw_graph, f"{source} graph")
    assert plugin_id and package and version and name and sha256 and size is not None
    assert target and profile and channel and claim is not None and features is not None
    assert invocation is not None
    return ArtifactRecord(
        plugin_id=plugin_id, package=package, version=version, library_name=name,
        sha256=sha256, size=size, target=target, profile=profile, channel=channel,
        claim=tuple(claim), features=tuple(features), invocation=invocation, graph=graph,
        advertised=advertised, raw=raw)


def load_record(path: Path) -> tuple[ArtifactRecord, Digest]:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: {exc.strerror}") from None
    document = read_json(data, source=path.name, max_bytes=MAX_RECORD_BYTES, max_depth=16)
    canonical = canonical_bytes(document) == data  # before decoding: decoders pop fields
    record = parse_record(document, path.name)
    if not canonical:
        raise Refused.one(codes.EVIDENCE_RECORD,
                          f"{path.name}: not in the canonical form `compile` writes (edited?)")
    return record, hash_bytes(data)


def binding_findings(record: ArtifactRecord, *, library: Digest, library_name: str,
                     target: str, profile: str, claim: tuple[str, ...], plugin_id: str,
                     ) -> list[Finding]:
    """One finding per differing fact: sha256, size, target, profile, features, identity."""
    findings = Findings()

    def differ(what: str, recorded: object, actual: object) -> None:
        if recorded != actual:
            findings.add(codes.EVIDENCE_MISMATCH,
                         f"artifact record {what} {recorded!r} != {actual!r}")

    differ("sha256", record.sha256, library.sha256)
    differ("size", record.size, library.size)
    differ("target", record.target, target)
    differ("profile", record.profile, profile)
    differ("feature claim", list(record.claim), list(claim))
    compiled = plugin_features(record.graph)
    if record.features != compiled:
        findings.add(codes.EVIDENCE_MISMATCH,
                     f"artifact record features {list(record.features)} != "
                     f"{list(compiled)}, what its graph compiled")
    differ("library name", record.library_name, library_name)
    differ("plugin id", record.plugin_id, plugin_id)
    return list(findings)


def library_from_record(*, declaration: Declaration, plugin: PluginDeclaration, target: str,
                        channel: str, prebuilt: Path, record_path: Path, toolchain: Toolchain,
                        scratch: Path, reporter: Reporter, probe_timeout: float,
                        epoch: int) -> CompiledLibrary:
    reporter.step(f"binding prebuilt {prebuilt.name} through {record_path.name}")
    record, record_digest = load_record(record_path)
    copied = scratch / prebuilt.name
    try:
        digest = copy_and_hash(prebuilt, copied)
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{prebuilt}: {exc.strerror}") from None
    claim = plugin.claim(channel)
    findings = binding_findings(record, library=digest, library_name=prebuilt.name,
                                target=target, profile=plugin.profile, claim=claim,
                                plugin_id=plugin.id)
    if record.package != plugin.package:
        findings.append(Finding(codes.EVIDENCE_MISMATCH,
                                f"artifact record package {record.package!r} != "
                                f"{plugin.package!r}"))
    if findings:
        raise Refused(findings)
    providers = judge_graph(record.graph, claim=claim, channel=channel,
                            patterns=declaration.qa_patterns)
    features = plugin_features(record.graph)
    advertised, notes = _advertised(record, copied, target=target, toolchain=toolchain,
                                    reporter=reporter, timeout=probe_timeout)
    if advertised is not None:
        check_advertised(advertised, features=features, plugin_id=plugin.id)
    package, metadata = _package_facts(record, declaration)
    qa_providers = tuple(p.to_json() for p in providers)
    assets, roles = bundle_assets(
        graph=record.graph, qa_providers=qa_providers, plugin=plugin, library_name=copied.name,
        library_sha256=digest.sha256, target=target, channel=channel, epoch=epoch,
        packages=source_packages(record.graph, metadata),
        workspace_root=metadata.workspace_root)
    return CompiledLibrary(
        path=copied, sha256=digest.sha256, size=digest.size, target=target, channel=channel,
        claim=claim, features=features, package=package, graph=record.graph,
        qa_providers=qa_providers,
        qa_markers=tuple(sorted(p.id for p in record.graph.packages.values() if p.qa_marker)),
        advertised=advertised, evidence=EVIDENCE_RECORD, invocation=None,
        record=record.raw, record_sha256=record_digest.sha256,
        cargo_lock_sha256=record.invocation.cargo_lock_sha256,
        source_revision=record.invocation.source_revision,
        source_dirty=record.invocation.source_dirty, generated_assets=assets,
        asset_roles=roles, notes=tuple(notes))


def _advertised(record: ArtifactRecord, library: Path, *, target: str, toolchain: Toolchain,
                reporter: Reporter, timeout: float) -> tuple[Advertised | None, list[str]]:
    """What the prebuilt library advertises here (section, probe where it runs), checked
    against what the record says it advertised on the runner that compiled it."""
    here, notes = read_advertised(library, target=target, toolchain=toolchain,
                                  reporter=reporter, timeout=timeout)
    recorded = record.advertised
    if recorded is None:
        return here, notes
    if here is None:
        notes.append("advertised ABI metadata taken from the artifact record (probed on the "
                      "runner that compiled it)")
        return recorded, notes
    if not here.same_metadata(recorded):
        code = codes.ABI_METADATA if "probe" in here.observed_by else codes.ABI_SECTION_MISMATCH
        what = "advertises" if "probe" in here.observed_by else "has a .horon_abi section saying"
        raise Refused.one(code, f"{library.name} {what} {here.summary()} here; the artifact "
                                f"record says it advertised {recorded.summary()} on its runner")
    return merge_observations(here, recorded), notes


def _package_facts(record: ArtifactRecord, declaration: Declaration) -> tuple[Package, Metadata]:
    """The package facts the bundle needs (version, licence, the crates' sources for the
    notices) from this workspace's own cargo metadata."""
    metadata = load_metadata(declaration.workspace, target=record.target,
                             package=record.package, claim=record.claim)
    package = metadata.member(record.package)
    if package is None or package.version != record.version:
        found = package.version if package else "absent"
        raise Refused.one(codes.EVIDENCE_MISMATCH,
                          f"artifact record is for {record.package} {record.version}, the "
                          f"workspace has {found}")
    return package, metadata


def record_findings_for_bundle(facts: BuildFacts, manifest: Manifest,
                               library: Digest | None) -> list[Finding]:
    """verify: the record embedded in provenance must bind the bundle's library."""
    try:
        record = parse_record(facts.record, "provenance.json artifact record")
    except Refused as exc:
        return list(exc.findings)
    findings: list[Finding] = []
    if library is not None:
        findings += binding_findings(record, library=library,
                                     library_name=manifest.library.path.rsplit("/", 1)[-1],
                                     target=manifest.target, profile=manifest.profile,
                                     claim=tuple(facts.claim), plugin_id=manifest.id)
    if facts.record_sha256 is not None and \
            hash_bytes(canonical_bytes(facts.record)).sha256 != facts.record_sha256:
        findings.append(Finding(codes.EVIDENCE_RECORD,
                                "provenance.json: the embedded artifact record does not match "
                                "its recorded digest"))
    return findings
