"""Resolving the feature graph from cargo's own output: metadata edges + compiled units.

Packages are those reachable from the plugin package over normal and build edges of
`cargo metadata` (never dev edges, never mere workspace membership) that cargo actually
compiled, with the features cargo compiled them with per compile kind (from the
`compiler-artifact` messages) and their checksums from Cargo.lock. The result is the pure
`model.graph.Graph` that provenance records and every judge re-reads.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from pathlib import Path

from horon_bundle.cargo.invocation import CompiledUnit
from horon_bundle.cargo.metadata import DependencyDecl, Metadata, Package
from horon_bundle.core import codes
from horon_bundle.core.inputs import read_input
from horon_bundle.core.tomlread import read_toml
from horon_bundle.model.graph import PATH_SOURCE, Graph, GraphEdge, GraphPackage

MAX_LOCK_BYTES = 64 << 20


def lock_checksums(lock_path: Path) -> dict[tuple[str, str, str | None], str]:
    """(name, version, source) -> checksum, from Cargo.lock (metadata has no checksums)."""
    data = read_input(lock_path, limit=MAX_LOCK_BYTES, what="Cargo.lock")
    assert data is not None
    document = read_toml(data, source=lock_path.name, code=codes.CARGO_OUTPUT,
                         max_bytes=MAX_LOCK_BYTES)
    result = {}
    for entry in document.get("package", []):
        if "checksum" in entry:
            result[(entry["name"], entry["version"], entry.get("source"))] = entry["checksum"]
    return result


def _stable_ids(packages: Iterable[Package]) -> dict[str, str]:
    """cargo's package ids hold absolute paths; the graph uses name@version instead."""
    by_key: dict[str, list[Package]] = {}
    for package in packages:
        by_key.setdefault(f"{package.name}@{package.version}", []).append(package)
    ids = {}
    for key, group in by_key.items():
        for index, package in enumerate(sorted(group, key=lambda p: p.source or "")):
            ids[package.id] = key if index == 0 else f"{key}+{index}"
    return ids


def _declaration_for(package: Package, target: Package, dep_name: str) -> DependencyDecl | None:
    candidates = [d for d in package.dependencies if d.name == target.name and d.kind != "dev"]
    for decl in candidates:
        if decl.key.replace("-", "_") == dep_name:
            return decl
    return candidates[0] if candidates else None


def build_graph(*, metadata: Metadata, plugin: Package, units: Iterable[CompiledUnit],
                checksums: dict[tuple[str, str, str | None], str]) -> Graph:
    compiled: dict[str, dict[str, set[str]]] = {}
    for unit in units:
        compiled.setdefault(unit.package_id, {}).setdefault(unit.kind, set()).update(unit.features)
    reachable = [plugin.id]
    queue = deque([plugin.id])
    raw_edges: list[tuple[str, str, tuple[str, ...], DependencyDecl | None]] = []
    while queue:
        current = queue.popleft()
        for edge in metadata.edges.get(current, ()):
            kinds = tuple(k for k in edge.kinds if k in ("normal", "build"))
            if not kinds or edge.to not in compiled:
                continue
            decl = _declaration_for(metadata.packages[current], metadata.packages[edge.to],
                                    edge.dep_name)
            raw_edges.append((current, edge.to, kinds, decl))
            if edge.to not in reachable:
                reachable.append(edge.to)
                queue.append(edge.to)
    ids = _stable_ids(metadata.packages[p] for p in reachable)
    packages = {}
    for package_id in reachable:
        package = metadata.packages[package_id]
        license_ = package.license
        if license_ is None and package.license_file is not None:
            license_ = f"LicenseRef-file:{package.license_file}"
        packages[ids[package_id]] = GraphPackage(
            id=ids[package_id], name=package.name, version=package.version,
            source=package.source or PATH_SOURCE,
            checksum=checksums.get((package.name, package.version, package.source)),
            license=license_, qa_marker=package.qa_marker,
            feature_table=dict(package.features),
            compiled={k: tuple(sorted(v)) for k, v in compiled.get(package_id, {}).items()})
    edges = tuple(sorted(
        (GraphEdge(source=ids[a], to=ids[b], kinds=kinds,
                   dep_key=decl.key if decl else metadata.packages[b].name,
                   optional=decl.optional if decl else False,
                   default_features=decl.uses_default_features if decl else True,
                   features=tuple(sorted(decl.features)) if decl else ())
         for a, b, kinds, decl in raw_edges),
        key=lambda e: (e.source, e.to, e.kinds)))
    return Graph(root=ids[plugin.id], packages=packages, edges=edges)
