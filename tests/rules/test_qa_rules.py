"""The verifier's QA rules come from the verifier, never from the bundle it judges.

`verify`, `publish` and the audit policy apply the built-in patterns, plus those the bundle
recorded, plus the policy's own (`qa-patterns`); names are compared as crates.io compares
them (case-insensitive, `-` and `_` alike); and the QA judgement a bundle recorded is
recomputed from its graph and compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from horon_bundle.model.qa import BUILTIN_QA_PATTERNS, effective_patterns, name_matches
from horon_bundle.rules.policy import parse_policy
from tests.bundle_edit import byproduct_of, internal, rezip
from tests.conftest import BuiltExample
from tests.helpers import (
    HOST,
    REPO,
    assert_refused,
    cli,
    copy_bundle,
    edit_provenance,
    tree_snapshot,
)
from tests.publish_support import publish_env

pytestmark = pytest.mark.cargo


@pytest.mark.parametrize(("name", "pattern"), [
    ("horon-QA-mock", "*-qa-*"), ("horon_qa_mock", "*-qa-*"), ("QA", "qa"),
    ("Qa_Helper", "qa-*"), ("mail-QA", "*-qa"), ("acme_test_x", "acme-test-*"),
    ("ACME-TEST-x", "acme_test_*"), ("\uff51\uff41-mock", "qa-*"), ("horon-qa1", "*-qa[0-9]"),
])
def test_names_match_as_crates_io_compares_them(name: str, pattern: str) -> None:
    assert name_matches(name, pattern)


@pytest.mark.parametrize(("name", "pattern"), [
    ("quality", "qa*-x"), ("horon-qax", "*-qa"), ("aqa", "qa"), ("horon-qa", "*-qa[!a-z]"),
])
def test_names_that_do_not_match(name: str, pattern: str) -> None:
    assert not name_matches(name, pattern)


def test_no_one_can_remove_a_built_in_pattern() -> None:
    assert effective_patterns() == BUILTIN_QA_PATTERNS
    assert effective_patterns([], []) == BUILTIN_QA_PATTERNS
    assert effective_patterns(["QA_*"], ["acme-*"]) == (*BUILTIN_QA_PATTERNS, "acme-*")


def _insert_crate(name: str, *, patterns: list[str] | None) -> Any:
    def change(statement: dict[str, Any]) -> None:
        graph = byproduct_of(statement, "horon:graph")
        graph["packages"].append({
            "id": f"{name}@0.1.0", "name": name, "version": "0.1.0", "source": "path",
            "checksum": None, "license": "Apache-2.0", "qa_marker": False,
            "feature_table": {}, "compiled": {"target": []}})
        graph["edges"].append({
            "from": graph["root"], "to": f"{name}@0.1.0", "kinds": ["normal"],
            "dep_key": name, "optional": False, "default_features": True, "features": []})
        if patterns is not None:
            internal(statement)["qa"]["patterns"] = patterns
    return change


@pytest.mark.parametrize("crate", ["horon-qa-mock", "horon-QA-mock", "horon_qa_mock"])
def test_emptied_recorded_patterns_still_meet_the_built_in_ones(
        example_release: BuiltExample, tmp_path: Path, crate: str) -> None:
    """Rules from the bundle (docs/threat-model.md): `qa.patterns = []` and a QA crate in the
    graph."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, _insert_crate(crate, patterns=[]))
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "graph.qa-provider")
    [check] = [c for c in result.json()["checks"] if c["check"] == "graph.qa-free"]
    assert f"crate {crate!r} matches QA pattern '*-qa-*'" in check["findings"][0]["message"]
    assert tree_snapshot(tmp_path) == before


def test_publish_refuses_it_and_writes_nothing(example_release: BuiltExample,
                                               tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path / "edit")
    edit_provenance(bundle, _insert_crate("horon-QA-mock", patterns=[]))
    dist = tmp_path / "dist"
    dist.mkdir()
    rezip(bundle, dist / f"example-0.1.0-{HOST}.zip")
    store = tmp_path / "store"
    store.mkdir()
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, env=publish_env(f"file://{store}"))
    assert_refused(result, "graph.qa-provider")
    assert tree_snapshot(tmp_path) == before


def test_recorded_providers_are_recomputed(example_release: BuiltExample,
                                           tmp_path: Path) -> None:
    """A release bundle recording a provider its graph does not hold (or hiding one) is
    refused: the recorded judgement is recomputed from the recorded graph."""
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def invent(statement: dict[str, Any]) -> None:
        internal(statement)["qa"]["providers"] = [
            {"package": "ghost@0.1.0", "feature": None, "reason": "x", "chain": "x"}]

    edit_provenance(bundle, invent)
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "graph.qa-record")
    assert "records QA providers [('ghost@0.1.0', '')]; its graph" in result.stderr
    assert tree_snapshot(tmp_path) == before


def test_recorded_markers_are_recomputed(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def mark(statement: dict[str, Any]) -> None:
        internal(statement)["qa"]["markers"] = ["horon-example@0.1.0"]

    edit_provenance(bundle, mark)
    assert_refused(cli("verify", bundle), "graph.qa-record")


def test_a_qa_bundle_hiding_its_providers(tmp_path: Path, cargo_target_dir: Path) -> None:
    """A qa bundle may hold QA providers, but must say so: emptying the recorded list is
    refused even though the channel allows the providers themselves."""
    out = tmp_path / "out"
    fixture = Path(__file__).parent.parent / "fixtures" / "qa-default-chain"
    built = cli("build", fixture, "--channel", "qa", "--out", out, "--target-dir",
                cargo_target_dir)
    assert built.status == 0, built.stderr
    [bundle] = [p for p in out.iterdir() if p.is_dir()]
    assert cli("verify", bundle).status == 0
    edit_provenance(bundle, lambda s: internal(s)["qa"].__setitem__("providers", []))
    assert_refused(cli("verify", bundle), "graph.qa-record")


def test_the_policy_adds_patterns(example_release: BuiltExample, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('schema = 1\nqa-patterns = ["*-EXAMPLE"]\n')
    before = tree_snapshot(tmp_path)
    result = cli("verify", example_release.archive, "--policy", policy, "--json")
    assert_refused(result, "graph.qa-provider")
    [check] = [c for c in result.json()["checks"] if c["check"] == "graph.qa-free"]
    assert "crate 'horon-example' matches QA pattern '*-EXAMPLE'" in \
        check["findings"][0]["message"]
    assert check["note"] == "5 patterns: 4 built-in, 1 added by the bundle and the policy"
    assert tree_snapshot(tmp_path) == before
    # and the policy's own qa-free requirement judges with them too
    policy.write_text('schema = 1\nqa-free = true\nqa-patterns = ["horon-*"]\n')
    result = cli("verify", example_release.archive, "--policy", policy, "--json")
    assert result.status == 1
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["policy.qa-free"]["result"] == "fail"


@pytest.mark.parametrize("value", ["[]", '[""]', '["qa\\n"]', '["q\\u00e4"]', "[1]"])
def test_malformed_policy_patterns(tmp_path: Path, example_release: BuiltExample,
                                   value: str) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text(f"schema = 1\nqa-patterns = {value}\n")
    before = tree_snapshot(tmp_path)
    assert_refused(cli("verify", example_release.archive, "--policy", policy),
                   "policy.invalid", status=2)
    assert tree_snapshot(tmp_path) == before


def test_the_documented_policy_is_read_as_documented() -> None:
    """The example policy of docs/auditing.md parses, with the keys this page documents."""
    text = (REPO / "docs" / "auditing.md").read_text()
    block = text.split("## The policy file", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    policy = parse_policy(block.encode(), "audit-policy.toml")
    keys = {r.key for r in policy.requirements}
    assert {"qa-free", "require-abi-section", "channel", "builder-ids"} <= keys
    assert policy.qa_patterns == ("acme-test-*", "*-mock")


def test_patterns_the_bundle_records_are_applied_too(example_release: BuiltExample,
                                                     tmp_path: Path) -> None:
    """A bundle may add QA patterns (never remove one): a crate matching only its own pattern
    is a QA crate."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, _insert_crate("acme-double", patterns=["acme-*"]))
    result = cli("verify", bundle, "--json")
    assert_refused(result, "graph.qa-provider")
    [check] = [c for c in result.json()["checks"] if c["check"] == "graph.qa-free"]
    assert "crate 'acme-double' matches QA pattern 'acme-*'" in check["findings"][0]["message"]


# --- the recorded graph's strict decoder and its cycle check, judged directly ---------------
from horon_bundle.core.errors import Refused  # noqa: E402
from horon_bundle.model.graph import (  # noqa: E402
    Graph,
    GraphEdge,
    GraphPackage,
    find_cycle,
    graph_from_json,
)

_APP = "app@1.0.0"
_DEP = "dep@0.2.0"
_REGISTRY = "registry+https://github.com/rust-lang/crates.io-index"


def _package_doc(package_id: str, **change: Any) -> dict[str, Any]:
    name, version = package_id.split("@")
    package: dict[str, Any] = {
        "id": package_id, "name": name, "version": version, "source": "path", "checksum": None,
        "license": None, "qa_marker": False, "feature_table": {}, "compiled": {"target": []}}
    package.update(change)
    return package


def _edge_doc(source: str, to: str, **change: Any) -> dict[str, Any]:
    edge: dict[str, Any] = {"from": source, "to": to, "kinds": ["normal"], "dep_key": "dep",
                            "optional": False, "default_features": True, "features": []}
    edge.update(change)
    return edge


def _graph_doc() -> dict[str, Any]:
    """A root package and one registry dependency, every field away from its usual value."""
    return {
        "format": "horon.graph.v1", "root": _APP,
        "packages": [
            _package_doc(_APP, license="Apache-2.0", feature_table={"default": []},
                         compiled={"target": ["default"], "host": []}),
            _package_doc(_DEP, source=_REGISTRY, checksum="ab" * 32, license="MIT",
                         qa_marker=True, feature_table={"default": ["x"], "x": ["dep:y"]},
                         compiled={"target": ["default", "x"]}),
        ],
        "edges": [_edge_doc(_APP, _DEP, kinds=["normal", "build"], dep_key="dep-renamed",
                            optional=True, default_features=False, features=["x"])],
    }


def _refusals(value: object) -> list[tuple[str, str]]:
    with pytest.raises(Refused) as caught:
        graph_from_json(value, "g.json")
    return [(f.code.name, f.message) for f in caught.value.findings]


def test_a_recorded_graph_decodes_field_for_field() -> None:
    graph = graph_from_json(_graph_doc(), "g.json")
    assert graph == Graph(root=_APP, packages={
        _APP: GraphPackage(id=_APP, name="app", version="1.0.0", source="path", checksum=None,
                           license="Apache-2.0", qa_marker=False,
                           feature_table={"default": ()},
                           compiled={"target": ("default",), "host": ()}),
        _DEP: GraphPackage(id=_DEP, name="dep", version="0.2.0", source=_REGISTRY,
                           checksum="ab" * 32, license="MIT", qa_marker=True,
                           feature_table={"default": ("x",), "x": ("dep:y",)},
                           compiled={"target": ("default", "x")}),
    }, edges=(GraphEdge(source=_APP, to=_DEP, kinds=("normal", "build"), dep_key="dep-renamed",
                        optional=True, default_features=False, features=("x",)),))
    assert graph.to_json() == _graph_doc()


def test_an_omitted_checksum_or_licence_reads_as_null() -> None:
    """Only `checksum` and `license` may be left out (a path crate has neither): read as null,
    never a crash."""
    document = _graph_doc()
    del document["packages"][1]["checksum"], document["packages"][1]["license"]
    package = graph_from_json(document, "g.json").packages[_DEP]
    assert (package.checksum, package.license) == (None, None)


def _at(document: dict[str, Any], path: str) -> tuple[Any, Any]:
    """The container holding `path` (`packages.1.checksum`) and the key of it there."""
    *parents, last = (int(p) if p.isdigit() else p for p in path.split("."))
    target: Any = document
    for part in parents:
        target = target[part]
    return target, last


def _set(path: str, value: object) -> Any:
    """An edit of the valid graph: the value at `path` replaced (or added)."""
    def change(document: dict[str, Any]) -> None:
        target, key = _at(document, path)
        target[key] = value
    return change


def _delete(path: str) -> Any:
    def change(document: dict[str, Any]) -> None:
        target, key = _at(document, path)
        del target[key]
    return change


_UNKNOWN_DEP = "g.json: graph.edges[0]: edge to unknown package 'dep@0.2.0'"

_GRAPH_REFUSALS: list[tuple[str, Any, list[str]]] = [
    ("unknown-field", _set("extra", 1), ["g.json: graph.extra: unknown field"]),
    ("missing-field", _delete("edges"), ["g.json: graph.edges: required field is missing"]),
    ("format", _set("format", "horon.graph.v2"),
     ["g.json: graph.format: 'horon.graph.v2', expected 'horon.graph.v1'"]),
    ("root-unknown", _set("root", "ghost@1.0.0"),
     ["g.json: graph.root: 'ghost@1.0.0' is not a recorded package"]),
    ("package-not-object", lambda d: d["packages"].insert(0, 5),
     ["g.json: graph.packages[0]: expected an object, got 5"]),
    ("package-duplicate", lambda d: d["packages"].append(_package_doc("App@1.0.0")),
     ["g.json: graph.packages[2]: duplicate package id 'App@1.0.0'"]),
    ("package-unknown-field", _set("packages.1.extra", 1),
     ["g.json: graph.packages[1].extra: unknown field", _UNKNOWN_DEP]),
    *[(f"package-empty-{key}", _set(f"packages.1.{key}", ""),
       [f"g.json: graph.packages[1].{key}: an empty string where a name is required",
        _UNKNOWN_DEP]) for key in ("id", "name", "version", "source")],
    *[(f"edge-empty-{key}", _set(f"edges.0.{key}", ""),
       [f"g.json: graph.edges[0].{key}: an empty string where a name is required"])
      for key in ("from", "to", "dep_key")],
    ("package-missing-field", _delete("packages.1.qa_marker"),
     ["g.json: graph.packages[1].qa_marker: required field is missing", _UNKNOWN_DEP]),
    ("checksum", _set("packages.1.checksum", 5),
     ["g.json: graph.packages[1].checksum: not a string or null", _UNKNOWN_DEP]),
    ("license", _set("packages.1.license", ["MIT"]),
     ["g.json: graph.packages[1].license: not a string or null", _UNKNOWN_DEP]),
    ("feature-table-entry", _set("packages.1.feature_table.x", "dep:y"),
     ["g.json: graph.packages[1].feature_table.x: expected an array, got 'dep:y'",
      _UNKNOWN_DEP]),
    ("feature-table-item", _set("packages.1.feature_table.x", ["dep:y", 1]),
     ["g.json: graph.packages[1].feature_table.x[1]: expected a string, got 1", _UNKNOWN_DEP]),
    ("compiled-entry", _set("packages.1.compiled.target", None),
     ["g.json: graph.packages[1].compiled.target: null where an array is required",
      _UNKNOWN_DEP]),
    ("compiled-kind", _set("packages.1.compiled.dev", []),
     ["g.json: graph.packages[1].compiled: unknown kind 'dev'", _UNKNOWN_DEP]),
    ("edge-not-object", _set("edges.0", [_APP, _DEP]),
     ["g.json: graph.edges[0]: expected an object, got an array"]),
    ("edge-unknown-field", _set("edges.0.extra", 1),
     ["g.json: graph.edges[0].extra: unknown field"]),
    ("edge-missing-field", _delete("edges.0.dep_key"),
     ["g.json: graph.edges[0].dep_key: required field is missing"]),
    ("edge-wrong-type", _set("edges.0.optional", "false"),
     ["g.json: graph.edges[0].optional: expected a boolean, got 'false'"]),
    ("edge-feature", _set("edges.0.features", ["x", None]),
     ["g.json: graph.edges[0].features[1]: null where a string is required"]),
    ("edge-to-unknown", _set("edges.0.to", "ghost@1.0.0"),
     ["g.json: graph.edges[0]: edge to unknown package 'ghost@1.0.0'"]),
    ("edge-from-unknown", _set("edges.0.from", "ghost@1.0.0"),
     ["g.json: graph.edges[0]: edge to unknown package 'ghost@1.0.0'"]),
    ("self-edge", _set("edges.0.to", _APP), ["g.json: graph.edges[0]: self-edge on 'app@1.0.0'"]),
    ("kinds-dev", _set("edges.0.kinds", ["normal", "dev"]),
     ["g.json: graph.edges[0].kinds: ['normal', 'dev'] is not normal/build"]),
    ("kinds-empty", _set("edges.0.kinds", []),
     ["g.json: graph.edges[0].kinds: [] is not normal/build"]),
]


@pytest.mark.parametrize(("edit", "messages"), [(e, m) for _, e, m in _GRAPH_REFUSALS],
                         ids=[name for name, _, _ in _GRAPH_REFUSALS])
def test_a_malformed_graph_is_refused_naming_the_field(edit: Any, messages: list[str]) -> None:
    document = _graph_doc()
    edit(document)
    assert _refusals(document) == [("graph.invalid", m) for m in messages]


def test_every_problem_of_a_graph_is_reported() -> None:
    """A bad package does not stop the decoder: the packages and edges after it are read."""
    document = _graph_doc()
    document["format"] = "v0"
    document["packages"].insert(0, None)
    document["packages"][2]["checksum"] = 1
    document["edges"].append(_edge_doc(_APP, "ghost@1.0.0", kinds=["dev"]))
    assert _refusals(document) == [("graph.invalid", m) for m in [
        "g.json: graph.format: 'v0', expected 'horon.graph.v1'",
        "g.json: graph.packages[0]: null where an object is required",
        "g.json: graph.packages[2].checksum: not a string or null",
        _UNKNOWN_DEP,
        "g.json: graph.edges[1]: edge to unknown package 'ghost@1.0.0'",
        "g.json: graph.edges[1].kinds: ['dev'] is not normal/build",
    ]]


@pytest.mark.parametrize("value", [None, [], "graph", 1])
def test_a_graph_that_is_not_an_object(value: object) -> None:
    expected = ("null where an object is required" if value is None
                else f"expected an object, got {value!r}" if value != []
                else "expected an object, got an array")
    assert _refusals(value) == [("graph.invalid", f"g.json: graph: {expected}")]


@pytest.mark.slow
def test_the_size_limits_of_a_graph() -> None:
    """Over 10 000 packages or 200 000 edges is refused before any is read; at the limit each
    is read (here each is refused for what it is)."""
    over = [("graph.invalid", "g.json: graph over the size limit")]
    for packages, edges in ((10_001, 0), (0, 200_001), (10_001, 200_001)):
        document = _graph_doc()
        document["packages"] = [0] * packages
        document["edges"] = [0] * edges
        assert _refusals(document) == over
    document = _graph_doc()
    document["packages"] = [0] * 10_000
    found = _refusals(document)
    assert found[0] == ("graph.invalid", "g.json: graph.packages[0]: expected an object, got 0")
    assert len(found) == 10_000 + 3  # and the edge's two ends and the root are unknown
    document = _graph_doc()
    document["edges"] = [0] * 200_000
    found = _refusals(document)
    assert found[-1] == ("graph.invalid",
                         "g.json: graph.edges[199999]: expected an object, got 0")
    assert len(found) == 200_000


@pytest.mark.timeout(3)  # a broken cycle check may walk a cycle forever
def test_a_recorded_cycle_is_refused() -> None:
    document = _graph_doc()
    document["edges"].append(_edge_doc(_DEP, _APP))
    assert _refusals(document) == [
        ("graph.invalid", "g.json: cycle app@1.0.0 → dep@0.2.0 → app@1.0.0")]


def _bare_graph(ids: str, edges: str) -> Graph:
    """`_bare_graph("a b c", "a>b b>c")`: packages a, b, c; edges in that order."""
    packages = {i: GraphPackage(id=i, name=i, version="1.0.0", source="path", checksum=None,
                                license=None, qa_marker=False, feature_table={}, compiled={})
                for i in ids.split()}
    return Graph(root=next(iter(packages)), packages=packages, edges=tuple(
        GraphEdge(source=s, to=t, kinds=("normal",), dep_key=t, optional=False,
                  default_features=True, features=())
        for s, t in (pair.split(">") for pair in edges.split())))


@pytest.mark.timeout(3)  # a broken cycle check may walk a cycle forever
@pytest.mark.parametrize(("ids", "edges", "cycle"), [
    ("a b", "a>b b>a", "a b a"),
    ("a b c", "a>b b>c c>a", "a b c a"),
    # reached after a finished branch, and not through the start
    ("a b c d e", "a>b a>c c>d d>e e>c", "c d e c"),
    ("a b c d", "a>b b>c c>d d>b", "b c d b"),
    # a diamond, and a chain entered twice, are no cycle
    ("a b c d", "a>b a>c b>d c>d", ""),
    ("a b c d", "a>b b>c c>d a>c", ""),
    ("a b c d", "", ""),
    # several roots: the cycle only the last one reaches
    ("a b c d", "a>b c>d d>c", "c d c"),
    ("a b x y z", "a>b x>y y>b z>x y>z", "x y z x"),
    ("a b c d e", "a>b c>b d>e e>d", "d e d"),
])
def test_find_cycle_returns_the_cycle(ids: str, edges: str, cycle: str) -> None:
    assert find_cycle(_bare_graph(ids, edges)) == cycle.split()


# --- rules/features_and_qa.py: the feature closure and the plugin's compiled features ------
from horon_bundle.rules.features_and_qa import closure, plugin_features  # noqa: E402


def test_the_closure_of_a_claim_follows_every_feature_once() -> None:
    table = {"a": ["b", "dep:opt", "other/feature"], "b": [], "opt": ["dep:opt"]}
    # `b` is reached twice (claimed, and through `a`); `x` is in no table (a feature of
    # nothing the table says): each is in the closure, the implicit `opt` is not
    assert closure(["x", "a", "b"], table) == {"x", "a", "b"}
    assert closure(["b", "a"], table) == {"a", "b"}
    assert closure([], table) == set()
    assert closure(["opt"], table) == set()


def test_a_root_compiled_for_the_host_only_has_no_plugin_features() -> None:
    document = {"format": "horon.graph.v1", "root": "app@1.0.0", "edges": [], "packages": [
        {"id": "app@1.0.0", "name": "app", "version": "1.0.0", "source": "path",
         "qa_marker": False, "feature_table": {"f": []}, "compiled": {"host": ["f"]}}]}
    assert plugin_features(graph_from_json(document, "g.json")) == ()
    document["packages"][0]["compiled"] = {"target": ["f"], "host": []}  # type: ignore[index]
    assert plugin_features(graph_from_json(document, "g.json")) == ("f",)


@pytest.mark.timeout(5)  # re-walking finished packages is exponential in the diamonds
def test_a_ladder_of_diamonds_is_walked_once_per_package() -> None:
    """40 diamonds in a row (a > b, a > c, b > d, c > d, …): 2^40 paths, 121 packages; a
    package already judged is never walked again, so this takes milliseconds."""
    names = ["n0"]
    edges = []
    for step in range(40):
        top, left, right, bottom = names[-1], f"l{step}", f"r{step}", f"n{step + 1}"
        names += [left, right, bottom]
        edges += [f"{top}>{left}", f"{top}>{right}", f"{left}>{bottom}", f"{right}>{bottom}"]
    assert find_cycle(_bare_graph(" ".join(names), " ".join(edges))) == []
