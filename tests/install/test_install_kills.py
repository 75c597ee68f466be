"""SIGKILL at every step of install, enable, disable and uninstall.

The command is stopped at a test-only pause point (HORON_INSTALL_PAUSE_AT names the step) and
killed with SIGKILL by the test. Afterwards the previous state is byte-identical (debris the
next writer sweeps aside) or the new version is complete — never a mix — and the next run
cleans up and succeeds.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import HOST, tree_snapshot
from tests.install_support import (
    Bundles,
    Paused,
    copy_location,
    debris,
    hb,
    without_debris,
)

pytestmark = [pytest.mark.cargo, pytest.mark.process]


def _enabled(home: Path) -> dict[str, str]:
    document = json.loads((home / "state.json").read_text())
    enabled: dict[str, str] = document["native_plugins"]["example"]["enabled"]
    return enabled


@pytest.mark.slow
@pytest.mark.parametrize("step", ["copying", "staged", "before-rename", "renamed",
                                  "state-replace"])
def test_a_killed_install_leaves_the_old_state_or_the_complete_new_version(
        bundles: Bundles, tmp_path: Path, step: str) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    before = tree_snapshot(home)
    paused = Paused(["install", bundles.v2, "--enable", "--home", home], step,
                    tmp_path / "marker")
    paused.kill()
    after = tree_snapshot(home)
    new_copy = copy_location(home, "0.2.0")
    if step in ("copying", "staged", "before-rename"):
        assert without_debris(after) == before  # the old state, byte for byte
        assert debris(home), "the kill should have left staging behind"
    else:
        # the rename happened: 0.2.0 is complete, everything else is as it was
        assert tree_snapshot(new_copy) == tree_snapshot(bundles.v2_dir)
        rest = {p: v for p, v in without_debris(after).items()
                if not p.startswith("native-plugins/example/0.2.0")}
        assert rest == before
    assert hb("check", "example", home=home).status == 0  # 0.1.0 still loads
    rerun = hb("install", bundles.v2, "--enable", "--json", home=home)
    assert rerun.status == 0, rerun.stderr
    assert debris(home) == []
    assert _enabled(home) == {HOST: "0.2.0"}
    assert tree_snapshot(new_copy) == tree_snapshot(bundles.v2_dir)
    assert hb("status", "--verify", home=home).status == 0
    checked = hb("check", "example", "--json", home=home)
    assert checked.status == 0 and checked.json()["version"] == "0.2.0"


@pytest.mark.parametrize("command", [("enable", "example", "0.1.0"), ("disable", "example"),
                                     ("uninstall", "example", "0.1.0")])
def test_a_killed_state_change_leaves_the_old_state_file(bundles: Bundles, tmp_path: Path,
                                                         command: tuple[str, ...]) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    assert hb("install", bundles.v2, "--enable", home=home).status == 0
    before = tree_snapshot(home)
    paused = Paused([*command, "--home", home], "state-replace", tmp_path / "marker")
    paused.kill()
    assert without_debris(tree_snapshot(home)) == before
    assert len(debris(home)) == 1  # the fsynced temp that was never renamed
    rerun = hb(*command, home=home)
    assert rerun.status == 0, rerun.stderr
    assert debris(home) == []
    expected = {"enable": {HOST: "0.1.0"}, "disable": {}, "uninstall": {HOST: "0.2.0"}}
    assert _enabled(home) == expected[command[0]]


def test_a_killed_uninstall_after_its_rename_is_finished_by_the_next_writer(
        bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    assert hb("install", bundles.v2, "--enable", home=home).status == 0
    paused = Paused(["uninstall", "example", "0.1.0", "--home", home], "trashed",
                    tmp_path / "marker")
    paused.kill()
    # the version is gone from its place at once; what is left is trash, and the state
    # already says so
    assert not (home / "native-plugins" / "example" / "0.1.0").exists()
    assert [p.split("/")[1][:7] for p in debris(home) if p.count("/") == 1] == [".trash-"]
    assert hb("check", "example", home=home).status == 0
    assert hb("list", "--json", home=home).json()["copies"][0]["version"] == "0.2.0"
    assert hb("disable", "example", home=home).status == 0  # any writer sweeps the trash
    assert debris(home) == []


@pytest.mark.slow
def test_a_copy_left_unrecorded_is_listed_and_recorded_by_the_next_install(
        bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    Paused(["install", bundles.v2, "--home", home], "renamed", tmp_path / "marker").kill()
    listed = hb("list", "--json", home=home).json()["copies"]
    assert [(c["version"], c["state"]) for c in listed] == [("0.1.0", "installed"),
                                                            ("0.2.0", "unrecorded")]
    result = hb("install", bundles.v2, "--json", home=home)
    assert result.json()["status"] == "already-installed"
    assert result.json()["wrote"] == ["state"]
    assert "recorded the copy an interrupted install had put in place" in result.stderr
    assert [c["state"] for c in hb("list", "--json", home=home).json()["copies"]] == [
        "installed", "installed"]
