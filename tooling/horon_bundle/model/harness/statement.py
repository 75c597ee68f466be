"""provenance.json of a harness zip: an in-toto Statement v1 with an SLSA provenance v1
predicate of its own buildType (docs/harness.md). Subjects are every file of the plugin and
catalogue.json, by SHA-256; the parameters name the plugin, its version, where the version
came from, and the source revision with its dirty flag."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import FieldReader
from horon_bundle.core.identifiers import SHA256_HEX
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.intoto import PREDICATE_TYPE, STATEMENT_TYPE

BUILD_TYPE = "https://horon.dev/horon-bundle/build-types/harness-zip/v1"
MAX_STATEMENT_BYTES = 32 << 20
VERSION_FROM = ("plugin.json", "marketplace", "content")


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessFacts:
    name: str
    version: str
    version_from: str
    hosts: tuple[str, ...]
    marketplace: str | None
    source_revision: str | None
    source_dirty: bool | None
    source_date_epoch: int
    builder_id: str
    tool_version: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessProvenance:
    subjects: dict[str, str]
    facts: HarnessFacts


def harness_statement(facts: HarnessFacts, subjects: dict[str, str]) -> dict[str, Any]:
    resolved: list[dict[str, Any]] = []
    if facts.source_revision is not None:
        resolved.append({"name": "source", "digest": {"gitCommit": facts.source_revision}})
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": path, "digest": {"sha256": digest}}
                    for path, digest in sorted(subjects.items(),
                                               key=lambda item: item[0].encode("utf-8"))],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "name": facts.name, "version": facts.version,
                    "hosts": list(facts.hosts), "marketplace": facts.marketplace,
                    "source": {"revision": facts.source_revision, "dirty": facts.source_dirty},
                },
                "internalParameters": {"version_from": facts.version_from,
                                       "source_date_epoch": facts.source_date_epoch},
                "resolvedDependencies": resolved,
            },
            "runDetails": {
                "builder": {"id": facts.builder_id,
                            "version": {"horon-bundle": facts.tool_version}},
                "byproducts": [],
            },
        },
    }


def parse_harness_statement(data: bytes, *, source: str = "provenance.json") -> HarnessProvenance:
    document = read_json(data, source=source, max_bytes=MAX_STATEMENT_BYTES, max_depth=8)
    findings = Findings()
    code = codes.HARNESS_PROVENANCE
    reader = FieldReader(source, findings, code, code, code)
    top = dict(reader.typed(document, dict, "") or {})
    kind = reader.take(top, "_type", str, "")
    subjects_raw = reader.take(top, "subject", list, "") or []
    predicate_type = reader.take(top, "predicateType", str, "")
    predicate = dict(reader.take(top, "predicate", dict, "") or {})
    reader.finish(top, "")
    if kind is not None and kind != STATEMENT_TYPE:
        reader.report(code, "_type", f"{kind!r}, expected {STATEMENT_TYPE}")
    if predicate_type is not None and predicate_type != PREDICATE_TYPE:
        reader.report(code, "predicateType", f"{predicate_type!r}, expected {PREDICATE_TYPE}")
    subjects: dict[str, str] = {}
    for index, item in enumerate(subjects_raw):
        where = f"subject[{index}]"
        obj = dict(reader.typed(item, dict, where) or {})
        name = reader.take(obj, "name", str, where)
        digest = dict(reader.take(obj, "digest", dict, where) or {})
        reader.finish(obj, where)
        sha = digest.pop("sha256", None)
        if digest or not isinstance(sha, str) or not SHA256_HEX.fullmatch(sha) or name is None:
            reader.report(code, where, "subjects are bound by one sha256 only")
        elif name in subjects:
            reader.report(code, where, f"{name!r} listed twice")
        else:
            subjects[name] = sha
    facts = _facts(reader, predicate)
    findings.raise_if_any()
    assert facts is not None
    return HarnessProvenance(subjects=subjects, facts=facts)


def _facts(reader: FieldReader, predicate: dict[str, Any]) -> HarnessFacts | None:
    code = codes.HARNESS_PROVENANCE
    at = "predicate.buildDefinition"
    definition = dict(reader.take(predicate, "buildDefinition", dict, "predicate") or {})
    run = dict(reader.take(predicate, "runDetails", dict, "predicate") or {})
    reader.finish(predicate, "predicate")
    build_type = reader.take(definition, "buildType", str, at)
    if build_type is not None and build_type != BUILD_TYPE:
        reader.report(code, f"{at}.buildType", f"{build_type!r}, expected {BUILD_TYPE}")
    external = dict(reader.take(definition, "externalParameters", dict, at) or {})
    internal = dict(reader.take(definition, "internalParameters", dict, at) or {})
    resolved = reader.take(definition, "resolvedDependencies", list, at)
    reader.finish(definition, at)
    ext = f"{at}.externalParameters"
    name = reader.take(external, "name", str, ext)
    version = reader.take(external, "version", str, ext)
    hosts = reader.strings(reader.take(external, "hosts", list, ext), f"{ext}.hosts")
    _, marketplace = reader.take_nullable(external, "marketplace", str, ext)
    source = dict(reader.take(external, "source", dict, ext) or {})
    _, revision = reader.take_nullable(source, "revision", str, f"{ext}.source")
    _, dirty = reader.take_nullable(source, "dirty", bool, f"{ext}.source")
    reader.finish(source, f"{ext}.source")
    reader.finish(external, ext)
    inner = f"{at}.internalParameters"
    version_from = reader.take(internal, "version_from", str, inner)
    epoch = reader.take(internal, "source_date_epoch", int, inner)
    reader.finish(internal, inner)
    if version_from is not None and version_from not in VERSION_FROM:
        reader.report(code, f"{inner}.version_from", f"{version_from!r}")
    expected_resolved = ([{"name": "source", "digest": {"gitCommit": revision}}]
                         if revision is not None else [])
    if resolved is not None and resolved != expected_resolved:
        reader.report(code, f"{at}.resolvedDependencies", "does not name the source revision")
    builder = dict(reader.take(run, "builder", dict, "predicate.runDetails") or {})
    byproducts = reader.take(run, "byproducts", list, "predicate.runDetails")
    reader.finish(run, "predicate.runDetails")
    builder_id = reader.take(builder, "id", str, "predicate.runDetails.builder")
    tool = dict(reader.take(builder, "version", dict, "predicate.runDetails.builder") or {})
    reader.finish(builder, "predicate.runDetails.builder")
    tool_version = tool.pop("horon-bundle", None)
    if tool or not isinstance(tool_version, str):
        reader.report(code, "predicate.runDetails.builder.version", "expected {horon-bundle}")
    if byproducts:
        reader.report(code, "predicate.runDetails.byproducts", "expected none")
    if None in (name, version, hosts, version_from, epoch, builder_id) or not isinstance(
            tool_version, str):
        return None
    assert name is not None and version is not None and hosts is not None
    assert version_from is not None and epoch is not None and builder_id is not None
    return HarnessFacts(name=name, version=version, version_from=version_from,
                        hosts=tuple(hosts), marketplace=marketplace, source_revision=revision,
                        source_dirty=dirty, source_date_epoch=epoch, builder_id=builder_id,
                        tool_version=tool_version)

