"""horon-release.toml is read strictly; each fault refused with its code, nothing built."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import TEMPLATE, assert_refused, cli, copy_workspace, tree_snapshot

GOOD = (TEMPLATE / "horon-release.toml").read_text()

FAULTS: dict[str, tuple[str, str]] = {
    "unknown top-level key": (GOOD + "\nextra = 1\n", "declaration.unknown-key"),
    "unknown plugin key": (GOOD.replace('profile = "release"', 'profile = "release"\nfoo = 1'),
                           "declaration.unknown-key"),
    "destination configured": (GOOD.replace('"unconfigured"', '"oci://ghcr.io/acme"'),
                               "declaration.destination"),
    "missing id": (GOOD.replace('id = "example"\n', ""), "declaration.missing-key"),
    "bad id": (GOOD.replace('id = "example"', 'id = "Example!"'), "declaration.value"),
    "wrong type": (GOOD.replace("schema = 1", 'schema = "1"'), "declaration.type"),
    "bool for int": (GOOD.replace("schema = 1", "schema = true"), "declaration.type"),
    "unknown schema": (GOOD.replace("schema = 1", "schema = 2"), "declaration.value"),
    "32-bit target": (GOOD.replace('targets = [', 'targets = ["i686-pc-windows-msvc", '),
                      "declaration.value"),
    "bad feature token": (GOOD.replace('features = ["clock", "greeting"]',
                                       'features = ["Clock"]'), "declaration.value"),
    "licence path escapes": (GOOD.replace('license-file = "LICENSE"',
                                          'license-file = "../LICENSE"'), "declaration.value"),
    "not TOML": ("schema = = 1\n", "declaration.syntax"),
    "no plugin": ("schema = 1\n", "declaration.missing-key"),
}


@pytest.mark.parametrize("case", sorted(FAULTS))
def test_declaration_fault_refused(case: str, tmp_path: Path) -> None:
    text, code = FAULTS[case]
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    (workspace / "horon-release.toml").write_text(text)
    out = tmp_path / "dist"
    before = tree_snapshot(workspace)
    assert_refused(cli("build", workspace, "--out", out), code)
    assert tree_snapshot(out) == {}
    assert tree_snapshot(workspace) == before


def test_missing_declaration(tmp_path: Path) -> None:
    assert_refused(cli("build", tmp_path, "--out", tmp_path / "dist"), "declaration.missing")


def test_unknown_plugin(tmp_path: Path) -> None:
    result = cli("build", TEMPLATE, "--plugin", "nope", "--out", tmp_path / "dist")
    assert_refused(result, "declaration.plugin")


def test_usage_error_exits_2() -> None:
    result = cli("build", "--channel", "beta")
    assert result.status == 2
    assert "Traceback" not in result.stderr
