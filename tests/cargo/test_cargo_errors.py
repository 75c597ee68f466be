"""When cargo fails, its own words are shown: the `error:` lines with their context, the whole
command, a hint that fits, and (for CI annotations) the file and line cargo points at."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import TEMPLATE, assert_refused, cli, copy_workspace, tree_snapshot

pytestmark = pytest.mark.cargo


def _workspace(tmp_path: Path) -> Path:
    return copy_workspace(TEMPLATE, tmp_path / "plugin")


def _only_finding(result_json: dict[str, object]) -> dict[str, object]:
    findings = result_json["findings"]
    assert isinstance(findings, list) and len(findings) == 1, findings
    finding = findings[0]
    assert isinstance(finding, dict)
    return finding


def test_a_broken_cargo_toml_shows_cargos_error_and_where(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    manifest = workspace / "Cargo.toml"
    lines = manifest.read_text().splitlines()
    number = lines.index("[features]") + 1
    lines[number - 1] = "[features"
    manifest.write_text("\n".join(lines) + "\n")
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out, "--json")
    assert_refused(result, "cargo.failed")
    text = result.stderr
    # the full command, cargo's first error line, then its context, folded under the ERROR
    assert ("ERROR cargo.failed: `cargo metadata --format-version 1 --locked --no-deps` exited "
            "101: error: unclosed table, expected `]`") in text
    assert f"  │   --> Cargo.toml:{number}:10" in text
    assert f"  │ {number} | [features" in text
    assert "hint: Fix the line cargo points at" in text
    finding = _only_finding(result.json())
    assert finding["file"] == str(workspace / "Cargo.toml") and finding["line"] == number
    detail = finding["detail"]
    assert isinstance(detail, list) and detail[0] == "error: unclosed table, expected `]`"
    assert tree_snapshot(out) == {}


def test_a_misspelt_feature_shows_cargos_error_not_only_its_help(tmp_path: Path,
                                                                cargo_target_dir: Path) -> None:
    workspace = _workspace(tmp_path)
    declaration = workspace / "horon-release.toml"
    declaration.write_text(declaration.read_text().replace('"greeting"]', '"greetng"]'))
    result = cli("build", workspace, "--out", tmp_path / "out", "--target-dir",
                 cargo_target_dir)
    assert_refused(result, "cargo.failed")
    error = ("error: the package 'horon-example' does not contain this feature: "
             "horon-example/greetng")
    assert f"exited 101: {error}" in result.stderr  # in the one-line message
    assert f"│ {error}" in result.stderr
    assert "│ help: there is a similarly named feature: horon-example/greeting" in result.stderr
    assert "hint: horon-release.toml's `features` (or `qa-features`) names a feature" in \
        result.stderr
    assert "--no-default-features --features horon-example/clock,horon-example/greetng" in \
        result.stderr  # the whole command, not a cut one


def test_an_outdated_lock_file_says_how_to_refresh_it(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    manifest = workspace / "Cargo.toml"
    manifest.write_text(manifest.read_text().replace('version = "0.1.0"', 'version = "0.1.1"', 1))
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "cargo.failed")
    assert "because --locked was passed to prevent this" in result.stderr
    assert "cargo generate-lockfile --offline" in result.stderr


def test_a_compile_error_shows_rustcs_diagnostic(tmp_path: Path, cargo_target_dir: Path) -> None:
    workspace = _workspace(tmp_path)
    lib = workspace / "src" / "lib.rs"
    lines = lib.read_text().splitlines()
    lines.append('fn broken() -> u32 { "text" }')
    lib.write_text("\n".join(lines) + "\n")
    result = cli("build", workspace, "--out", tmp_path / "out", "--target-dir", cargo_target_dir,
                 "--json", env={"GITHUB_ACTIONS": "true"})
    assert_refused(result, "cargo.failed")
    assert "│ error[E0308]: mismatched types" in result.stderr
    assert f"│   --> src/lib.rs:{len(lines)}:" in result.stderr
    assert "expected `u32`, found `&str`" in result.stderr
    assert "hint: Fix the compile errors shown" in result.stderr
    finding = _only_finding(result.json())
    assert finding["file"] == str(lib) and finding["line"] == len(lines)
    annotation = [line for line in result.stderr.splitlines() if line.startswith("::error ")]
    assert len(annotation) == 1
    assert annotation[0].startswith(f"::error file={lib},line={len(lines)},title=cargo.failed::")
