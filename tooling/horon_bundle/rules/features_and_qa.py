"""The release rules: may this resolved graph, with this claim, be released?

One rule set, pure (models in, findings out), shared by a fresh build, a prebuilt library
bound by its record, `verify`, `publish` and the audit policy:
- **features**: plugin.json `features` is the plugin package's compiled feature set, which
  must equal the closure of the claim under the package's own `[features]` table (`dep:`
  entries, `x/y` entries and cargo's implicit optional-dependency features excluded on both
  sides); anything else is `features.drift`;
- **QA providers**: every crate or compiled feature matching a QA pattern, and every crate
  marked `[package.metadata.horon] qa = true`, anywhere in the graph, named with the chain of
  packages and features that pulled it in (e.g. `mail-plugin → mail-helper[default] →
  feature qa-provider → dep qa-mock`); a release refuses them (`graph.qa-provider`);
- **advertised = claimed**: the library's advertised features, id, ABI major and wire
  schema against plugin.json (`features.mismatch`, `abi.metadata`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Protocol

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.model.evidence import Advertised
from horon_bundle.model.graph import Graph, GraphEdge, GraphPackage
from horon_bundle.model.qa import QaProvider, effective_patterns, pattern_matcher


class RecordedQa(Protocol):
    """What a provenance records of its QA judgement (`model.provenance.BuildFacts`)."""

    @property
    def claim(self) -> tuple[str, ...]: ...

    @property
    def qa_patterns(self) -> tuple[str, ...]: ...

    @property
    def qa_markers(self) -> tuple[str, ...]: ...

    @property
    def qa_providers(self) -> tuple[QaProvider, ...]: ...


# --- features ------------------------------------------------------------------------------
def implicit_features(table: Mapping[str, Iterable[str]]) -> set[str]:
    return {key for key, entries in table.items() if list(entries) == [f"dep:{key}"]}


def closure(claim: Iterable[str], table: Mapping[str, Iterable[str]]) -> set[str]:
    implicit = implicit_features(table)
    result: set[str] = set()
    stack = list(claim)
    while stack:
        feature = stack.pop()
        if feature in result:
            continue
        result.add(feature)
        for entry in table.get(feature, ()):
            if entry.startswith("dep:") or "/" in entry:
                continue
            stack.append(entry)
    return result - implicit


def proper(features: Iterable[str], table: Mapping[str, Iterable[str]]) -> tuple[str, ...]:
    """`features` without the implicit optional-dependency ones, sorted by byte order."""
    implicit = implicit_features(table)
    return tuple(sorted((f for f in set(features) if f not in implicit),
                        key=lambda f: f.encode("utf-8")))


# --- QA providers and their chains -------------------------------------------------
def find_qa_providers(graph: Graph, *, patterns: Iterable[str],
                      claim: Collection[str]) -> list[QaProvider]:
    """Every QA crate, QA-marked crate and QA feature compiled into the graph, with its chain."""
    matching = pattern_matcher(patterns)
    parents: dict[str, GraphEdge] | None = None  # walked once, when the first provider needs it
    found = []
    for package in sorted(graph.packages.values(), key=lambda p: p.id):
        pattern = matching(package.name)
        features = [(f, p) for f in package.all_compiled_features()
                    if (p := matching(f)) is not None]
        if pattern is None and not package.qa_marker and not features:
            continue  # the chain is walked for the providers only: linear in the graph
        parents = _shortest_paths(graph) if parents is None else parents
        path = _edges_to(parents, graph.root, package.id)
        if pattern is not None or package.qa_marker:
            reason = (f"crate {package.name!r} matches QA pattern {pattern!r}" if pattern
                      else f"crate {package.name!r} is marked [package.metadata.horon] qa = true")
            found.append(QaProvider(package=package.id, feature=None, reason=reason,
                                    chain=explain(graph, path, claim, None)))
        for feature, feature_pattern in features:
            found.append(QaProvider(
                package=package.id, feature=feature,
                reason=f"feature {feature!r} of {package.name!r} matches QA pattern "
                       f"{feature_pattern!r}",
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
    """The features whose own entries turn the optional dependency `dep_key` on.

    A bare `dep_key` entry names the dependency only while no feature of that name is declared
    but its implicit one (cargo: once `dep:` is written, the name is a feature's alone, and
    the walk follows it like any other feature); a feature of that name enables nothing by
    its name alone.
    """
    table = package.feature_table
    bare = dep_key not in table or dep_key in implicit_features(table)
    enabling: set[str] = set()
    for feature, entries in table.items():
        for entry in entries:
            if (entry == f"dep:{dep_key}" or entry.startswith(f"{dep_key}/")
                    or (bare and entry == dep_key)):
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


# --- the gates ---------------------------------------------------------------------------
def plugin_features(graph: Graph) -> tuple[str, ...]:
    """The plugin package's compiled features for the target: plugin.json `features`."""
    root = graph.root_package
    return proper(root.compiled.get("target", ()), root.feature_table)


def graph_findings(graph: Graph, *, claim: Sequence[str], channel: str,
                   patterns: Sequence[str]) -> tuple[list[QaProvider], list[Finding]]:
    """QA providers of the graph, and the findings: QA providers in a release, drift."""
    findings = Findings()
    providers = find_qa_providers(graph, patterns=patterns, claim=claim)
    if channel == "release":
        for provider in providers:
            findings.add(codes.GRAPH_QA_PROVIDER, f"{provider.reason}: {provider.chain}")
    root = graph.root_package
    compiled = set(plugin_features(graph))
    expected = closure(claim, root.feature_table)
    if compiled != expected:
        extra = sorted(compiled - expected)
        lacking = sorted(expected - compiled)
        findings.add(codes.FEATURES_DRIFT,
                     f"{root.name} compiled {sorted(compiled)}; the claim {list(claim)} closes to "
                     f"{sorted(expected)}" + (f" (extra: {extra})" if extra else "")
                     + (f" (missing: {lacking})" if lacking else ""))
    return providers, list(findings)


def recorded_qa_findings(graph: Graph, facts: RecordedQa,
                         found: Sequence[QaProvider] | None = None) -> list[Finding]:
    """The QA judgement a bundle recorded, recomputed from its recorded graph.

    The build judged the graph with the built-in patterns and those it recorded, and wrote
    down what it found (`qa.providers`) and which crates were marked (`qa.markers`): both are
    recomputed here with the same patterns and must agree, so a provenance cannot hide a
    provider it found, or invent markers, while keeping the graph that shows them. `found`:
    the providers already found with exactly `effective_patterns(facts.qa_patterns)`.
    """
    findings = Findings()
    patterns = effective_patterns(facts.qa_patterns)
    if found is None:  # a caller that judged with these very patterns hands its providers in
        found = find_qa_providers(graph, patterns=patterns, claim=facts.claim)
    recomputed = sorted((p.package, p.feature or "") for p in found)
    recorded = sorted((p.package, p.feature or "") for p in facts.qa_providers)
    if recomputed != recorded:
        findings.add(codes.GRAPH_QA_RECORD,
                     f"provenance.json records QA providers {recorded}; its graph, judged with "
                     f"the same {len(patterns)} patterns, holds {recomputed}")
    markers = sorted(p.id for p in graph.packages.values() if p.qa_marker)
    if sorted(facts.qa_markers) != markers:
        findings.add(codes.GRAPH_QA_RECORD,
                     f"provenance.json records QA-marked crates {sorted(facts.qa_markers)}; its "
                     f"graph marks {markers}")
    return list(findings)


def judge_graph(graph: Graph, *, claim: Sequence[str], channel: str,
                patterns: Sequence[str]) -> list[QaProvider]:
    """Refuse a release graph with a QA provider (naming each chain) or with drift."""
    providers, findings = graph_findings(graph, claim=claim, channel=channel, patterns=patterns)
    if findings:
        raise Refused(findings)
    return providers


def advertised_findings(advertised: Advertised, *, features: Sequence[str],
                        plugin_id: str, who: str = "the library") -> list[Finding]:
    """Claimed = advertised; `who` names where the advertised metadata was read from."""
    findings = Findings()
    if tuple(advertised.features) != tuple(features):
        findings.add(codes.FEATURES_MISMATCH,
                     f"{who} advertises {list(advertised.features)}, plugin.json would "
                     f"list {list(features)} (compiled)")
    if advertised.plugin_id != plugin_id:
        findings.add(codes.ABI_METADATA,
                     f"{who} advertises plugin id {advertised.plugin_id!r}, declared "
                     f"{plugin_id!r}")
    if advertised.abi_major != 1:
        findings.add(codes.ABI_METADATA, f"{who} advertises ABI major "
                                         f"{advertised.abi_major}, bundles are ABI v1")
    if advertised.wire_schema != "horon.wire.v1":
        findings.add(codes.ABI_METADATA,
                     f"{who} advertises wire schema {advertised.wire_schema!r}")
    return list(findings)


def check_advertised(advertised: Advertised, *, features: Sequence[str], plugin_id: str) -> None:
    findings = advertised_findings(advertised, features=features, plugin_id=plugin_id)
    if findings:
        raise Refused(findings)
