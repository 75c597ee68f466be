"""`horon-bundle inspect`: what a bundle holds, read through the verifier, never around it."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.inspection.view import MAX_TREE_DEPTH, _graph
from horon_bundle.model.graph import Graph, GraphEdge, GraphPackage
from tests.conftest import BuiltExample
from tests.gate_helpers import QA_DEFAULT_CHAIN
from tests.helpers import HOST, cli

pytestmark = pytest.mark.cargo


def test_inspect_shows_identity_evidence_graph_and_digests(example_release: BuiltExample
                                                           ) -> None:
    result = cli("inspect", example_release.archive, "--json")
    assert result.status == 0, result.stderr
    text = result.stderr
    assert f"example 0.1.0  {HOST}  release  verified" in text
    assert "  features    clock, greeting" in text
    assert "  evidence    invocation" in text
    assert "  invocation  cargo build --locked --lib -p horon-example --no-default-features" in \
        text
    assert "graph (1 package, 0 QA providers)" in text
    document = result.json()
    assert document["format"] == "horon.inspect-report.v1" and document["ok"] is True
    bundle = example_release.bundle
    files = {f["path"]: f for f in document["files"]}
    assert set(files) == {str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file()}
    for name, entry in files.items():
        data = (bundle / name).read_bytes()
        assert (entry["size"], entry["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
        assert f"  sha256 {entry['sha256']}" in text
    tree = document["provenance"]["graph"]["tree"]
    assert (tree["name"], tree["features"], tree["qa"]) == ("horon-example",
                                                            ["clock", "greeting"], [])


@pytest.mark.slow
def test_qa_providers_are_marked_in_the_tree(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    built = cli("build", QA_DEFAULT_CHAIN, "--out", out, "--target-dir", cargo_target_dir,
                "--channel", "qa")
    assert built.status == 0, built.stderr
    bundle = next(p for p in out.iterdir() if p.is_dir() and p.name.endswith("-qa"))
    result = cli("inspect", bundle, "--json")
    assert result.status == 0, result.stderr
    assert "qa" in result.stderr.split("\n", 1)[0]  # the channel, on the first line
    marked = [line for line in result.stderr.splitlines() if "QA provider:" in line]
    assert any(line.lstrip(" │├└─").startswith("qa-mock 0.1.0") for line in marked), marked
    assert any(line.lstrip(" │├└─").startswith("mail-helper 0.1.0") for line in marked), marked
    tree = result.json()["provenance"]["graph"]["tree"]
    helper = next(c for c in tree["children"] if c["name"] == "mail-helper")
    assert any("qa-provider" in reason for reason in helper["qa"])
    mock = next(c for c in helper["children"] if c["name"] == "qa-mock")
    assert mock["qa"] and "matches QA pattern" in mock["qa"][0]


def test_a_refused_bundle_is_still_shown_and_refused(example_release: BuiltExample,
                                                     tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(example_release.bundle, bundle)
    library = next((bundle / "lib").iterdir())
    library.write_bytes(library.read_bytes() + b"tampered")
    result = cli("inspect", bundle, "--json")
    assert result.status == 1
    assert "refused" in result.stderr.splitlines()[0]
    assert "checksum.mismatch" in result.codes
    document = result.json()
    assert document["ok"] is False and document["bundle"]["id"] == "example"
    assert {f["code"] for f in document["findings"]} >= {"checksum.mismatch"}
    assert "Traceback" not in result.stderr


def test_what_is_not_a_bundle_is_refused(tmp_path: Path) -> None:
    result = cli("inspect", tmp_path / "nothing-here", "--json")
    assert result.status == 1
    assert result.json()["bundle"] is None
    assert "input.unreadable" in result.codes


def _chain(length: int) -> Graph:
    packages = {f"p{i}": GraphPackage(
        id=f"p{i}", name=f"p{i}", version="1.0.0", source="path", checksum=None, license=None,
        qa_marker=False, feature_table={}, compiled={"target": ()}) for i in range(length)}
    edges = tuple(GraphEdge(source=f"p{i}", to=f"p{i + 1}", kinds=("normal",), dep_key=f"p{i + 1}",
                            optional=False, default_features=True, features=())
                  for i in range(length - 1))
    return Graph(root="p0", packages=packages, edges=edges)


@pytest.mark.slow
def test_a_deep_graph_is_cut_not_a_crash() -> None:
    from horon_bundle.model.provenance import BuildFacts  # noqa: PLC0415

    facts = BuildFacts(
        plugin_id="x", package="p0", version="1.0.0", target=HOST, profile="release",
        channel="release", claim=(), features=(), declaration_sha256="0" * 64,
        source_revision=None, source_dirty=None, source_date_epoch=0, qa_patterns=(),
        qa_markers=(), qa_providers=(), evidence="invocation", invocation=None, record=None,
        record_sha256=None, graph=None, advertised=None, cargo_lock_sha256="0" * 64,
        builder_id="b", tool_version="0")
    shown = _graph(_chain(5000), facts)
    assert shown["cut"] is True and shown["packages"] == 5000
    depth, node = 0, shown["tree"]
    while node["children"]:
        node, depth = node["children"][0], depth + 1
    assert depth == MAX_TREE_DEPTH
    json.dumps(shown)  # plain data all the way down


def test_a_large_recorded_graph_is_searched_once_for_verify_and_inspect(
        example_release: BuiltExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The QA providers of a recorded graph are found once per run: graph.qa-free's search
    also serves the recorded-judgement check and inspect's tree (a graph of 10,000 packages
    was searched three times by inspect)."""
    from benchmarks.graphs import reseal  # noqa: PLC0415

    from horon_bundle.model import qa  # noqa: PLC0415
    from horon_bundle.rules import features_and_qa  # noqa: PLC0415

    bundle = reseal(example_release.bundle, tmp_path / "big", 300, 900)
    searches: list[int] = []
    real = qa.pattern_matcher

    def counted(patterns: Any) -> Any:
        searches.append(1)
        return real(patterns)

    monkeypatch.setattr(features_and_qa, "pattern_matcher", counted)
    result = cli("inspect", bundle, "--json")
    assert result.status == 0, result.stderr
    graph = result.json()["provenance"]["graph"]
    assert (graph["packages"], graph["edges"], graph["qa_providers"]) == (300, 900, [])
    assert len(searches) == 1
