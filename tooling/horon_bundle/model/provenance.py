"""provenance.json: an in-toto Statement v1 with an SLSA provenance v1 predicate.

Custom data lives only where SLSA allows it: `externalParameters` (what the release asked
for), `internalParameters` (how the toolchain judged it), `resolvedDependencies` (source,
lock file, crates) and `byproducts` (the evidence, the graph, the advertised ABI metadata).
Subjects are the library and sidecars, never plugin.json (buildType: docs/provenance.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value, join
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.identifiers import SHA256_HEX
from horon_bundle.core.strictjson import canonical_value_bytes, read_json
from horon_bundle.model.evidence import EVIDENCE_KINDS, Advertised, Invocation
from horon_bundle.model.graph import Graph, graph_from_json
from horon_bundle.model.intoto import PREDICATE_TYPE, STATEMENT_TYPE
from horon_bundle.model.qa import QaProvider, recorded_providers

if TYPE_CHECKING:  # an alias for annotations: the record's models are not loaded (start-up)
    from horon_bundle.model.record import RecordDocument

BUILD_TYPE = "https://horon.dev/horon-bundle/build-types/cargo-cdylib/v1"
PROVENANCE_NAME = "provenance.json"
MAX_PROVENANCE_BYTES = 32 << 20
MAX_PROVENANCE_DEPTH = 16

BYPRODUCT_INVOCATION = "horon:invocation"
BYPRODUCT_RECORD = "horon:artifact-record"
BYPRODUCT_GRAPH = "horon:graph"
BYPRODUCT_ADVERTISED = "horon:advertised"
BYPRODUCTS = (BYPRODUCT_INVOCATION, BYPRODUCT_RECORD, BYPRODUCT_GRAPH, BYPRODUCT_ADVERTISED)
_NO_LOCATOR = ("a ResourceDescriptor without uri, digest or content: in-toto v1 requires one "
               "(provenance written before horon-bundle fixed this is refused, not trusted)")
_DEPENDENCY_KEYS = frozenset({"name", "uri", "digest", "annotations"})
BYPRODUCT_MEDIA_TYPES = {
    BYPRODUCT_INVOCATION: "application/vnd.horon.invocation.v1+json",
    BYPRODUCT_RECORD: "application/vnd.horon.artifact-record.v1+json",
    BYPRODUCT_GRAPH: "application/vnd.horon.graph.v1+json",
    BYPRODUCT_ADVERTISED: "application/vnd.horon.abi.v1+json",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildFacts:
    """Everything the statement records, gathered by the build (or read back by verify)."""

    plugin_id: str
    package: str
    version: str
    target: str
    profile: str
    channel: str
    claim: tuple[str, ...]
    features: tuple[str, ...]
    declaration_sha256: str
    source_revision: str | None
    source_dirty: bool | None
    source_date_epoch: int
    qa_patterns: tuple[str, ...]
    qa_markers: tuple[str, ...]
    qa_providers: tuple[QaProvider, ...]
    evidence: str
    invocation: Invocation | None
    record: RecordDocument | None
    record_sha256: str | None
    graph: Graph | None
    advertised: Advertised | None
    cargo_lock_sha256: str
    builder_id: str
    tool_version: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Provenance:
    subjects: dict[str, str]
    facts: BuildFacts


def content_digest(content: dict[str, Any]) -> str:
    """A byproduct's `digest.sha256`: of its content's canonical bytes (for the artifact
    record, the bytes of the record file `compile` wrote, which is canonical)."""
    return hash_bytes(canonical_value_bytes(content)).sha256


def parse_provenance(data: bytes, *, source: str = PROVENANCE_NAME) -> Provenance:
    document = read_json(data, source=source, max_bytes=MAX_PROVENANCE_BYTES,
                         max_depth=MAX_PROVENANCE_DEPTH)
    findings = Findings()
    reader = FieldReader(source, findings, codes.PROVENANCE_SCHEMA, codes.PROVENANCE_SCHEMA,
                         codes.PROVENANCE_SCHEMA)
    top = reader.typed(document, dict, "")
    if top is None:
        raise Refused(findings)
    top = dict(top)
    kind = reader.take(top, "_type", str, "")
    raw_subjects = reader.take(top, "subject", list, "") or []
    predicate_type = reader.take(top, "predicateType", str, "")
    predicate = reader.take(top, "predicate", dict, "") or {}
    reader.finish(top, "")
    if kind is not None and kind != STATEMENT_TYPE:
        reader.report(codes.PROVENANCE_BUILD_TYPE, "_type", f"{kind!r}, expected {STATEMENT_TYPE}")
    if predicate_type is not None and predicate_type != PREDICATE_TYPE:
        reader.report(codes.PROVENANCE_BUILD_TYPE, "predicateType",
                      f"{predicate_type!r}, expected {PREDICATE_TYPE}")
    findings.raise_if_any()
    subjects = _subjects(reader, raw_subjects)
    facts = _predicate(reader, dict(predicate))
    findings.raise_if_any()
    assert facts is not None
    return Provenance(subjects=subjects, facts=facts)


def _subjects(reader: FieldReader, raw: list[Any]) -> dict[str, str]:
    subjects: dict[str, str] = {}
    for index, item in enumerate(raw):
        where = f"subject[{index}]"
        obj = reader.typed(item, dict, where)
        if obj is None:
            continue
        obj = dict(obj)
        name = reader.take(obj, "name", str, where)
        digest = reader.take(obj, "digest", dict, where)
        reader.finish(obj, where)
        if digest is None or name is None:
            continue
        sha = digest.get("sha256")
        if set(digest) != {"sha256"} or not isinstance(sha, str):
            reader.report(codes.PROVENANCE_SUBJECT, f"{where}.digest",
                          f"{sorted(digest)}: subjects are bound by sha256 only")
            continue
        if not SHA256_HEX.fullmatch(sha):
            reader.report(codes.PROVENANCE_SUBJECT, f"{where}.digest.sha256",
                          f"{describe_value(sha)} is not a SHA-256 (64 lowercase hex digits)")
            continue
        if name in subjects:
            reader.report(codes.PROVENANCE_SUBJECT, where, f"subject {name!r} listed twice")
        subjects[name] = sha
    return subjects


def _predicate(reader: FieldReader, predicate: dict[str, Any]) -> BuildFacts | None:
    definition = reader.take(predicate, "buildDefinition", dict, "predicate") or {}
    run = reader.take(predicate, "runDetails", dict, "predicate") or {}
    reader.finish(predicate, "predicate")
    where = "predicate.buildDefinition"
    build_type = reader.take(definition, "buildType", str, where)
    external = reader.take(definition, "externalParameters", dict, where) or {}
    internal = reader.take(definition, "internalParameters", dict, where) or {}
    resolved = reader.take(definition, "resolvedDependencies", list, where) or []
    reader.finish(definition, where)
    if build_type is not None and build_type != BUILD_TYPE:
        reader.report(codes.PROVENANCE_BUILD_TYPE, f"{where}.buildType",
                      f"{build_type!r}, expected {BUILD_TYPE}")
        return None
    ext = f"{where}.externalParameters"
    plugin_id = reader.take_text(external, "plugin", ext)
    package = reader.take_text(external, "package", ext)
    version = reader.take_text(external, "version", ext)
    target = reader.take_text(external, "target", ext)
    profile = reader.take_text(external, "profile", ext)
    channel = reader.take_text(external, "channel", ext)
    claim = reader.strings(reader.take(external, "claim", list, ext), f"{ext}.claim")
    declaration = reader.take(external, "declaration", dict, ext) or {}
    source = reader.take(external, "source", dict, ext) or {}
    reader.finish(external, ext)
    reader.take(declaration, "path", str, f"{ext}.declaration")
    declaration_sha = _sha256(reader, declaration, "digest", f"{ext}.declaration")
    reader.finish(declaration, f"{ext}.declaration")
    _, revision = reader.take_nullable(source, "revision", str, f"{ext}.source")
    _, dirty = reader.take_nullable(source, "dirty", bool, f"{ext}.source")
    reader.finish(source, f"{ext}.source")

    inn = f"{where}.internalParameters"
    features = reader.strings(reader.take(internal, "features", list, inn), f"{inn}.features")
    evidence = reader.take(internal, "evidence", str, inn)
    epoch = reader.take(internal, "source_date_epoch", int, inn)
    qa = reader.take(internal, "qa", dict, inn) or {}
    reader.finish(internal, inn)
    patterns = reader.strings(reader.take(qa, "patterns", list, f"{inn}.qa"), f"{inn}.qa.patterns")
    markers = reader.strings(reader.take(qa, "markers", list, f"{inn}.qa"), f"{inn}.qa.markers")
    providers = recorded_providers(reader, reader.take(qa, "providers", list, f"{inn}.qa") or [],
                                   f"{inn}.qa.providers")
    reader.finish(qa, f"{inn}.qa")
    if evidence is not None and evidence not in EVIDENCE_KINDS:
        reader.report(codes.PROVENANCE_SCHEMA, f"{inn}.evidence",
                      f"{describe_value(evidence)} is not one of {EVIDENCE_KINDS}")

    lock_sha = _resolved_dependencies(reader, resolved, f"{where}.resolvedDependencies")
    rd = "predicate.runDetails"
    builder = reader.take(run, "builder", dict, rd) or {}
    raw_byproducts = reader.take(run, "byproducts", list, rd) or []
    reader.finish(run, rd)
    builder_id = reader.take(builder, "id", str, f"{rd}.builder")
    versions = reader.take(builder, "version", dict, f"{rd}.builder") or {}
    tool = reader.take(versions, "horon-bundle", str, f"{rd}.builder.version")
    reader.finish(versions, f"{rd}.builder.version")
    reader.finish(builder, f"{rd}.builder")
    byproducts = _byproducts(reader, raw_byproducts)

    invocation = None
    if BYPRODUCT_INVOCATION in byproducts:
        invocation = Invocation.from_json(byproducts[BYPRODUCT_INVOCATION][0], reader,
                                          f"byproduct {BYPRODUCT_INVOCATION}")
    graph = None
    if BYPRODUCT_GRAPH in byproducts:
        graph = graph_from_json(byproducts[BYPRODUCT_GRAPH][0], f"{PROVENANCE_NAME} graph")
    advertised = None
    if BYPRODUCT_ADVERTISED in byproducts:
        advertised = Advertised.from_json(byproducts[BYPRODUCT_ADVERTISED][0], reader,
                                          f"byproduct {BYPRODUCT_ADVERTISED}",
                                          codes.PROVENANCE_SCHEMA)
    record, record_sha = byproducts.get(BYPRODUCT_RECORD, (None, None))
    if reader.findings:
        return None
    assert plugin_id is not None and package is not None and version is not None
    assert target is not None and profile is not None and channel is not None
    assert claim is not None and features is not None and evidence is not None
    assert epoch is not None
    assert patterns is not None and markers is not None and builder_id is not None
    return BuildFacts(
        plugin_id=plugin_id, package=package, version=version, target=target, profile=profile,
        channel=channel, claim=tuple(claim), features=tuple(features),
        declaration_sha256=declaration_sha or "", source_revision=revision,
        source_dirty=dirty, source_date_epoch=epoch,
        qa_patterns=tuple(patterns), qa_markers=tuple(markers),
        qa_providers=tuple(providers), evidence=evidence,
        invocation=invocation, record=record, record_sha256=record_sha, graph=graph,
        advertised=advertised, cargo_lock_sha256=lock_sha or "",
        builder_id=builder_id, tool_version=tool or "")


def _sha256(reader: FieldReader, obj: dict[str, Any], key: str, where: str) -> str | None:
    """A `{"sha256": "<64 hex>"}` digest field, nothing else in it."""
    digest = reader.take(obj, key, dict, where)
    if digest is None:
        return None
    digest = dict(digest)
    value = reader.take(digest, "sha256", str, join(where, key))
    reader.finish(digest, join(where, key))
    if value is not None and not SHA256_HEX.fullmatch(value):
        reader.report(codes.PROVENANCE_SCHEMA, join(where, key), f"{value!r} is not 64 hex")
        return None
    return value


def _plain_dependency(item: Any) -> bool:
    """A package entry `_resolved_dependencies` accepts as it is (10,000 in a large graph)."""
    get = item.get if type(item) is dict and item.keys() <= _DEPENDENCY_KEYS else None
    digest: Any = get("digest") if get is not None else None
    return get is not None and type(get("name")) is str and get("name") != "Cargo.lock" and (
        type(get("uri")) is str or (get("uri") is None and digest is not None)) and type(get(
            "annotations", {})) is dict and (digest is None or (type(digest) is dict and set(
                map(type, digest.values())) <= {str}))


def _resolved_dependencies(reader: FieldReader, raw: list[Any], where: str) -> str | None:
    """Decode every resolved dependency; return the Cargo.lock digest."""
    lock: str | None = None
    locks = 0
    for index, item in enumerate(raw):
        if _plain_dependency(item):
            continue  # a package entry the field reader would accept as it is: nothing to say
        place = join(where, index)
        obj = reader.typed(item, dict, place)
        if obj is None:
            continue
        obj = dict(obj)
        name = reader.take(obj, "name", str, place)
        if name == "Cargo.lock":
            locks += 1
            if locks == 2:  # two lock files: which one the build used is not said
                reader.report(codes.PROVENANCE_SCHEMA, place, "Cargo.lock listed twice")
        uri = obj.pop("uri", None)
        digest = obj.pop("digest", None)
        annotations = obj.pop("annotations", None)
        reader.finish(obj, place)
        if uri is None and digest is None:
            reader.report(codes.PROVENANCE_SCHEMA, place, _NO_LOCATOR)
        if uri is not None:
            reader.typed(uri, str, join(place, "uri"))
        if annotations is not None:
            reader.typed(annotations, dict, join(place, "annotations"))
        if digest is not None:
            digest = reader.typed(digest, dict, join(place, "digest"))
            values = list((digest or {}).values())
            if digest is not None and not all(isinstance(v, str) for v in values):
                reader.report(codes.PROVENANCE_SCHEMA, join(place, "digest"),
                              "digest values must be strings")
            elif name == "Cargo.lock" and digest is not None:
                value = digest.get("sha256")
                lock = value if isinstance(value, str) else None
    return lock


def _byproducts(reader: FieldReader,
                raw: list[Any]) -> dict[str, tuple[dict[str, Any], str | None]]:
    found: dict[str, tuple[dict[str, Any], str | None]] = {}
    for index, item in enumerate(raw):
        where = f"predicate.runDetails.byproducts[{index}]"
        obj = reader.typed(item, dict, where)
        if obj is None:
            continue
        obj = dict(obj)
        name = reader.take(obj, "name", str, where)
        media_type = reader.take(obj, "mediaType", str, where)
        content = reader.take(obj, "annotations", dict, where)
        raw_digest = obj.pop("digest", None)
        reader.finish(obj, where)
        if raw_digest is None:
            reader.report(codes.PROVENANCE_SCHEMA, where, _NO_LOCATOR)
            continue
        sha = _sha256(reader, {"digest": raw_digest}, "digest", where)
        if name is None or content is None or sha is None:
            continue
        if sha != content_digest(content):
            reader.report(codes.PROVENANCE_SCHEMA, f"{where}.digest",
                          f"sha256 {sha} is not the digest of the byproduct's content "
                          f"{content_digest(content)}")
            continue
        if name not in BYPRODUCTS:
            reader.report(codes.PROVENANCE_SCHEMA, f"{where}.name", f"unknown byproduct {name!r}")
        elif media_type != BYPRODUCT_MEDIA_TYPES[name]:
            reader.report(codes.PROVENANCE_SCHEMA, f"{where}.mediaType",
                          f"{describe_value(media_type)} for {name}")
        elif name in found:
            reader.report(codes.PROVENANCE_SCHEMA, where, f"byproduct {name!r} twice")
        else:
            found[name] = (content, sha)
    return found
