"""The QA-provider gate on real cargo graphs, the qa channel, and the SBOM and notices.

Fixture workspaces (tests/fixtures/README.md) are built in place with --out and
--target-dir in temporary directories. Every refusal asserts the code, exit 1 and that no
bundle was left in the output directory.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator

from tests.gate_helpers import (
    QA_DEFAULT_CHAIN,
    QA_MEMBER_ONLY,
    QA_TRANSITIVE,
    assert_nothing_built,
    assert_refused_cleanly,
    build,
    byproducts,
    error_lines,
)
from tests.helpers import HOST, TEMPLATE, cli

pytestmark = pytest.mark.cargo

DEFAULT_CHAIN = "mail-plugin → mail-helper[default] → feature qa-provider → dep qa-mock"


@dataclass(frozen=True)
class QaBundle:
    out: Path
    bundle: Path
    archive: Path


def _qa_build(out: Path, target_dir: Path) -> QaBundle:
    result = build(QA_DEFAULT_CHAIN, out, target_dir, "--channel", "qa")
    assert result.status == 0, result.stderr
    name = f"mail-0.1.0-{HOST}-qa"
    return QaBundle(out=out, bundle=out / name, archive=out / f"{name}.zip")


@pytest.fixture(scope="module")
def qa_bundle(tmp_path_factory: pytest.TempPathFactory, cargo_target_dir: Path) -> QaBundle:
    return _qa_build(tmp_path_factory.mktemp("qa-chain"), cargo_target_dir)


# --- the default-features defect (docs/graph-and-qa.md) ------------------------------------
def test_default_features_of_a_dependency_reach_the_qa_crate(tmp_path: Path,
                                                            cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(QA_DEFAULT_CHAIN, out, cargo_target_dir)
    assert_refused_cleanly(result, "graph.qa-provider", out)
    assert set(result.codes) == {"graph.qa-provider"}
    lines = error_lines(result, "graph.qa-provider")
    assert f"ERROR graph.qa-provider: crate 'qa-mock' matches QA pattern 'qa-*': " \
           f"{DEFAULT_CHAIN}" in lines
    assert any(line.endswith("mail-plugin → mail-helper[default] → feature qa-provider")
               and "feature 'qa-provider' of 'mail-helper'" in line for line in lines)


def test_qa_channel_bundle_is_built_and_marked(qa_bundle: QaBundle) -> None:
    manifest = json.loads((qa_bundle.bundle / "plugin.json").read_text())
    assert manifest["channel"] == "qa"
    assert manifest["features"] == ["imap"]
    roles = {a["role"]: a["path"] for a in manifest["assets"]}
    assert roles == {"provenance": "provenance.json", "sbom": "sbom.cdx.json",
                     "notices": "THIRD-PARTY-NOTICES"}
    statement = json.loads((qa_bundle.bundle / "provenance.json").read_text())
    internal = statement["predicate"]["buildDefinition"]["internalParameters"]
    assert statement["predicate"]["buildDefinition"]["externalParameters"]["channel"] == "qa"
    chains = {(p["package"], p["feature"]): p["chain"] for p in internal["qa"]["providers"]}
    assert chains[("qa-mock@0.1.0", None)] == DEFAULT_CHAIN
    assert ("mail-helper@0.1.0", "qa-provider") in chains
    assert "qa-*" in internal["qa"]["patterns"]
    graph = byproducts(qa_bundle.bundle)["horon:graph"]
    helper = next(p for p in graph["packages"] if p["name"] == "mail-helper")
    assert helper["compiled"] == {"target": ["default", "qa-provider"]}


def test_qa_bundle_verifies_and_says_why_the_qa_check_is_skipped(qa_bundle: QaBundle) -> None:
    result = cli("verify", qa_bundle.archive, "--json")
    assert result.status == 0, result.stderr
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["graph.qa-free"]["result"] == "skip"
    assert "2 QA provider(s)" in checks["graph.qa-free"]["note"]
    assert checks["features.advertised"]["result"] == "pass"


# --- other graphs ----------------------------------------------------------------------------
@pytest.mark.slow
def test_qa_crate_two_hops_away(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(QA_TRANSITIVE, out, cargo_target_dir, "--plugin", "transitive")
    assert_refused_cleanly(result, "graph.qa-provider", out)
    assert error_lines(result, "graph.qa-provider") == [
        "ERROR graph.qa-provider: crate 'qa-harness' matches QA pattern 'qa-*': "
        "transitive-plugin → transitive-mid → transitive-deep → qa-harness"]


@pytest.mark.slow
def test_qa_marker_on_an_innocent_name(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(QA_TRANSITIVE, out, cargo_target_dir, "--plugin", "marked")
    assert_refused_cleanly(result, "graph.qa-provider", out)
    assert error_lines(result, "graph.qa-provider") == [
        "ERROR graph.qa-provider: crate 'telemetry-lite' is marked [package.metadata.horon] "
        "qa = true: marked-plugin → telemetry-lite"]


@pytest.mark.slow
def test_presence_in_the_workspace_is_not_reachability(tmp_path: Path,
                                                       cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(QA_MEMBER_ONLY, out, cargo_target_dir)
    assert result.status == 0, result.stderr
    bundle = out / f"clean-0.1.0-{HOST}"
    graph = byproducts(bundle)["horon:graph"]
    assert [p["name"] for p in graph["packages"]] == ["clean-plugin"]
    assert "qa-tools" not in (bundle / "sbom.cdx.json").read_text()
    assert cli("verify", bundle).status == 0


# --- SBOM and notices -------------------------------------------------------------------------
def _sbom(bundle: Path) -> dict[str, Any]:
    return json.loads((bundle / "sbom.cdx.json").read_text())  # type: ignore[no-any-return]


def test_sbom_is_valid_cyclonedx_1_6(qa_bundle: QaBundle) -> None:
    text = (qa_bundle.bundle / "sbom.cdx.json").read_text()
    assert JsonStrictValidator(SchemaVersion.V1_6).validate_str(text) is None
    sbom = json.loads(text)
    assert sbom["specVersion"] == "1.6"
    assert sbom["serialNumber"].startswith("urn:uuid:")


def test_sbom_components_purls_and_edges(qa_bundle: QaBundle) -> None:
    sbom = _sbom(qa_bundle.bundle)
    manifest = json.loads((qa_bundle.bundle / "plugin.json").read_text())
    root = sbom["metadata"]["component"]
    # path crates: no package URL (a crates.io identity would be someone else's crate)
    assert "purl" not in root
    assert root["hashes"] == [{"alg": "SHA-256", "content": manifest["library"]["sha256"]}]
    root_props = {p["name"]: p["value"] for p in root["properties"]}
    assert root_props["horon:channel"] == "qa"
    assert root_props["horon:features:target"] == "imap"
    assert root_props["horon:library"] == manifest["library"]["path"]
    components = {c["name"]: c for c in sbom["components"]}
    assert [c for c in components.values() if "purl" in c] == []
    assert components["mail-helper"]["licenses"] == [{"expression": "MIT OR Apache-2.0"}]
    helper = {p["name"]: p["value"] for p in components["mail-helper"]["properties"]}
    assert helper["horon:features:target"] == "default,qa-provider"
    assert helper["horon:qa-provider"].startswith("feature qa-provider via mail-plugin")
    mock = [p for p in components["qa-mock"]["properties"] if p["name"] == "horon:qa-provider"]
    assert mock == [{"name": "horon:qa-provider", "value": f"crate via {DEFAULT_CHAIN}"}]
    assert components["qa-mock"]["licenses"] == [{"expression": "Apache-2.0"}]
    edges = {d["ref"]: d.get("dependsOn", []) for d in sbom["dependencies"]}
    assert edges == {"mail-plugin@0.1.0": ["mail-helper@0.1.0"],
                     "mail-helper@0.1.0": ["qa-mock@0.1.0"], "qa-mock@0.1.0": []}


@pytest.mark.slow
def test_sbom_and_notices_are_deterministic(qa_bundle: QaBundle, tmp_path: Path) -> None:
    again = _qa_build(tmp_path / "again", tmp_path / "target")
    for name in ("sbom.cdx.json", "THIRD-PARTY-NOTICES"):
        assert (again.bundle / name).read_bytes() == (qa_bundle.bundle / name).read_bytes()
    statement = json.loads((again.bundle / "provenance.json").read_text())
    epoch = statement["predicate"]["buildDefinition"]["internalParameters"]["source_date_epoch"]
    expected = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    assert _sbom(again.bundle)["metadata"]["timestamp"] == expected.isoformat()


@pytest.mark.slow
def test_sbom_timestamp_follows_source_date_epoch(tmp_path: Path,
                                                  cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(QA_DEFAULT_CHAIN, out, cargo_target_dir, "--channel", "qa",
                   env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.status == 0, result.stderr
    sbom = _sbom(out / f"mail-0.1.0-{HOST}-qa")
    assert sbom["metadata"]["timestamp"] == "2023-11-14T22:13:20+00:00"


def test_notices_list_every_crate_of_the_graph(qa_bundle: QaBundle) -> None:
    notices = (qa_bundle.bundle / "THIRD-PARTY-NOTICES").read_text()
    graph = byproducts(qa_bundle.bundle)["horon:graph"]
    for package in graph["packages"]:
        assert f"{package['name']} {package['version']}" in notices
    assert "The plugin itself (mail-plugin 0.1.0, Apache-2.0): see LICENSE in this bundle." \
        in notices
    entry = notices.split("qa-mock 0.1.0\n", 1)[1]
    assert entry.startswith("License: Apache-2.0\nSource: path\nLinked into the library: yes")
    # Path members of the workspace have no licence file of their own: the root's applies.
    assert "LICENSE (from the workspace root):" in entry
    # a licence text shared by several crates is written once; the others point to it
    shared = "the same text as LICENSE of mail-helper 0.1.0 above."
    assert "Apache License" in (entry if shared not in entry else
                                notices.split("mail-helper 0.1.0\n", 1)[1])
    assert notices.count("Apache License, Version 2.0") <= 2  # the plugin's own, and one


def test_refused_build_leaves_no_scratch(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    result = build(QA_DEFAULT_CHAIN, out, cargo_target_dir)
    assert result.status == 1
    assert_nothing_built(out)


@pytest.mark.slow
def test_example_plugin_qa_bundle_is_marked(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(TEMPLATE, out, cargo_target_dir, "--channel", "qa")
    assert result.status == 0, result.stderr
    bundle = out / f"example-0.1.0-{HOST}-qa"
    manifest = json.loads((bundle / "plugin.json").read_text())
    assert manifest["channel"] == "qa"
    assert manifest["features"] == ["clock", "greeting", "qa-provider"]
    statement = json.loads((bundle / "provenance.json").read_text())
    providers = statement["predicate"]["buildDefinition"]["internalParameters"]["qa"]["providers"]
    assert [(p["feature"], p["chain"]) for p in providers] == [
        ("qa-provider", "horon-example[qa-provider]")]
    assert byproducts(bundle)["horon:advertised"]["observed_by"] == ["probe", "static-section"]
    root = _sbom(bundle)["metadata"]["component"]
    assert {"name": "horon:qa-provider", "value": "feature qa-provider via "
            "horon-example[qa-provider]"} in root["properties"]
    assert cli("verify", out / f"example-0.1.0-{HOST}-qa.zip").status == 0
