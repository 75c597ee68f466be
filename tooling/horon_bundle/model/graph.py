"""The resolved feature graph: what was compiled into the library, and why.

Packages are those reachable from the plugin package over normal and build edges of
`cargo metadata` (never dev edges, never mere workspace membership) that cargo actually
compiled; each carries the features cargo compiled it with per compile kind (from the
`compiler-artifact` messages), its checksum from Cargo.lock and its own feature table (so a
chain can be explained from the recorded graph alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader
from horon_bundle.model.crate_origin import crate_origin

GRAPH_FORMAT = "horon.graph.v1"
MAX_PACKAGES = 10_000
MAX_EDGES = 200_000
PATH_SOURCE = "path"


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphPackage:
    id: str
    name: str
    version: str
    source: str
    checksum: str | None
    license: str | None
    qa_marker: bool
    feature_table: dict[str, tuple[str, ...]]
    compiled: dict[str, tuple[str, ...]]  # compile kind -> features

    @property
    def purl(self) -> str | None:
        """Its package URL: a crates.io identity only for crates from crates.io."""
        return crate_origin(self.name, self.version, self.source).purl

    def all_compiled_features(self) -> tuple[str, ...]:
        return tuple(sorted({f for features in self.compiled.values() for f in features}))


@dataclass(frozen=True, slots=True, kw_only=True)
class GraphEdge:
    source: str
    to: str
    kinds: tuple[str, ...]
    dep_key: str
    optional: bool
    default_features: bool
    features: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Graph:
    root: str
    packages: dict[str, GraphPackage]
    edges: tuple[GraphEdge, ...]
    # each package's edges, in the order of `edges`: a walk is linear in the graph
    _out: dict[str, list[GraphEdge]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        out: dict[str, list[GraphEdge]] = {}
        for edge in self.edges:
            out.setdefault(edge.source, []).append(edge)
        object.__setattr__(self, "_out", out)

    @property
    def root_package(self) -> GraphPackage:
        return self.packages[self.root]

    def out_edges(self, package_id: str) -> Sequence[GraphEdge]:
        """The package's edges in the order of `edges` (the index's own list: read only)."""
        return self._out.get(package_id, ())

    def to_json(self) -> dict[str, Any]:
        return {
            "format": GRAPH_FORMAT,
            "root": self.root,
            "packages": [
                {"id": p.id, "name": p.name, "version": p.version, "source": p.source,
                 "checksum": p.checksum, "license": p.license, "qa_marker": p.qa_marker,
                 "feature_table": {k: list(v) for k, v in sorted(p.feature_table.items())},
                 "compiled": {k: list(v) for k, v in sorted(p.compiled.items())}}
                for p in sorted(self.packages.values(), key=lambda p: p.id)],
            "edges": [
                {"from": e.source, "to": e.to, "kinds": list(e.kinds), "dep_key": e.dep_key,
                 "optional": e.optional, "default_features": e.default_features,
                 "features": list(e.features)}
                for e in self.edges],
        }


# --- reading a recorded graph back -------------------------------------------------------
def graph_from_json(value: object, source: str) -> Graph:
    """Strictly decode a recorded graph and check it is a well-formed DAG rooted at `root`."""
    findings = Findings()
    reader = FieldReader(source, findings, codes.GRAPH_INVALID, codes.GRAPH_INVALID,
                         codes.GRAPH_INVALID)
    document = reader.typed(value, dict, "graph")
    if document is None:
        raise Refused(findings)
    document = dict(document)
    fmt = reader.take(document, "format", str, "graph")
    root = reader.take(document, "root", str, "graph")
    raw_packages = reader.take(document, "packages", list, "graph") or []
    raw_edges = reader.take(document, "edges", list, "graph") or []
    reader.finish(document, "graph")
    if fmt is not None and fmt != GRAPH_FORMAT:
        reader.report(codes.GRAPH_INVALID, "graph.format", f"{fmt!r}, expected {GRAPH_FORMAT!r}")
    if len(raw_packages) > MAX_PACKAGES or len(raw_edges) > MAX_EDGES:
        raise Refused.one(codes.GRAPH_INVALID, f"{source}: graph over the size limit")
    packages: dict[str, GraphPackage] = {}
    folded: set[str] = set()
    for index, raw in enumerate(raw_packages):
        package = _package_fast(raw) or _package(reader, raw, f"graph.packages[{index}]")
        if package is None:
            continue
        if package.id.casefold() in folded:
            reader.report(codes.GRAPH_INVALID, f"graph.packages[{index}]",
                          f"duplicate package id {package.id!r}")
        folded.add(package.id.casefold())
        packages[package.id] = package
    edges = [e for i, raw in enumerate(raw_edges)
             if (e := _edge_fast(raw, packages)
                 or _edge(reader, raw, f"graph.edges[{i}]", packages)) is not None]
    if root is not None and root not in packages:
        reader.report(codes.GRAPH_INVALID, "graph.root", f"{root!r} is not a recorded package")
    findings.raise_if_any()
    assert root is not None
    graph = Graph(root=root, packages=packages, edges=tuple(edges))
    cycle = find_cycle(graph)
    if cycle:
        raise Refused.one(codes.GRAPH_INVALID, f"{source}: cycle {' → '.join(cycle)}")
    return graph


# --- the fast path: a well-formed entry checked by plain comparisons (a graph of 10,000
# packages is tens of thousands of entries); anything else goes to the field reader, which
# says what is wrong. Each accepts exactly what the field reader accepts without a finding.
_PACKAGE_REQUIRED = frozenset({"id", "name", "version", "source", "qa_marker", "feature_table",
                               "compiled"})
_PACKAGE_KEYS = _PACKAGE_REQUIRED | {"checksum", "license"}
_EDGE_KEYS = frozenset({"from", "to", "kinds", "dep_key", "optional", "default_features",
                        "features"})
_COMPILE_KINDS = frozenset({"target", "host"})
_EDGE_KINDS = frozenset({"normal", "build"})


_STR: frozenset[type] = frozenset({str})
_LIST: frozenset[type] = frozenset({list})


def _names(value: object) -> bool:
    return type(value) is str and value != ""


def _string_list(value: object) -> bool:
    return type(value) is list and set(map(type, value)) <= _STR


def _feature_lists(value: object) -> bool:
    """A dict of lists of strings (the types gathered by C loops: no call per item)."""
    return (type(value) is dict and set(map(type, value.values())) <= _LIST
            and set(map(type, chain.from_iterable(value.values()))) <= _STR)


def _package_fast(raw: object) -> GraphPackage | None:
    if type(raw) is not dict or not _PACKAGE_REQUIRED <= raw.keys() <= _PACKAGE_KEYS:
        return None
    checksum, license_ = raw.get("checksum"), raw.get("license")
    table, compiled = raw["feature_table"], raw["compiled"]
    if not (_names(raw["id"]) and _names(raw["name"]) and _names(raw["version"])
            and _names(raw["source"]) and type(raw["qa_marker"]) is bool
            and (checksum is None or type(checksum) is str)
            and (license_ is None or type(license_) is str)
            and _feature_lists(table) and _feature_lists(compiled)
            and compiled.keys() <= _COMPILE_KINDS):
        return None
    return GraphPackage(id=raw["id"], name=raw["name"], version=raw["version"],
                        source=raw["source"], checksum=checksum, license=license_,
                        qa_marker=raw["qa_marker"],
                        feature_table={k: tuple(v) for k, v in table.items()},
                        compiled={k: tuple(v) for k, v in compiled.items()})


def _edge_fast(raw: object, packages: dict[str, GraphPackage]) -> GraphEdge | None:
    if type(raw) is not dict or raw.keys() != _EDGE_KEYS:
        return None
    source, to, kinds = raw["from"], raw["to"], raw["kinds"]
    if not (_names(source) and _names(to) and source in packages and to in packages
            and source != to and _string_list(kinds) and kinds
            and set(kinds) <= _EDGE_KINDS and _names(raw["dep_key"])
            and type(raw["optional"]) is bool and type(raw["default_features"]) is bool
            and _string_list(raw["features"])):
        return None
    return GraphEdge(source=source, to=to, kinds=tuple(kinds), dep_key=raw["dep_key"],
                     optional=raw["optional"], default_features=raw["default_features"],
                     features=tuple(raw["features"]))


def _package(reader: FieldReader, raw: object, where: str) -> GraphPackage | None:
    obj = reader.typed(raw, dict, where)
    if obj is None:
        return None
    obj = dict(obj)
    before = len(reader.findings)
    package_id = reader.take_text(obj, "id", where)
    name = reader.take_text(obj, "name", where)
    version = reader.take_text(obj, "version", where)
    source = reader.take_text(obj, "source", where)
    checksum = obj.pop("checksum", None)
    license_ = obj.pop("license", None)
    qa_marker = reader.take(obj, "qa_marker", bool, where)
    table = reader.take(obj, "feature_table", dict, where) or {}
    compiled = reader.take(obj, "compiled", dict, where) or {}
    reader.finish(obj, where)
    if checksum is not None and not isinstance(checksum, str):
        reader.report(codes.GRAPH_INVALID, f"{where}.checksum", "not a string or null")
    if license_ is not None and not isinstance(license_, str):
        reader.report(codes.GRAPH_INVALID, f"{where}.license", "not a string or null")
    feature_table = {k: tuple(reader.strings(reader.typed(v, list, f"{where}.feature_table.{k}"),
                                             f"{where}.feature_table.{k}") or ())
                     for k, v in table.items()}
    compiled_features = {k: tuple(reader.strings(reader.typed(v, list, f"{where}.compiled.{k}"),
                                                 f"{where}.compiled.{k}") or ())
                         for k, v in compiled.items()}
    for kind in compiled_features:
        if kind not in ("target", "host"):
            reader.report(codes.GRAPH_INVALID, f"{where}.compiled", f"unknown kind {kind!r}")
    if len(reader.findings) != before:
        return None
    assert package_id is not None and name is not None and version is not None
    assert source is not None and qa_marker is not None
    return GraphPackage(id=package_id, name=name, version=version, source=source,
                        checksum=checksum, license=license_, qa_marker=qa_marker,
                        feature_table=feature_table, compiled=compiled_features)


def _edge(reader: FieldReader, raw: object, where: str,
          packages: dict[str, GraphPackage]) -> GraphEdge | None:
    obj = reader.typed(raw, dict, where)
    if obj is None:
        return None
    obj = dict(obj)
    before = len(reader.findings)
    source = reader.take_text(obj, "from", where)
    to = reader.take_text(obj, "to", where)
    kinds = reader.strings(reader.take(obj, "kinds", list, where), f"{where}.kinds")
    dep_key = reader.take_text(obj, "dep_key", where)
    optional = reader.take(obj, "optional", bool, where)
    default_features = reader.take(obj, "default_features", bool, where)
    features = reader.strings(reader.take(obj, "features", list, where), f"{where}.features")
    reader.finish(obj, where)
    for end in (source, to):
        if end is not None and end not in packages:
            reader.report(codes.GRAPH_INVALID, where, f"edge to unknown package {end!r}")
    if source is not None and source == to:
        reader.report(codes.GRAPH_INVALID, where, f"self-edge on {source!r}")
    if kinds is not None and (not kinds or not set(kinds) <= {"normal", "build"}):
        reader.report(codes.GRAPH_INVALID, f"{where}.kinds", f"{kinds} is not normal/build")
    if len(reader.findings) != before:
        return None
    assert source is not None and to is not None and kinds is not None
    assert dep_key is not None and features is not None
    assert optional is not None and default_features is not None
    return GraphEdge(source=source, to=to, kinds=tuple(kinds), dep_key=dep_key,
                     optional=optional, default_features=default_features,
                     features=tuple(features))


def find_cycle(graph: Graph) -> list[str]:
    """A cycle in the edges, as a list of ids, or [] (cargo's normal/build graph is a DAG)."""
    state: dict[str, int] = {}
    for start in sorted(graph.packages):
        if state.get(start):
            continue
        stack: list[tuple[str, int]] = [(start, 0)]
        path: list[str] = []
        while stack:
            node, index = stack.pop()
            if index == 0:
                state[node] = 1
                path.append(node)
            kids = graph.out_edges(node)
            if index < len(kids):
                stack.append((node, index + 1))
                child = kids[index].to
                if state.get(child) == 1:
                    return [*path[path.index(child):], child]
                if not state.get(child):
                    stack.append((child, 0))
            else:
                state[node] = 2
                path.pop()
    return []
