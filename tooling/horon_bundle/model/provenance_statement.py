"""The provenance statement a build writes (in-toto v1, SLSA provenance v1): the writing side
of `model/provenance.py`, which reads and judges it."""

from __future__ import annotations

from typing import Any

from horon_bundle.model.intoto import PREDICATE_TYPE, STATEMENT_TYPE
from horon_bundle.model.provenance import (
    BUILD_TYPE,
    BYPRODUCT_ADVERTISED,
    BYPRODUCT_GRAPH,
    BYPRODUCT_INVOCATION,
    BYPRODUCT_MEDIA_TYPES,
    BYPRODUCT_RECORD,
    BuildFacts,
    content_digest,
)


def statement(facts: BuildFacts, subjects: dict[str, str]) -> dict[str, Any]:
    """The statement for `subjects` (bundle path -> sha256) as a JSON-ready dict."""
    resolved: list[dict[str, Any]] = []
    if facts.source_revision is not None:
        resolved.append({"name": "source", "digest": {"gitCommit": facts.source_revision}})
    resolved.append({"name": "Cargo.lock", "digest": {"sha256": facts.cargo_lock_sha256}})
    resolved.append({"name": "horon-release.toml",
                     "digest": {"sha256": facts.declaration_sha256}})
    if facts.graph is not None:
        for package in sorted(facts.graph.packages.values(), key=lambda p: p.id):
            # a path crate has no purl and no checksum: it is part of the source above
            if package.purl is None and package.checksum is None:
                continue
            entry: dict[str, Any] = {"name": package.purl or f"{package.name}@{package.version}",
                                     "annotations": {"source": package.source}}
            if package.purl is not None:
                entry["uri"] = package.purl
            if package.checksum is not None:
                entry["digest"] = {"sha256": package.checksum}
            resolved.append(entry)
    byproducts: list[dict[str, Any]] = []

    def byproduct(name: str, content: dict[str, Any]) -> None:
        byproducts.append({"name": name, "mediaType": BYPRODUCT_MEDIA_TYPES[name],
                           "digest": {"sha256": content_digest(content)},
                           "annotations": content})

    if facts.invocation is not None:
        byproduct(BYPRODUCT_INVOCATION, facts.invocation.to_json())
    if facts.record is not None:
        byproduct(BYPRODUCT_RECORD, facts.record)
    if facts.graph is not None:
        byproduct(BYPRODUCT_GRAPH, facts.graph.to_json())
    if facts.advertised is not None:
        byproduct(BYPRODUCT_ADVERTISED, facts.advertised.to_json())
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": name, "digest": {"sha256": digest}}
                    for name, digest in sorted(subjects.items())],
        "predicateType": PREDICATE_TYPE,
        "predicate": {
            "buildDefinition": {
                "buildType": BUILD_TYPE,
                "externalParameters": {
                    "plugin": facts.plugin_id, "package": facts.package,
                    "version": facts.version, "target": facts.target,
                    "profile": facts.profile, "channel": facts.channel,
                    "claim": list(facts.claim),
                    "declaration": {"path": "horon-release.toml",
                                    "digest": {"sha256": facts.declaration_sha256}},
                    "source": {"revision": facts.source_revision, "dirty": facts.source_dirty},
                },
                "internalParameters": {
                    "features": list(facts.features),
                    "evidence": facts.evidence,
                    "source_date_epoch": facts.source_date_epoch,
                    "qa": {"patterns": list(facts.qa_patterns),
                           "markers": list(facts.qa_markers),
                           "providers": [p.to_json() for p in facts.qa_providers]},
                },
                "resolvedDependencies": resolved,
            },
            "runDetails": {
                "builder": {"id": facts.builder_id,
                            "version": {"horon-bundle": facts.tool_version}},
                "byproducts": byproducts,
            },
        },
    }
