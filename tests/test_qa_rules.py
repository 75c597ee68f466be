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
    """The attack of issue 10: `qa.patterns = []` and a QA crate in the graph."""
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
    fixture = Path(__file__).parent / "fixtures" / "qa-default-chain"
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
