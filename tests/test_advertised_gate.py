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


def test_hard_coded_advertised_list(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-advertise")
    assert_refused_cleanly(result, "features.mismatch", out)
    assert error_lines(result, "features.mismatch") == [
        "ERROR features.mismatch: the library advertises ['clock', 'greeting'], plugin.json "
        "would list [] (compiled)"]


def test_static_section_disagrees_with_the_handshake(tmp_path: Path,
                                                     cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-section")
    assert_refused_cleanly(result, "abi.section-mismatch", out)
    [line] = error_lines(result, "abi.section-mismatch")
    assert "the handshake advertises plugin_id='fault-section'" in line
    assert "features=[]" in line
    assert "the .horon_abi section says" in line and "features=['clock']" in line


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


def test_the_tool_survives_a_crashing_library(tmp_path: Path, cargo_target_dir: Path) -> None:
    """After a refused crash the same process-free tool still builds a good library."""
    out = tmp_path / "out"
    crashed = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-segv")
    assert crashed.status == 1
    fine = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-none")
    assert fine.status == 0, fine.stderr
    assert cli("verify", out / f"fault-none-0.1.0-{HOST}").status == 0
