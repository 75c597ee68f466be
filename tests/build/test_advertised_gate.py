"""Claimed = compiled = advertised at build time: the child-process probe and the static
section, on the abi-faults fixture crates (built in place with real cargo)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gate_helpers import (
    ABI_FAULTS,
    assert_refused_cleanly,
    build,
    byproducts,
    error_lines,
)
from tests.helpers import HOST, cli

pytestmark = pytest.mark.cargo


@pytest.mark.slow
def test_hard_coded_advertised_list(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-advertise")
    assert_refused_cleanly(result, "features.mismatch", out)
    assert error_lines(result, "features.mismatch") == [
        "ERROR features.mismatch: the library advertises ['clock', 'greeting'], plugin.json "
        "would list [] (compiled)"]


@pytest.mark.slow
def test_static_section_disagrees_with_the_handshake(tmp_path: Path,
                                                     cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-section")
    assert_refused_cleanly(result, "abi.section-mismatch", out)
    [line] = error_lines(result, "abi.section-mismatch")
    assert "the handshake advertises plugin_id='fault-section'" in line
    assert "features=[]" in line
    assert "the .horon_abi section says" in line and "features=['clock']" in line


@pytest.mark.slow
def test_feature_closure_is_accepted(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "closure")
    assert result.status == 0, result.stderr
    bundle = out / f"closure-0.1.0-{HOST}"
    manifest = json.loads((bundle / "plugin.json").read_text())
    assert manifest["features"] == ["a", "b"]
    statement = json.loads((bundle / "provenance.json").read_text())
    assert statement["predicate"]["buildDefinition"]["externalParameters"]["claim"] == ["a"]
    advertised = byproducts(bundle)["horon:advertised"]
    assert advertised["features"] == ["a", "b"]
    assert advertised["observed_by"] == ["probe", "static-section"]


@pytest.mark.slow
@pytest.mark.parametrize(("plugin", "code", "says"), [
    ("fault-segv", "abi.crash", "killed by SIGSEGV during the handshake"),
    ("fault-hang-handshake", "abi.timeout", "killed during the handshake"),
])
def test_probe_faults_are_refusals_and_leave_no_temp_files(
        tmp_path: Path, cargo_target_dir: Path, plugin: str, code: str, says: str) -> None:
    out = tmp_path / "out"
    temp = tmp_path / "tmp"
    temp.mkdir()
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", plugin,
                   "--probe-timeout", "3", env={"TMPDIR": str(temp)})
    assert_refused_cleanly(result, code, out)
    [line] = error_lines(result, code)
    assert says in line
    assert sorted(p.name for p in temp.iterdir() if p.name.startswith("horon-child-")) == []


@pytest.mark.slow
def test_the_tool_survives_a_crashing_library(tmp_path: Path, cargo_target_dir: Path) -> None:
    """After a refused crash the same process-free tool still builds a good library."""
    out = tmp_path / "out"
    crashed = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-segv")
    assert crashed.status == 1
    fine = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-none")
    assert fine.status == 0, fine.stderr
    assert cli("verify", out / f"fault-none-0.1.0-{HOST}").status == 0


# --- verify: the advertised metadata judged from the section and the recorded claim -------
import hashlib  # noqa: E402
from typing import Any  # noqa: E402

from tests.conftest import BuiltExample  # noqa: E402
from tests.gate_helpers import resign_provenance  # noqa: E402
from tests.helpers import CliResult, copy_bundle, edit_manifest, rewrite_listing  # noqa: E402

LIBRARY = "lib/libhoron_example.so"


def _verified(bundle: Path) -> tuple[CliResult, dict[str, Any]]:
    result = cli("verify", bundle, "--json")
    assert "INTERNAL ERROR" not in result.stderr, result.stderr
    return result, {c["check"]: c for c in result.json()["checks"]}


def _relibrary(bundle: Path, data: bytes) -> None:
    """Swap the library's bytes and re-declare them: the section is judged on these."""
    (bundle / LIBRARY).write_bytes(data)
    rewrite_listing(bundle, LIBRARY)
    edit_manifest(bundle, lambda m: m["library"].update(
        sha256=hashlib.sha256(data).hexdigest(), size=len(data)))


def test_verify_says_the_section_agrees_with_the_recorded_observers(
        example_release: BuiltExample) -> None:
    result, checks = _verified(example_release.bundle)
    assert result.status == 0, result.stderr
    check = checks["features.advertised"]
    assert check["result"] == "pass"
    assert check["note"] == ("source: section (read from the library's .horon_abi section); "
                             "agrees with the metadata recorded at build time (probe, "
                             "static-section)")


def test_verify_names_each_source_of_disagreeing_advertised_metadata(
        example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def change(statement: dict[str, Any]) -> None:
        for item in statement["predicate"]["runDetails"]["byproducts"]:
            if item["name"] == "horon:advertised":
                item["annotations"]["features"] = ["clock"]

    resign_provenance(bundle, change)
    result, checks = _verified(bundle)
    assert result.status == 1
    check = checks["features.advertised"]
    assert check["result"] == "fail"
    found = {f["code"]: f["message"] for f in check["findings"]}
    assert sorted(found) == ["abi.section-mismatch", "features.mismatch"]
    assert found["features.mismatch"] == (
        "the advertised metadata recorded in provenance.json (probe, static-section) "
        "advertises ['clock'], plugin.json would list ['clock', 'greeting'] (compiled)")
    assert found["abi.section-mismatch"].startswith(
        f"{LIBRARY}: the .horon_abi section says ")
    assert found["abi.section-mismatch"].endswith(" (probe, static-section) at build time")


def test_verify_refuses_a_section_stripped_after_the_build(
        example_release: BuiltExample, tmp_path: Path) -> None:
    from tests.verify.test_recomputed_facts import _stripped  # noqa: PLC0415 - objcopy's strip

    result, checks = _verified(_stripped(example_release, tmp_path))
    assert result.status == 1
    check = checks["features.advertised"]
    assert [f["code"] for f in check["findings"]] == ["abi.section-missing"]
    assert check["findings"][0]["message"].startswith(
        f"{LIBRARY}: provenance.json records the advertised metadata as read from the "
        "library's .horon_abi section, but the library has no such section")
    assert check["note"] == (
        "source: recorded-only (no .horon_abi section: the advertised metadata recorded at "
        "build time (probe, static-section), not recomputed)")
    assert result.json()["advertised_source"] == "recorded-only"


def test_verify_reports_a_malformed_section_under_the_advertised_check(
        example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    data = (bundle / LIBRARY).read_bytes()
    unsorted = data.replace(b'"features":["clock","greeting"]',
                            b'"features":["greeting","clock"]')
    assert unsorted != data
    _relibrary(bundle, unsorted)
    result, checks = _verified(bundle)
    assert result.status == 1
    check = checks["features.advertised"]
    assert check["result"] == "fail"
    assert check["note"] == "the library's .horon_abi section"
    [finding] = check["findings"]
    assert finding["code"] == "abi.section"
    assert "not sorted" in finding["message"]
