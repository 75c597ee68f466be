"""A fact the verifier can recompute is recomputed; where it cannot, the report says so.

- the library's `.horon_abi` section: a recorded claim that the advertised metadata was read
  from it is checked against the library (a stripped section is refused), and the report says
  which source the verdict rests on (`advertised_source`); `require-abi-section` refuses a
  library without one;
- a record-evidence bundle: the graph, advertised metadata and source facts of the
  provenance must be those of its embedded artifact record.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.bundle_edit import byproduct_of, replace_library
from tests.conftest import BuiltExample
from tests.helpers import (
    assert_refused,
    cli,
    copy_bundle,
    edit_provenance,
    tree_snapshot,
)

pytestmark = pytest.mark.cargo
LIBRARY = "lib/libhoron_example.so"


def _stripped(example_release: BuiltExample, tmp_path: Path) -> Path:
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        pytest.fail("objcopy (binutils) is needed")
    bundle = copy_bundle(example_release.bundle, tmp_path)
    stripped = tmp_path / "stripped.so"
    subprocess.run([objcopy, "--remove-section", ".horon_abi", str(bundle / LIBRARY),
                    str(stripped)], check=True)
    replace_library(bundle, stripped.read_bytes())
    stripped.unlink()
    return bundle


def test_a_stripped_section_is_not_silently_replaced_by_the_record(
        example_release: BuiltExample, tmp_path: Path) -> None:
    """All digests fixed, the section gone: the provenance still says the metadata was read
    from the section (observed_by holds static-section), which the library now contradicts."""
    bundle = _stripped(example_release, tmp_path)
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle, "--json")
    assert_refused(result, "abi.section-missing")
    assert result.json()["advertised_source"] == "recorded-only"
    assert tree_snapshot(tmp_path) == before


def _claim_probe_only(statement: dict[str, Any]) -> None:
    byproduct_of(statement, "horon:advertised")["observed_by"] = ["probe"]


def test_recorded_only_metadata_is_reported_and_a_policy_can_refuse_it(
        example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = _stripped(example_release, tmp_path / "b")
    edit_provenance(bundle, _claim_probe_only)
    plain = cli("verify", bundle, "--json")
    assert plain.status == 0, plain.stderr
    checks = {c["check"]: c for c in plain.json()["checks"]}
    assert checks["features.advertised"]["note"].startswith("source: recorded-only")
    assert plain.json()["advertised_source"] == "recorded-only"

    policy = tmp_path / "policy.toml"
    policy.write_text("schema = 1\nrequire-abi-section = true\n")
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle, "--policy", policy, "--json")
    assert_refused(result, "policy.unmet")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["policy.require-abi-section"]["result"] == "fail"
    assert "no .horon_abi section" in checks["policy.require-abi-section"]["findings"][0][
        "message"]
    assert tree_snapshot(tmp_path) == before


def test_require_abi_section_is_met_by_a_library_with_one(example_release: BuiltExample,
                                                          tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("schema = 1\nrequire-abi-section = true\n")
    result = cli("verify", example_release.archive, "--policy", policy, "--json")
    assert result.status == 0, result.stderr
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["policy.require-abi-section"]["result"] == "pass"


def _qa_crate(graph: dict[str, Any]) -> None:
    graph["packages"].append({
        "id": "qa-mock@0.1.0", "name": "qa-mock", "version": "0.1.0", "source": "path",
        "checksum": None, "license": "Apache-2.0", "qa_marker": False, "feature_table": {},
        "compiled": {"target": []}})
    graph["edges"].append({
        "from": graph["root"], "to": "qa-mock@0.1.0", "kinds": ["normal"], "dep_key": "qa-mock",
        "optional": False, "default_features": True, "features": []})


def test_a_qa_crate_only_in_the_records_graph(record_example: BuiltExample, tmp_path: Path) -> None:
    """The library was built with the record's graph; the provenance graph cannot stand in
    for it."""
    assert cli("verify", record_example.bundle).status == 0
    bundle = copy_bundle(record_example.bundle, tmp_path)
    edit_provenance(bundle, lambda s: _qa_crate(byproduct_of(s, "horon:artifact-record")
                                                ["graph"]))
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "evidence.mismatch")
    assert "the recorded graph is not the graph of its artifact record" in result.stderr
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize(("field", "value"), [
    ("package", "horon-other"), ("version", "9.9.9"),
])
def test_provenance_facts_must_be_the_records(record_example: BuiltExample, tmp_path: Path,
                                              field: str, value: str) -> None:
    bundle = copy_bundle(record_example.bundle, tmp_path)
    edit_provenance(bundle, lambda s: byproduct_of(s, "horon:artifact-record")
                    .__setitem__(field, value))
    result = cli("verify", bundle)
    assert_refused(result, "evidence.mismatch")
    assert f"provenance.json: {field} " in result.stderr


def test_advertised_metadata_must_be_the_records(record_example: BuiltExample,
                                                tmp_path: Path) -> None:
    bundle = copy_bundle(record_example.bundle, tmp_path)
    edit_provenance(bundle, lambda s: byproduct_of(s, "horon:artifact-record")["advertised"]
                    .__setitem__("abi_minor", 7))
    result = cli("verify", bundle)
    assert_refused(result, "evidence.mismatch")
    assert "its artifact record says plugin_id='example' abi=1.7" in result.stderr
