"""The CycloneDX rendering behind `sbom.build_sbom` (kept apart: cyclonedx is heavy)."""

from __future__ import annotations

import datetime
import hashlib
import uuid
from collections.abc import Iterable, Sequence

from cyclonedx.model import HashAlgorithm, HashType, Property
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.license import DisjunctiveLicense, LicenseExpression
from cyclonedx.model.tool import ToolRepository
from cyclonedx.output.json import JsonV1Dot6
from packageurl import PackageURL

from horon_bundle.assets.sbom_subject import SERIAL_NAMESPACE, SbomSubject
from horon_bundle.assets.spdx_expression import spdx_expression
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.graph import Graph, GraphPackage
from horon_bundle.model.qa import QaProvider

_NIL_SERIAL = uuid.UUID(int=0)


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

    def render(serial: uuid.UUID) -> bytes:
        bom = Bom(serial_number=serial, metadata=BomMetaData(
            component=root_component, timestamp=timestamp, tools=tools,
            properties=[Property(name="horon:graph-format", value="horon.graph.v1")]))
        for component in components.values():
            bom.components.add(component)
        everything = {graph.root: root_component, **components}
        for package_id, component in everything.items():
            children = sorted({e.to for e in graph.out_edges(package_id)})
            bom.register_dependency(component, [everything[c] for c in children])
        text = JsonV1Dot6(bom).output_as_string()
        return canonical_bytes(read_json(text.encode("utf-8"), source="cyclonedx output",
                                         max_bytes=1 << 30, max_depth=64))

    draft = render(_NIL_SERIAL)
    serial = uuid.uuid5(SERIAL_NAMESPACE, hashlib.sha256(draft).hexdigest())
    return render(serial)
