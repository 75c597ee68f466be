"""Synthetic resolved graphs of any size, resealed into a real bundle: the graph-scale rows.

A real build records the graph cargo resolved; building a workspace of 10,000 crates takes
longer than a bench may, so the bench takes a bundle the real `horon-bundle build` made and
reseals it with a generated graph: the graph byproduct, the resolved dependencies, the
byproduct digests, provenance.json's asset entry in plugin.json and SHA256SUMS are rewritten
consistently, so `verify` judges the big graph exactly as it would a built one (a release
with no QA provider: every check runs and passes).

The graph is a DAG rooted at the plugin package (every package reachable, edges only from a
lower to a higher index), deterministic for a given size (seeded), with feature tables,
compiled features, optional and build edges in the proportions of a real crates.io graph.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import zipfile
from pathlib import Path
from typing import Any

REGISTRY = "registry+https://github.com/rust-lang/crates.io-index"


def graph_document(root: dict[str, Any], packages: int, edges: int,
                   seed: int = 24) -> dict[str, Any]:
    """A horon.graph.v1 document: `root` (the plugin package, kept as built) and
    `packages - 1` generated crates joined by `edges` edges."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible shape, not a secret
    nodes = [root]
    for index in range(1, packages):
        name = f"crate-{index:05d}"
        optional_dep = f"opt-{index:05d}"
        nodes.append({
            "id": f"{name}@1.{index % 7}.{index % 13}", "name": name,
            "version": f"1.{index % 7}.{index % 13}", "source": REGISTRY,
            "checksum": hashlib.sha256(name.encode()).hexdigest(),
            "license": "MIT OR Apache-2.0", "qa_marker": False,
            "feature_table": {"default": ["std"], "std": ["alloc"], "alloc": [],
                              "extra": [f"dep:{optional_dep}"]},
            "compiled": {"target": ["alloc", "default", "std"]},
        })
    pairs: set[tuple[int, int]] = set()
    for index in range(1, packages):  # a spanning tree first: every package reachable
        pairs.add((rng.randrange(index), index))
    limit = packages * (packages - 1) // 2
    while len(pairs) < min(edges, limit):
        a, b = sorted(rng.sample(range(packages), 2))
        pairs.add((a, b))
    edge_list = []
    for a, b in sorted(pairs):
        target = nodes[b]
        build = rng.random() < 0.05
        edge_list.append({
            "from": nodes[a]["id"], "to": target["id"],
            "kinds": ["build"] if build else ["normal"], "dep_key": target["name"],
            "optional": False, "default_features": rng.random() < 0.8,
            "features": ["std"] if rng.random() < 0.3 else []})
    return {"format": "horon.graph.v1", "root": root["id"], "packages": nodes,
            "edges": edge_list}


def _canonical(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()


def _content_digest(content: Any) -> str:
    text = json.dumps(content, sort_keys=True, indent=2, ensure_ascii=True) + "\n"
    return hashlib.sha256(text.encode()).hexdigest()


def reseal(bundle: Path, out: Path, packages: int, edges: int) -> Path:
    """A copy of the bundle directory `bundle` at `out`, its recorded graph replaced by a
    generated one of `packages` packages and `edges` edges, every binding rewritten."""
    shutil.copytree(bundle, out)
    provenance_path = out / "provenance.json"
    statement = json.loads(provenance_path.read_text())
    predicate = statement["predicate"]
    [graph_item] = [b for b in predicate["runDetails"]["byproducts"]
                    if b["name"] == "horon:graph"]
    old = graph_item["annotations"]
    [root] = [p for p in old["packages"] if p["id"] == old["root"]]
    graph = graph_document(root, packages, edges)
    graph_item["annotations"] = graph
    graph_item["digest"]["sha256"] = _content_digest(graph)
    resolved = [d for d in predicate["buildDefinition"]["resolvedDependencies"]
                if not d["name"].startswith("pkg:cargo/")]
    for package in sorted(graph["packages"], key=lambda p: p["id"]):
        purl = f"pkg:cargo/{package['name']}@{package['version']}"
        entry: dict[str, Any] = {"name": purl, "uri": purl,
                                 "annotations": {"source": package["source"]}}
        if package["checksum"] is not None:
            entry["digest"] = {"sha256": package["checksum"]}
        resolved.append(entry)
    predicate["buildDefinition"]["resolvedDependencies"] = resolved
    data = _canonical(statement)
    provenance_path.write_bytes(data)
    manifest_path = out / "plugin.json"
    manifest = json.loads(manifest_path.read_text())
    for asset in manifest["assets"]:
        if asset["path"] == "provenance.json":
            asset["sha256"] = hashlib.sha256(data).hexdigest()
            asset["size"] = len(data)
    manifest_path.write_bytes(_canonical(manifest))
    sums = out / "SHA256SUMS"
    lines = []
    for line in sums.read_text().splitlines():
        name = line.split("  ", 1)[1]
        if name in ("provenance.json", "plugin.json"):
            lines.append(f"{hashlib.sha256((out / name).read_bytes()).hexdigest()}  {name}")
        else:
            lines.append(line)
    sums.write_text("".join(line + "\n" for line in lines))
    return out


def zipped(bundle: Path) -> Path:
    """The resealed directory as a zip beside it (entries in SHA256SUMS order, deflated)."""
    archive = bundle.with_name(bundle.name + ".zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as writer:
        for path in sorted(p for p in bundle.rglob("*") if p.is_file()):
            writer.write(path, f"{bundle.name}/{path.relative_to(bundle).as_posix()}")
    return archive
