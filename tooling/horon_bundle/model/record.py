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

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.evidence import Advertised, Invocation
from horon_bundle.model.graph import Graph, graph_from_json

# An artifact record as `compile` wrote it (record.json's canonical document): a provenance
# embeds it whole, and it is decoded (`parse_record`) where it is judged.
RecordDocument = dict[str, object]
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
    raw: RecordDocument


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
    plugin_id = reader.take_text(doc, "plugin", "")
    package = reader.take_text(doc, "package", "")
    version = reader.take_text(doc, "version", "")
    library = reader.take(doc, "library", dict, "") or {}
    target = reader.take_text(doc, "target", "")
    profile = reader.take_text(doc, "profile", "")
    channel = reader.take_text(doc, "channel", "")
    claim = reader.strings(reader.take(doc, "claim", list, ""), "claim")
    features = reader.strings(reader.take(doc, "features", list, ""), "features")
    raw_invocation = reader.take(doc, "invocation", dict, "")
    raw_graph = reader.take(doc, "graph", dict, "")
    raw_advertised = doc.pop("advertised", None)
    reader.finish(doc, "")
    library = dict(library)
    name = reader.take_text(library, "name", "library")
    sha256 = reader.take_text(library, "sha256", "library")
    size = reader.take(library, "size", int, "library")
    reader.finish(library, "library")
    invocation = Invocation.from_json(raw_invocation, reader, "invocation")
    advertised = None
    if raw_advertised is not None:
        advertised = Advertised.from_json(raw_advertised, reader, "advertised",
                                          codes.EVIDENCE_RECORD)
    findings.raise_if_any()
    graph = graph_from_json(raw_graph, f"{source} graph")
    assert plugin_id is not None and package is not None and version is not None
    assert name is not None and sha256 is not None and size is not None
    assert target is not None and profile is not None and channel is not None
    assert claim is not None and features is not None
    assert invocation is not None
    return ArtifactRecord(
        plugin_id=plugin_id, package=package, version=version, library_name=name,
        sha256=sha256, size=size, target=target, profile=profile, channel=channel,
        claim=tuple(claim), features=tuple(features), invocation=invocation, graph=graph,
        advertised=advertised, raw=raw)


def load_record(path: Path) -> tuple[ArtifactRecord, Digest]:
    data = read_input(path, limit=MAX_RECORD_BYTES, what="record")
    assert data is not None
    document = read_json(data, source=path.name, max_bytes=MAX_RECORD_BYTES, max_depth=16)
    canonical = canonical_bytes(document) == data  # before decoding: decoders pop fields
    record = parse_record(document, path.name)
    if not canonical:
        raise Refused.one(codes.EVIDENCE_RECORD,
                          f"{path.name}: not in the canonical form `compile` writes (edited?)")
    return record, hash_bytes(data)
