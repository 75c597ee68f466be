"""The CycloneDX rendering behind `sbom.build_sbom` (kept apart: cyclonedx is heavy)."""

from __future__ import annotations

import datetime
import hashlib
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from cyclonedx.model import HashAlgorithm, HashType, Property
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression
from cyclonedx.model.tool import ToolRepository
from cyclonedx.schema.schema import SchemaVersion1Dot6
from packageurl import PackageURL

from horon_bundle.assets.sbom_subject import SERIAL_NAMESPACE, SbomSubject
from horon_bundle.assets.spdx_expression import spdx_expression
from horon_bundle.core.strictjson import canonical_value_bytes, read_json
from horon_bundle.model.graph import Graph, GraphPackage
from horon_bundle.model.qa import QaProvider

_NIL_SERIAL = uuid.UUID(int=0)  # the serial while the document it is the hash of is rendered


def purl(package: GraphPackage) -> PackageURL | None:
    """crates.io identity only for crates.io crates (model/crate_origin.py)."""
    text = package.purl
    return None if text is None else PackageURL.from_string(text)


def _licenses(package: GraphPackage) -> list[LicenseExpression | DisjunctiveLicense]:
    if package.license is None:
        return []
    if package.license.startswith("LicenseRef-file:"):
        # Cargo's `license-file` without `license`: no SPDX expression exists.
        return [DisjunctiveLicense(name=f"see {package.license.split(':', 1)[1]}")]
    expression = spdx_expression(package.license)
    if expression is None:  # never an expression an SPDX parser refuses: the text, named
        return [DisjunctiveLicense(name=package.license)]
    return [LicenseExpression(expression)]


def _properties(package: GraphPackage, qa: Sequence[QaProvider]) -> list[Property]:
    props = [Property(name=f"horon:features:{kind}", value=",".join(features))
             for kind, features in sorted(package.compiled.items())]
    props.append(Property(name="horon:source", value=package.source))
    if package.qa_marker:
        props.append(Property(name="horon:qa-marker", value="true"))
    for provider in qa:
        what = "crate" if provider.feature is None else f"feature {provider.feature}"
        props.append(Property(name="horon:qa-provider",
                              value=f"{what} via {provider.chain or package.name}"))
    return props


def _component(package: GraphPackage, qa: Sequence[QaProvider],
               *, extra: Iterable[Property] = (), hashes: Iterable[HashType] = ()) -> Component:
    all_hashes = list(hashes)
    if package.checksum is not None:
        all_hashes.append(HashType(alg=HashAlgorithm.SHA_256, content=package.checksum))
    return Component(
        type=ComponentType.LIBRARY, name=package.name, version=package.version,
        bom_ref=package.id, purl=purl(package), licenses=_licenses(package),
        hashes=all_hashes, properties=[*_properties(package, qa), *extra])


def render_sbom(graph: Graph, subject: SbomSubject,
               qa_providers: Sequence[QaProvider]) -> bytes:
    """The SBOM's canonical JSON bytes (sorted keys, as every document the toolchain writes)."""
    by_package: dict[str, list[QaProvider]] = {}
    for provider in qa_providers:
        by_package.setdefault(provider.package, []).append(provider)
    root = graph.root_package
    root_component = _component(
        root, by_package.get(root.id, ()),
        hashes=[HashType(alg=HashAlgorithm.SHA_256, content=subject.library_sha256)],
        extra=[Property(name="horon:plugin-id", value=subject.plugin_id),
               Property(name="horon:target", value=subject.target),
               Property(name="horon:profile", value=subject.profile),
               Property(name="horon:channel", value=subject.channel),
               Property(name="horon:library", value=subject.library_path)])
    components = {package.id: _component(package, by_package.get(package.id, ()))
                  for package in graph.packages.values() if package.id != graph.root}
    tools = ToolRepository(components=[Component(
        type=ComponentType.APPLICATION, name="horon-bundle", version=subject.tool_version,
        bom_ref="tool:horon-bundle")])
    timestamp = datetime.datetime.fromtimestamp(subject.epoch, tz=datetime.timezone.utc)

    bom = Bom(serial_number=_NIL_SERIAL, metadata=BomMetaData(
        component=root_component, timestamp=timestamp, tools=tools,
        properties=[Property(name="horon:graph-format", value="horon.graph.v1")]))
    document = _as_json(bom)  # the metadata, through the library
    # components and dependencies assembled here, in the order the library sorts them (its
    # sorted sets compare components field by field, n log n times; `Bom.register_dependency`
    # and `Bom.validate` scan the list per dependency): each component is still serialised by
    # the library, one at a time. All libraries, no group, a distinct package id as bom-ref:
    # the library's order is (name, version, id); dependencies by ref, each one's by ref.
    ordered = sorted((p for p in graph.packages.values() if p.id != graph.root),
                     key=lambda p: (p.name, p.version, p.id))
    if ordered:
        document["components"] = [_component_json(components[p.id]) for p in ordered]
    dependencies = []
    for package_id in sorted(graph.packages):
        entry: dict[str, Any] = {"ref": package_id}
        children = sorted({e.to for e in graph.out_edges(package_id)})
        if children:
            entry["dependsOn"] = children
        dependencies.append(entry)
    document["dependencies"] = dependencies
    # rendered once: the serial is the hash of the document with the nil serial, set after
    draft = canonical_value_bytes(document)
    document["serialNumber"] = uuid.uuid5(SERIAL_NAMESPACE, hashlib.sha256(draft).hexdigest()).urn
    return canonical_value_bytes(document)


def _component_json(component: Component) -> Any:
    """A component as the library writes it: the fields `_component` sets written here (its
    serialiser takes about half a millisecond a component), anything else by the library."""
    licences = [_licence_json(item) for item in component.licenses]
    if any(item is None for item in licences):
        text = component.as_json(view_=SchemaVersion1Dot6)  # type: ignore[attr-defined]
        return read_json(text.encode("utf-8"), source="cyclonedx output")
    document: dict[str, Any] = {"bom-ref": component.bom_ref.value, "name": component.name,
                                "type": component.type.value}
    if component.version is not None:
        document["version"] = component.version
    if component.purl is not None:
        document["purl"] = component.purl.to_string()
    if licences:
        document["licenses"] = licences
    if component.hashes:  # the library's sorted sets iterate in its order
        document["hashes"] = [{"alg": h.alg.value, "content": h.content}
                              for h in component.hashes]
    if component.properties:
        document["properties"] = [{"name": p.name, "value": p.value}
                                  for p in component.properties]
    return document


def _licence_json(item: object) -> dict[str, Any] | None:
    """An expression, or a licence named and nothing more (the shapes the tests pin against
    the library's own output); None for any other."""
    if isinstance(item, LicenseExpression) and item.acknowledgement is None:
        return {"expression": item.value}
    if (isinstance(item, DisjunctiveLicense) and item.id is None and item.text is None
            and item.url is None and item.acknowledgement is None and not item.properties):
        return {"license": {"name": item.name}}
    return None  # an SPDX id and the rest: as the library writes them


def _as_json(bom: Bom) -> dict[str, Any]:
    """The BOM as `JsonV1Dot6(bom).output_as_string()` writes it, but for its validation and
    bom-ref discriminator (each quadratic; every ref here is a distinct package id); the
    equality with the library's whole output is pinned by a test (tests/assets)."""
    text = bom.as_json(view_=SchemaVersion1Dot6)  # type: ignore[attr-defined]
    value = read_json(text.encode("utf-8"), source="cyclonedx output", max_bytes=1 << 30,
                      max_depth=64)
    assert isinstance(value, dict)
    value.update({"$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
                  "bomFormat": "CycloneDX", "specVersion": "1.6"})
    return value
