"""What `inspect` shows: a bundle's identity, evidence, graph and digests, as one document.

The bundle is verified first (every rule of `verify`), and the document carries the verdict:
`inspect` reads facts from the same strict decoders, never from a file it did not judge. The
graph is shown as a tree from the plugin package (a package reached again is marked `seen`
instead of repeated, as `cargo tree` does), each QA provider flagged with its reason — found
with the built-in QA patterns plus the recorded ones, never fewer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from horon_bundle.model import qa
from horon_bundle.model.graph import Graph
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.provenance import BuildFacts
from horon_bundle.rules.features_and_qa import find_qa_providers
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.report import VerifyReport

INSPECT_FORMAT = "horon.inspect-report.v1"
MAX_TREE_NODES = 2_000  # a tree this large or deep is cut (and says so): the recorded graph is
MAX_TREE_DEPTH = 100  # bounded and acyclic, but a hostile one may still be a long chain


def inspect_path(path: Path) -> tuple[VerifyReport, dict[str, Any]]:
    report = verify_path(path)
    return report, inspection(report)


def inspection(report: VerifyReport) -> dict[str, Any]:
    facts = report.provenance.facts if report.provenance is not None else None
    return {
        "format": INSPECT_FORMAT,
        "path": report.path,
        "ok": report.ok,
        "findings": [f.to_dict() for f in report.findings],
        "bundle": None if report.manifest is None else _bundle(report.manifest),
        "files": [{"path": name, "sha256": digest.sha256, "size": digest.size}
                  for name, digest in sorted(report.digests.items())],
        "provenance": None if facts is None else _provenance(facts, report),
    }


def _file(path: str, sha256: str, size: int) -> dict[str, Any]:
    return {"path": path, "sha256": sha256, "size": size}


def _bundle(manifest: Manifest) -> dict[str, Any]:
    library, license_ = manifest.library, manifest.license
    return {
        "id": manifest.id, "name": manifest.name, "version": manifest.version,
        "target": manifest.target, "profile": manifest.profile, "channel": manifest.channel,
        "abi": {"major": manifest.abi_major, "minor": manifest.abi_minor},
        "wire_schema": manifest.wire_schema, "features": list(manifest.features),
        "library": _file(library.path, library.sha256, library.size),
        "license": {"spdx": license_.spdx,
                    **_file(license_.file.path, license_.file.sha256, license_.file.size)},
        "assets": [{"role": a.role, **_file(a.file.path, a.file.sha256, a.file.size)}
                   for a in manifest.assets],
        "sidecars": [{"name": s.name, "executable": s.executable,
                      **_file(s.file.path, s.file.sha256, s.file.size)}
                     for s in manifest.sidecars],
    }


def _provenance(facts: BuildFacts, report: VerifyReport) -> dict[str, Any]:
    invocation = facts.invocation
    return {
        "builder_id": facts.builder_id,
        "tool_version": facts.tool_version,
        "evidence": facts.evidence,
        "claim": list(facts.claim),
        "features": list(facts.features),
        "source": {"revision": facts.source_revision, "dirty": facts.source_dirty},
        "source_date_epoch": facts.source_date_epoch,
        "cargo_lock_sha256": facts.cargo_lock_sha256,
        "invocation": None if invocation is None else {
            "argv": list(invocation.argv), "env": dict(invocation.env),
            "toolchain": dict(invocation.toolchain), "exit_status": invocation.exit_status},
        "record_sha256": facts.record_sha256,
        "advertised": None if facts.advertised is None else facts.advertised.to_json(),
        "qa_patterns": list(qa.effective_patterns(facts.qa_patterns)),
        "graph": None if facts.graph is None else _graph(facts.graph, facts, report),
    }


def _graph(graph: Graph, facts: BuildFacts, report: VerifyReport | None = None) -> dict[str, Any]:
    patterns = qa.effective_patterns(facts.qa_patterns)
    # the verify's own search, when it used these very patterns: the graph is searched once
    providers = None if report is None else report.qa_providers
    if providers is None or report is None or report.qa_patterns != patterns:
        providers = tuple(find_qa_providers(graph, patterns=patterns, claim=facts.claim))
    reasons: dict[str, list[str]] = {}
    for provider in providers:
        reasons.setdefault(provider.package, []).append(provider.reason)
    seen: set[str] = set()
    budget = [MAX_TREE_NODES]
    cut = [False]

    def node(package_id: str, kinds: tuple[str, ...], depth: int) -> dict[str, Any]:
        package = graph.packages[package_id]
        entry: dict[str, Any] = {
            "id": package.id, "name": package.name, "version": package.version,
            "source": package.source, "kinds": list(kinds),
            "features": list(package.all_compiled_features()),
            "qa": reasons.get(package.id, []), "seen": package.id in seen, "children": []}
        budget[0] -= 1
        if package.id in seen:
            return entry
        if budget[0] <= 0 or depth >= MAX_TREE_DEPTH:
            cut[0] = True
            return entry
        seen.add(package.id)
        for edge in sorted(graph.out_edges(package_id),
                           key=lambda e: (graph.packages[e.to].name, e.to)):
            entry["children"].append(node(edge.to, edge.kinds, depth + 1))
        return entry

    tree = node(graph.root, (), 0)
    return {"root": graph.root, "packages": len(graph.packages), "edges": len(graph.edges),
            "qa_providers": [p.to_json() for p in providers], "tree": tree, "cut": cut[0]}
