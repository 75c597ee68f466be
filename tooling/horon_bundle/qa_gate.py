"""Judging a resolved graph for QA providers, and naming the chain that pulled each one in."""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from horon_bundle.graph import Graph, GraphEdge, GraphPackage
from horon_bundle.qa import matching_pattern


@dataclass(frozen=True, slots=True, kw_only=True)
class QaProvider:
    package: str
    feature: str | None
    reason: str
    chain: str

    def to_json(self) -> dict[str, str | None]:
        return {"package": self.package, "feature": self.feature, "reason": self.reason,
                "chain": self.chain}


def find_qa_providers(graph: Graph, *, patterns: Iterable[str],
                      claim: Collection[str]) -> list[QaProvider]:
    """Every QA crate, QA-marked crate and QA feature compiled into the graph, with its chain."""
    patterns = tuple(patterns)
    parents = _shortest_paths(graph)
    found = []
    for package in sorted(graph.packages.values(), key=lambda p: p.id):
        path = _edges_to(parents, graph.root, package.id)
        pattern = matching_pattern(package.name, patterns)
        if pattern is not None or package.qa_marker:
            reason = (f"crate {package.name!r} matches QA pattern {pattern!r}" if pattern
                      else f"crate {package.name!r} is marked [package.metadata.horon] qa = true")
            found.append(QaProvider(package=package.id, feature=None, reason=reason,
                                    chain=explain(graph, path, claim, None)))
        for feature in package.all_compiled_features():
            pattern = matching_pattern(feature, patterns)
            if pattern is not None:
                found.append(QaProvider(
                    package=package.id, feature=feature,
                    reason=f"feature {feature!r} of {package.name!r} matches QA pattern "
                           f"{pattern!r}",
                    chain=explain(graph, path, claim, feature)))
    return found


def _shortest_paths(graph: Graph) -> dict[str, GraphEdge]:
    parents: dict[str, GraphEdge] = {}
    seen = {graph.root}
    queue = deque([graph.root])
    while queue:
        current = queue.popleft()
        for edge in graph.out_edges(current):
            if edge.to not in seen:
                seen.add(edge.to)
                parents[edge.to] = edge
                queue.append(edge.to)
    return parents


def _edges_to(parents: dict[str, GraphEdge], root: str, package_id: str) -> list[GraphEdge]:
    path: list[GraphEdge] = []
    current = package_id
    while current != root and current in parents:
        path.append(parents[current])
        current = parents[current].source
    return list(reversed(path))


def _feature_path(package: GraphPackage, entries: Collection[str],
                  goals: Collection[str]) -> list[str]:
    """Shortest walk through the package's feature table from an entry to a goal feature."""
    table = package.feature_table
    previous: dict[str, str | None] = {}
    queue: deque[str] = deque()
    for entry in sorted(entries):
        if entry in table or entry in goals:
            previous[entry] = None
            queue.append(entry)
    while queue:
        feature = queue.popleft()
        if feature in goals:
            walk = [feature]
            while (before := previous[walk[-1]]) is not None:
                walk.append(before)
            return list(reversed(walk))
        for entry in table.get(feature, ()):
            name = entry.split("/", 1)[0].rstrip("?") if "/" in entry else entry
            if name.startswith("dep:") or name not in table or name in previous:
                continue
            previous[name] = feature
            queue.append(name)
    return []


def _enabling_features(package: GraphPackage, dep_key: str) -> set[str]:
    enabling = {dep_key} if dep_key in package.feature_table else set()
    for feature, entries in package.feature_table.items():
        for entry in entries:
            if entry in (f"dep:{dep_key}", dep_key) or entry.startswith(f"{dep_key}/"):
                enabling.add(feature)
    return enabling


def explain(graph: Graph, path: list[GraphEdge], claim: Collection[str],
            feature: str | None) -> str:
    """E.g. `mail-plugin → mail-helper[default] → feature qa-provider → dep qa-mock`."""
    parts = [graph.root_package.name]
    entries: Collection[str] = claim

    def walk(package: GraphPackage, goals: Collection[str]) -> None:
        features = _feature_path(package, entries, goals)
        if features:
            parts[-1] += f"[{features[0]}]"
            parts.extend(f"feature {f}" for f in features[1:])

    for edge in path:
        package = graph.packages[edge.source]
        target = graph.packages[edge.to]
        if edge.optional:
            walk(package, _enabling_features(package, edge.dep_key))
            parts.append(f"dep {target.name}")
        else:
            parts.append(target.name)
        entries = set(edge.features) | ({"default"} if edge.default_features else set())
    if feature is not None:
        package = graph.packages[path[-1].to] if path else graph.root_package
        walk(package, {feature})
        if not parts[-1].endswith(f"[{feature}]") and not parts[-1].endswith(f"feature {feature}"):
            parts.append(f"feature {feature}")
    return " → ".join(parts)
