"""install, list, enable, disable, status, check, uninstall and doctor ID on real bundles.

Every bundle is a real build of the example plugin (tests/install_support.py); every command
runs as a user runs it; every refusal is checked for its code, its exit status, no traceback
and an untouched home.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import EXIT_ENVIRONMENT, Refused
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.core.versions import highest
from horon_bundle.install.installer import InstallRequest, install
from horon_bundle.install.state import parse_state, state_bytes
from tests.gate_helpers import rewrite_record
from tests.helpers import HOST, REPO, TEMPLATE, assert_refused, cli, tree_snapshot
from tests.install_support import (
    Bundles,
    copy_location,
    debris,
    hb,
    home_state,
)
from tests.native_bins import make_pe

pytestmark = pytest.mark.cargo


def _state(home: Path) -> dict[str, object]:
    document: dict[str, object] = json.loads((home / "state.json").read_text())
    return document


def test_install_places_a_verified_copy_with_normalised_modes(bundles: Bundles,
                                                              tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = hb("install", bundles.v1, "--json", home=home)
    assert result.status == 0, result.stderr
    document = result.json()
    assert document["status"] == "installed" and document["enabled"] is False
    assert document["location"] == f"native-plugins/example/0.1.0/{HOST}"
    assert "not enabled: horon-bundle enable example 0.1.0" in result.stderr
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    copy = copy_location(home, "0.1.0")
    # the installed copy is the bundle, byte for byte, and nothing else is in the home
    assert tree_snapshot(copy) == tree_snapshot(bundles.v1_dir)
    assert sorted(p.name for p in home.iterdir()) == ["install.lock", "native-plugins",
                                                      "state.json"]
    assert (home / "install.lock").stat().st_size == 0
    for path in [copy, *copy.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        assert mode in ((0o755,) if path.is_dir() else (0o644, 0o755)), (path, oct(mode))
    record = _state(home)["native_plugins"]["example"]  # type: ignore[index]
    assert record["enabled"] == {}
    copy_record = record["installed"]["0.1.0"][HOST]
    assert copy_record["archive_sha256"] == document["archive_sha256"]
    assert copy_record["source"] == bundles.v1.name and copy_record["channel"] == "release"
    assert (home / "state.json").read_bytes().endswith(b"}\n")


def test_the_same_bytes_again_are_already_installed_with_zero_writes(bundles: Bundles,
                                                                     tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    before = home_state(home)
    for source in (bundles.v1, bundles.v1_dir):  # the archive and its directory: one content
        again = hb("install", source, "--json", home=home)
        assert again.status == 0, again.stderr
        assert again.json()["status"] == "already-installed"
        assert again.json()["wrote"] == [] and again.json()["enabled"] is True
        assert "already installed example 0.1.0" in again.stderr
        assert "nothing written" in again.stderr
        assert home_state(home) == before


def test_other_bytes_under_an_installed_version_are_refused(bundles: Bundles,
                                                            tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    before = home_state(home)
    result = hb("install", bundles.v1_other, home=home)
    assert_refused(result, "install.version-conflict")
    assert f"native-plugins/example/0.1.0/{HOST} holds other bytes" in result.stderr
    assert home_state(home) == before


def test_a_directory_bundle_installs_and_its_archive_is_the_same_copy(bundles: Bundles,
                                                                      tmp_path: Path) -> None:
    home = tmp_path / "home"
    source = tmp_path / bundles.v2_dir.name
    shutil.copytree(bundles.v2_dir, source)
    (source / "LICENSE").chmod(0o600)  # modes verify accepts, normalised on the way in
    (source / "lib" / "libhoron_example.so").chmod(0o750)
    (source / "lib").chmod(0o700)
    result = hb("install", source, "--json", home=home)
    assert result.status == 0, result.stderr
    assert result.json()["archive_sha256"] is None
    copy = copy_location(home, "0.2.0")
    assert tree_snapshot(copy) == tree_snapshot(bundles.v2_dir)
    modes = {p.relative_to(copy).as_posix(): stat.S_IMODE(p.stat().st_mode)
             for p in copy.rglob("*")}
    assert modes["LICENSE"] == 0o644 and modes["lib"] == 0o755
    assert modes["lib/libhoron_example.so"] == 0o755
    assert hb("install", bundles.v2, "--json", home=home).json()["status"] == "already-installed"


def test_enable_keeps_at_most_one_version_per_target(bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    # install never changes what is enabled without --enable
    assert hb("install", bundles.v2, home=home).status == 0
    assert _state(home)["native_plugins"]["example"]["enabled"] == {  # type: ignore[index]
        HOST: "0.1.0"}
    listed = hb("list", "--json", home=home).json()["copies"]
    assert [(c["version"], c["enabled"]) for c in listed] == [("0.1.0", True), ("0.2.0", False)]
    # enable without a version takes the highest installed
    enabled = hb("enable", "example", "--json", home=home)
    assert enabled.status == 0, enabled.stderr
    assert enabled.json()["version"] == "0.2.0"
    assert "example 0.1.0 is no longer enabled" in enabled.stderr
    assert _state(home)["native_plugins"]["example"]["enabled"] == {  # type: ignore[index]
        HOST: "0.2.0"}
    before = home_state(home)
    again = hb("enable", "example", "0.2.0", "--json", home=home)
    assert again.json()["status"] == "already-enabled" and home_state(home) == before
    # disable: nothing enabled, everything still installed
    assert hb("disable", "example", home=home).status == 0
    status = hb("status", "--json", home=home).json()
    assert [(c["version"], c["enabled"], c["state"]) for c in status["copies"]] == [
        ("0.1.0", False, "installed"), ("0.2.0", False, "installed")]
    before = home_state(home)
    assert hb("disable", "example", "--json", home=home).json()["status"] == "not-enabled"
    assert home_state(home) == before
    installed_again = hb("install", bundles.v1, "--enable", "--json", home=home)
    assert installed_again.json()["status"] == "already-installed"
    assert installed_again.json()["wrote"] == ["state"]
    assert _state(home)["native_plugins"]["example"]["enabled"] == {  # type: ignore[index]
        HOST: "0.1.0"}


def test_status_verify_and_check_see_tampering_after_install(bundles: Bundles,
                                                             tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    assert hb("check", "example", home=home).status == 0
    assert hb("status", "--verify", home=home).status == 0
    library = copy_location(home, "0.1.0") / "lib" / "libhoron_example.so"
    original = library.read_bytes()
    data = bytearray(original)
    data[4096] ^= 0x01
    library.write_bytes(bytes(data))
    check = hb("check", "example", home=home)
    assert_refused(check, "install.tampered")
    assert "checksum.mismatch" in check.codes
    status = hb("status", "--verify", "--json", home=home)
    assert status.status == 1
    [copy] = status.json()["copies"]
    assert copy["verified"] is False
    assert "checksum.mismatch" in [f["code"] for f in copy["findings"]]
    assert hb("status", home=home).status == 0  # without --verify nothing is re-hashed
    library.write_bytes(original)
    assert hb("check", "example", home=home).status == 0
    (copy_location(home, "0.1.0") / "extra").write_text("smuggled\n")
    check = hb("check", "example", home=home)
    assert_refused(check, "install.tampered")
    assert "layout.undeclared" in check.codes and "checksum.unlisted" in check.codes
    assert_refused(hb("status", "example", "--verify", home=home), "layout.undeclared")
    assert hb("disable", "example", home=home).status == 0
    before = home_state(home)
    assert_refused(hb("enable", "example", home=home), "install.tampered")  # never enabled
    assert home_state(home) == before


def test_check_of_several_ids_or_all_runs_once_and_fails_when_one_fails(bundles: Bundles,
                                                                       tmp_path: Path) -> None:
    """A host re-checks every plugin in one process: several ids (each with an optional
    version) or --all, one line each, exit 0 only when every one verifies."""
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    both = hb("check", "example", "example", "0.1.0", "--json", home=home)
    assert both.status == 0, both.stderr
    document = both.json()
    assert (document["format"], document["ok"]) == ("horon.install-checks.v1", True)
    assert [(c["id"], c["version"]) for c in document["checks"]] == [("example", "0.1.0")] * 2
    every = hb("check", "--all", "--json", home=home)
    assert every.status == 0 and [c["id"] for c in every.json()["checks"]] == ["example"]
    one_missing = hb("check", "example", "absent", "--json", home=home)
    assert_refused(one_missing, "install.not-installed")
    assert [c["ok"] for c in one_missing.json()["checks"]] == [True, False]
    library = copy_location(home, "0.1.0") / "lib" / "libhoron_example.so"
    library.write_bytes(library.read_bytes() + b"\0")
    assert_refused(hb("check", "--all", home=home), "install.tampered")
    assert_refused(hb("check", home=home), "usage.invalid", status=2)
    assert_refused(hb("check", "example", "--all", home=home), "usage.invalid", status=2)


def test_a_copy_replaced_by_another_valid_bundle_is_not_the_recorded_one(
        bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    other_home = tmp_path / "other"
    assert hb("install", bundles.v1_other, home=other_home).status == 0
    copy = copy_location(home, "0.1.0")
    copy.rename(tmp_path / "old-copy")
    copy_location(other_home, "0.1.0").rename(copy)
    assert_refused(hb("check", "example", home=home), "install.record-mismatch")
    assert_refused(hb("status", "--verify", home=home), "install.record-mismatch")
    assert_refused(hb("enable", "example", "0.1.0", home=home), "install.record-mismatch")
    before = home_state(home)
    assert_refused(hb("install", bundles.v1_other, home=home), "install.record-mismatch")
    assert home_state(home) == before


def test_uninstall_removes_the_version_and_disables_it(bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    assert hb("install", bundles.v2, home=home).status == 0
    result = hb("uninstall", "example", "0.1.0", "--json", home=home)
    assert result.status == 0, result.stderr
    assert "was enabled for" in result.stderr
    assert not (home / "native-plugins" / "example" / "0.1.0").exists()
    assert copy_location(home, "0.2.0").is_dir()
    plugin = _state(home)["native_plugins"]["example"]  # type: ignore[index]
    assert plugin["enabled"] == {} and list(plugin["installed"]) == ["0.2.0"]
    before = home_state(home)
    assert_refused(hb("uninstall", "example", "0.1.0", home=home), "install.not-installed")
    assert_refused(hb("disable", "other", home=home), "install.not-installed")
    assert_refused(hb("enable", "example", "0.1.0", home=home), "install.not-installed")
    assert_refused(hb("check", "example", home=home), "install.not-enabled")
    assert home_state(home) == before
    assert hb("uninstall", "example", "0.2.0", home=home).status == 0
    assert sorted(tree_snapshot(home)) == ["install.lock", "native-plugins", "state.json"]
    assert _state(home)["native_plugins"] == {}
    assert debris(home) == []


def test_doctor_runs_on_the_installed_copy(bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    result = hb("doctor", "example", "--json", home=home)
    assert result.status == 0, result.stderr
    assert result.json()["path"] == str(copy_location(home, "0.1.0"))
    assert "installed example 0.1.0" in result.stderr
    # --installed reads the argument as an id even when a path of that name exists
    (tmp_path / "example").mkdir()
    forced = cli("doctor", "example", "--installed", "--home", home, cwd=tmp_path)
    assert forced.status == 0, forced.stderr
    assert_refused(cli("doctor", "example", "--home", home, cwd=tmp_path), "layout.missing")
    assert_refused(hb("doctor", "nothing-here", home=home), "install.not-installed")
    # the copy is checked before anything is loaded from it
    (copy_location(home, "0.1.0") / "extra").write_text("smuggled\n")
    tampered = hb("doctor", "example", "--json", home=home)
    assert_refused(tampered, "install.tampered")
    assert "abi.load" not in tampered.stdout and "handshake" not in tampered.stderr


def test_home_defaults_to_the_variable_then_xdg_then_home(bundles: Bundles,
                                                          tmp_path: Path) -> None:
    named = tmp_path / "named"
    result = cli("install", bundles.v1, env={"HORON_AGENT_HOME": str(named)})
    assert result.status == 0, result.stderr
    assert copy_location(named, "0.1.0").is_dir()
    data = tmp_path / "data"  # missing: the XDG default creates it, as the spec asks
    env = {"XDG_DATA_HOME": str(data), "HOME": str(tmp_path / "user")}
    cleared = {k: v for k, v in os.environ.items() if k != "HORON_AGENT_HOME"}
    os_env = {**cleared, **env}
    result = cli("install", bundles.v1, env=os_env)
    assert result.status == 0, result.stderr
    assert copy_location(data / "horon-agent", "0.1.0").is_dir()
    no_xdg = {**os_env, "XDG_DATA_HOME": "relative/ignored"}
    assert cli("list", "--json", env=no_xdg).json()["home"] == str(
        tmp_path / "user" / ".local" / "share" / "horon-agent")
    assert_refused(cli("list", env={"HORON_AGENT_HOME": "relative"}), "environment.value")


def test_an_unusable_home_is_refused(bundles: Bundles, tmp_path: Path) -> None:
    assert_refused(hb("install", bundles.v1, home=tmp_path / "no" / "parent"), "install.home")
    assert not (tmp_path / "no").exists()
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert_refused(hb("install", bundles.v1, home=a_file), "install.home")
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert_refused(hb("install", bundles.v1, home=shared), "install.home")
    assert list(shared.iterdir()) == []


@pytest.mark.slow
def test_a_qa_bundle_needs_allow_qa(tmp_path: Path, cargo_target_dir: Path) -> None:

    out = tmp_path / "qa"
    assert cli("build", TEMPLATE, "--channel", "qa", "--out", out, "--target-dir",
               cargo_target_dir).status == 0
    [archive] = out.glob("*-qa.zip")
    home = tmp_path / "home"
    assert_refused(hb("install", archive, home=home), "install.channel")
    assert not home.exists()
    allowed = hb("install", archive, "--allow-qa", "--json", home=home)
    assert allowed.status == 0, allowed.stderr
    assert _state(home)["native_plugins"]["example"]["installed"]["0.1.0"][HOST][  # type: ignore[index]
        "channel"] == "qa"


def test_a_refused_signature_or_policy_stages_nothing(bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    unsigned = hb("install", bundles.v1, "--require-signature", "--identity",
                  "someone@example.com", "--issuer", "https://issuer.example", home=home)
    assert_refused(unsigned, "signature.missing")
    assert not home.exists()
    policy = tmp_path / "policy.toml"
    policy.write_text('schema = 1\nchannel = "qa"\n')
    assert_refused(hb("install", bundles.v1, "--policy", policy, home=home), "policy.unmet")
    assert not home.exists()
    assert hb("install", bundles.v1, home=home).status == 0
    before = home_state(home)
    assert_refused(hb("install", bundles.v2, "--policy", policy, home=home), "policy.unmet")
    assert home_state(home) == before


def test_a_bundle_that_does_not_verify_stages_nothing(bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    before = home_state(home)
    broken = tmp_path / bundles.v2_dir.name

    shutil.copytree(bundles.v2_dir, broken)
    (broken / "LICENSE").write_text("changed\n")
    assert_refused(hb("install", broken, home=home), "checksum.mismatch")
    assert home_state(home) == before


@pytest.mark.slow
def test_a_bundle_with_an_unchecked_claim_is_unproven(tmp_path: Path,
                                                      cargo_target_dir: Path) -> None:
    """A Windows library without a .horon_abi section, bound by a record whose runner could
    not probe it: verify passes with features.advertised skipped; install needs it checked."""


    compiled = tmp_path / "compiled"
    assert cli("compile", TEMPLATE, "--out", compiled, "--target-dir",
               cargo_target_dir).status == 0
    [record] = compiled.glob("*.compiled/record.json")
    target = "x86_64-pc-windows-msvc"
    library = make_pe(tmp_path, "horon_example", section=None)
    data = library.read_bytes()

    def cross_compiled(document: dict[str, Any]) -> None:
        document["target"] = target
        document["library"] = {"name": library.name, "sha256": hashlib.sha256(data).hexdigest(),
                               "size": len(data)}
        document["advertised"] = None

    rewrite_record(record, cross_compiled)
    dist = tmp_path / "dist"
    assert cli("build", TEMPLATE, "--out", dist, "--prebuilt", library, "--record", record,
               "--target", target).status == 0
    archive = dist / f"example-0.1.0-{target}.zip"
    assert cli("verify", archive).status == 0
    home = tmp_path / "home"
    result = hb("install", archive, home=home)
    assert_refused(result, "install.unproven")
    assert "check features.advertised did not pass" in result.stderr
    assert not home.exists()


def test_install_is_refused_where_there_is_no_posix(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:


    monkeypatch.setattr(sys, "platform", "win32")
    with pytest.raises(Refused) as caught:
        install(InstallRequest(source=tmp_path, home=tmp_path / "home"))
    assert caught.value.codes() == ["install.unsupported"]
    assert caught.value.exit_status == EXIT_ENVIRONMENT
    assert not (tmp_path / "home").exists()


def _documented_commands(page: Path, heading: str) -> list[list[str]]:
    """The `horon-bundle …` lines of the first sh block after `heading` in `page`."""
    text = page.read_text()
    block = text[text.index(heading):].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line.split()[1:] for line in block.splitlines() if line.startswith("horon-bundle ")]


@pytest.mark.parametrize(("page", "heading"), [("README.md", "## Installing into an agent home"),
                                               ("docs/install.md", "# Installing into")])
def test_the_documented_commands_run_as_shown(bundles: Bundles, tmp_path: Path, page: str,
                                              heading: str) -> None:
    commands = _documented_commands(REPO / page, heading)
    assert [c[0] for c in commands] == ["install", "list", "enable", "status", "check",
                                        "doctor"]
    (tmp_path / "dist").symlink_to(bundles.v1.parent, target_is_directory=True)
    for command in commands:
        result = cli(*command, cwd=tmp_path)
        assert result.status == 0, (command, result.stderr)
    assert (tmp_path / "agent-home" / "native-plugins" / "example" / "0.1.0" / HOST).is_dir()


def test_status_reconciles_the_disk_with_the_state_file(bundles: Bundles,
                                                       tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    assert hb("install", bundles.v2, home=home).status == 0
    native = home / "native-plugins"
    (native / "README").write_text("not a plugin\n")
    (native / "example" / "not-a-version").mkdir()
    listed = hb("list", "--json", home=home)
    assert listed.status == 0
    assert listed.json()["notes"] == ["native-plugins/README: not a plugin id; ignored",
                                      "native-plugins/example/not-a-version: not a version; "
                                      "ignored"]
    shutil.rmtree(copy_location(home, "0.1.0"))
    status = hb("status", "--json", home=home).json()
    assert [(c["version"], c["state"]) for c in status["copies"]] == [("0.1.0", "missing"),
                                                                      ("0.2.0", "installed")]
    assert_refused(hb("status", "--verify", home=home), "install.not-installed")
    missing = hb("check", "example", home=home)
    assert_refused(missing, "install.not-installed")
    assert "recorded in state.json but missing" in missing.stderr
    assert_refused(hb("enable", "example", "0.1.0", home=home), "install.not-installed")
    assert hb("list", "--json", home=tmp_path / "none").json()["exists"] is False


def test_a_version_whose_copy_was_deleted_keeps_its_recorded_bytes(bundles: Bundles,
                                                                   tmp_path: Path) -> None:
    """The copy of an enabled version removed by hand (not uninstalled): state.json still
    records what 0.1.0 was installed with, so other bytes under 0.1.0 are a version conflict
    — they would otherwise be installed and stay enabled — and the same bytes put it back."""
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    shutil.rmtree(home / "native-plugins" / "example")
    before = home_state(home)
    result = hb("install", bundles.v1_other, "--enable", home=home)
    assert_refused(result, "install.version-conflict")
    assert "its copy is missing" in result.stderr
    assert home_state(home) == before
    restored = hb("install", bundles.v1, "--json", home=home)
    assert restored.status == 0, restored.stderr
    assert restored.json()["status"] == "installed"
    assert hb("check", "example", home=home).status == 0


def test_install_dot_records_the_directory_name_as_its_source(bundles: Bundles,
                                                              tmp_path: Path) -> None:
    """`install .` from inside a bundle directory recorded the source as "''" (the repr of
    Path('.').name); it is the directory's name."""
    home = tmp_path / "home"
    result = cli("install", ".", "--home", home, cwd=bundles.v1_dir)
    assert result.status == 0, result.stderr
    state = json.loads((home / "state.json").read_text())
    [copy] = state["native_plugins"]["example"]["installed"]["0.1.0"].values()
    assert copy["source"] == bundles.v1_dir.name


def _immutable(path: Path, on: bool) -> bool:
    """chattr +i / -i (root on ext4 and the like): even root cannot unlink the file."""
    done = subprocess.run(["chattr", "+i" if on else "-i", str(path)], capture_output=True,
                          check=False)
    return done.returncode == 0


def test_an_uninstall_that_fails_after_the_state_change_says_so(bundles: Bundles,
                                                                tmp_path: Path) -> None:
    """The state is changed first (the version is uninstalled), then the files go. A file
    that cannot be removed is install.io — whose hint said 'the previous state is
    unchanged', which was false here. It says what happened, and the next writer finishes."""
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    stuck = copy_location(home, "0.1.0") / "LICENSE"
    if not _immutable(stuck, True):
        pytest.skip("chattr +i is not available here")
    try:
        result = hb("uninstall", "example", "0.1.0", home=home)
        assert_refused(result, "install.io", status=3)
        assert "state.json no longer names this version" in result.stderr
        assert "previous state is unchanged" not in result.stderr
        assert hb("list", "--json", home=home).json()["copies"] == []
    finally:
        for trashed in home.glob("native-plugins/.trash-*/0.1.0/*/LICENSE"):
            _immutable(trashed, False)
        _immutable(stuck, False)
    assert hb("disable", "example", home=home).status == 1  # a writer: it sweeps the trash
    assert debris(home) == [] and list((home / "native-plugins").iterdir()) == []


def test_layout_files_that_are_not_regular_files_are_refused(bundles: Bundles,
                                                             tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    state = home / "state.json"
    kept = state.read_bytes()
    state.unlink()
    state.mkdir()
    assert_refused(hb("install", bundles.v2, home=home), "install.home")
    assert_refused(hb("list", home=home), "install.home")
    state.rmdir()
    state.write_bytes(b" " * (16 * 1024 * 1024 + 1))
    assert_refused(hb("list", home=home), "install.state")
    state.write_bytes(kept)
    lock = home / "install.lock"
    lock.unlink()
    lock.mkdir()
    assert_refused(hb("install", bundles.v2, home=home), "install.home")
    assert list(lock.iterdir()) == []


@pytest.mark.slow
def test_every_target_has_its_own_enabled_version(bundles: Bundles, tmp_path: Path,
                                                  cargo_target_dir: Path) -> None:
    """A second target from a real PE library (llvm-mc + lld) bound by an artifact record."""
    compiled = tmp_path / "compiled"
    assert cli("compile", TEMPLATE, "--out", compiled, "--target-dir",
               cargo_target_dir).status == 0
    [record] = compiled.glob("*.compiled/record.json")
    windows = "x86_64-pc-windows-msvc"
    library = make_pe(tmp_path, "horon_example")
    data = library.read_bytes()

    def cross_compiled(document: dict[str, Any]) -> None:
        document["target"] = windows
        document["library"] = {"name": library.name, "sha256": hashlib.sha256(data).hexdigest(),
                               "size": len(data)}
        document["advertised"] = None

    rewrite_record(record, cross_compiled)
    dist = tmp_path / "dist"
    assert cli("build", TEMPLATE, "--out", dist, "--prebuilt", library, "--record", record,
               "--target", windows).status == 0
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    assert hb("install", dist / f"example-0.1.0-{windows}.zip", "--enable", home=home).status == 0
    assert hb("install", bundles.v2, "--enable", home=home).status == 0
    plugin = _state(home)["native_plugins"]["example"]  # type: ignore[index]
    assert plugin["enabled"] == {HOST: "0.2.0", windows: "0.1.0"}
    assert hb("check", "example", "--target", windows, home=home).status == 0
    assert hb("disable", "example", "--target", windows, home=home).status == 0
    assert _state(home)["native_plugins"]["example"]["enabled"] == {  # type: ignore[index]
        HOST: "0.2.0"}
    assert_refused(hb("check", "example", "--target", windows, home=home), "install.not-enabled")
    assert_refused(hb("enable", "example", "--target", "aarch64-apple-darwin", home=home),
                   "install.not-installed")
    # uninstalling one target of a version leaves its other targets in place
    assert hb("uninstall", "example", "0.1.0", "--target", windows, home=home).status == 0
    assert not copy_location(home, "0.1.0", windows).exists()
    assert copy_location(home, "0.1.0").is_dir()
    assert hb("status", "--verify", home=home).status == 0


@pytest.mark.parametrize(("change", "says"), [
    (lambda d: d.update(extra=1), "extra: unknown field"),
    (lambda d: d.update(native_plugins=[]), "native_plugins: expected an object"),
    (lambda d: d["native_plugins"]["example"].update(enabled={HOST: "9.9.9"}),
     "enables '9.9.9', which is not installed"),
    (lambda d: d["native_plugins"]["example"].update(enabled={HOST: 1}), "expected a string"),
    (lambda d: d["native_plugins"]["example"].update(installed={}),
     "a plugin with no installed version"),
    (lambda d: d["native_plugins"]["example"]["installed"].update({"0.2": {}}),
     "'0.2' is not a semantic version"),
    (lambda d: d["native_plugins"]["example"]["installed"].update({"0.2.0": {}}),
     "a version with no target"),
    (lambda d: _copy(d).update(installed_at="yesterday"), "is not a UTC time"),
    (lambda d: _copy(d).update(content_sha256="ab"), "'ab' is not a SHA-256"),
    (lambda d: _copy(d).update(archive_sha256="AB" * 32), "is not a SHA-256"),
    (lambda d: _copy(d).update(source="a\nb"), "is not a file name"),
    (lambda d: _copy(d).update(channel="beta"), "'beta' is not release or qa"),
    (lambda d: _copy(d).pop("channel"), "channel: required field is missing"),
    (lambda d: _copy(d).update(installed_at=None), "installed_at: null"),
    (lambda d: _copy(d).update(more=True), "more: unknown field"),
    (lambda d: d["native_plugins"].update({"Example": d["native_plugins"]["example"]}),
     "'Example' is not a plugin id"),
    (lambda d: d["native_plugins"]["example"]["installed"]["0.1.0"].update(
        {"x86_64": _copy(d)}), "'x86_64' is not a target triple"),
])
def test_the_state_decoder_refuses_each_malformed_field(change: Any, says: str) -> None:
    document = json.loads(_GOOD_STATE)
    change(document)
    with pytest.raises(Refused) as caught:
        parse_state(json.dumps(document).encode(), "state.json")
    assert set(caught.value.codes()) == {"install.state"}
    assert says in str(caught.value), str(caught.value)


_GOOD_STATE = json.dumps({"format": "horon.agent-home.v1", "native_plugins": {"example": {
    "enabled": {HOST: "0.1.0"}, "installed": {"0.1.0": {HOST: {
        "installed_at": "2026-01-31T12:00:00Z", "content_sha256": "a" * 64,
        "archive_sha256": None, "source": "example", "channel": "release"}}}}}})


def _copy(document: dict[str, Any]) -> dict[str, Any]:
    copy: dict[str, Any] = document["native_plugins"]["example"]["installed"]["0.1.0"][HOST]
    return copy


def test_the_state_file_round_trips_canonically() -> None:
    state = parse_state(_GOOD_STATE.encode(), "state.json")
    data = state_bytes(state)
    assert parse_state(data, "state.json") == state
    assert data == canonical_bytes(json.loads(_GOOD_STATE))
    assert state_bytes(state.without_copy("example", "0.1.0", HOST)) == canonical_bytes(
        {"format": "horon.agent-home.v1", "native_plugins": {}})


@pytest.mark.parametrize(("versions", "expected"), [
    (["0.1.0", "0.10.0", "0.9.0"], "0.10.0"),
    (["1.0.0-rc.1", "1.0.0-beta.11", "1.0.0-beta.2"], "1.0.0-rc.1"),
    (["1.0.0", "1.0.0-rc.1"], "1.0.0"),
    (["1.0.0-alpha", "1.0.0-alpha.1"], "1.0.0-alpha.1"),
    (["1.0.0-1", "1.0.0-alpha"], "1.0.0-alpha"),
])
def test_enable_without_a_version_takes_the_highest_by_semver(versions: list[str],
                                                             expected: str) -> None:
    assert highest(versions) == expected


def test_doctor_reads_what_cannot_be_an_id_as_a_path(tmp_path: Path) -> None:
    missing = tmp_path / "nothing-here"
    assert_refused(cli("doctor", missing, "--home", tmp_path / "home"), "input.unreadable")
    assert_refused(cli("doctor", "nothing-here", "--home", tmp_path / "home", cwd=tmp_path),
                   "install.not-installed")


@pytest.mark.slow
def test_uninstall_removes_a_tree_of_any_depth_without_following_links(
        bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("kept\n")
    deep = copy_location(home, "0.1.0") / "junk"
    deep.mkdir()
    fd = os.open(deep, os.O_RDONLY)
    try:
        for _ in range(1500):  # deeper than recursion or PATH_MAX allow
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.symlink(outside, "link", dir_fd=fd)
    finally:
        os.close(fd)
    result = hb("uninstall", "example", "0.1.0", home=home)
    assert result.status == 0, result.stderr
    assert sorted(tree_snapshot(home)) == ["install.lock", "native-plugins", "state.json"]
    assert (outside / "keep").read_text() == "kept\n"
