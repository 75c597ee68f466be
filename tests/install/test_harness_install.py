"""Harness bundles in an agent home, end to end through the CLI: stored under their digest,
catalogue in state.json (list --catalogue reads nothing else), immutable versions, check,
status --verify and uninstall; every refusal leaves the home as it was."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.install.state import MAX_STATE_BYTES, HarnessRecord, HomeState
from horon_bundle.install.statefile import replace_state
from tests.conftest import BuiltExample
from tests.harness_support import PLUGIN_NAME, PLUGIN_VERSION, ZIP_NAME, built_zip
from tests.helpers import HOST, REPO, assert_refused, cli, tree_snapshot
from tests.install_support import Paused, debris, hb, home_state

STORE = Path("harness-bundles") / "sha256"


@pytest.fixture(name="harness_zip", scope="module")
def harness_zip_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_zip(tmp_path_factory.mktemp("harness-zip"))


def _copy(archive: Path, directory: Path) -> Path:
    """The zip and its ref in `directory` (tests must not change the module's build)."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(archive, directory / archive.name)
    shutil.copy2(f"{archive}.ref.json", directory / f"{archive.name}.ref.json")
    return directory / archive.name


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _stored(home: Path, archive: Path) -> Path:
    return home / STORE / f"{_sha256(archive)}.zip"


def test_install_stores_the_zip_under_its_digest_and_records_its_catalogue(
        harness_zip: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = hb("install", harness_zip, "--json", home=home)
    assert result.status == 0, result.stderr
    document = result.json()
    assert (document["kind"], document["status"], document["name"], document["version"]) == (
        "harness", "installed", PLUGIN_NAME, PLUGIN_VERSION)
    assert document["sha256"] == _sha256(harness_zip)
    assert document["wrote"] == ["files", "state"]
    stored = _stored(home, harness_zip)
    assert stored.read_bytes() == harness_zip.read_bytes()
    assert stored.stat().st_mode & 0o777 == 0o444  # read-only, written once
    assert document["location"] == str(STORE / stored.name)
    with zipfile.ZipFile(harness_zip) as archive:
        catalogue = json.loads(archive.read("catalogue.json"))
    state = json.loads((home / "state.json").read_text())
    assert state["native_plugins"] == {}
    record = state["harness_bundles"][PLUGIN_NAME][PLUGIN_VERSION]
    assert record["catalogue"] == catalogue == document["catalogue"]
    assert (record["sha256"], record["size"], record["source"]) == (
        _sha256(harness_zip), harness_zip.stat().st_size, ZIP_NAME)
    assert debris(home) == []


def test_two_selections_of_one_ref_get_the_same_bytes(harness_zip: Path, tmp_path: Path) -> None:
    """By the zip, then by its ref (from another directory): one stored file, zero writes."""
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    before = home_state(home)
    elsewhere = _copy(harness_zip, tmp_path / "elsewhere")
    again = hb("install", f"{elsewhere}.ref.json", "--json", home=home)
    assert again.status == 0, again.stderr
    assert again.json()["status"] == "already-installed" and again.json()["wrote"] == []
    assert "nothing written" in again.stderr
    assert home_state(home) == before  # no file, inode, mode or time changed


@pytest.mark.slow
@pytest.mark.process
def test_list_catalogue_reads_the_state_file_alone(harness_zip: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    listed = hb("list", "--catalogue", "--json", home=home)
    assert listed.status == 0, listed.stderr
    for line in ("skill release-notes", "command review", "agent reviewer",
                 "hook PreToolUse Bash command", "mcp-server notes (stdio)"):
        assert line in listed.stderr, listed.stderr
    [bundle] = listed.json()["harness_bundles"]
    state = json.loads((home / "state.json").read_text())
    assert bundle["record"] == state["harness_bundles"][PLUGIN_NAME][PLUGIN_VERSION]
    # proof 1: the stored zip made unreadable garbage changes nothing in the listing
    stored = _stored(home, harness_zip)
    stored.chmod(0o644)
    stored.write_bytes(b"not a zip")
    again = hb("list", "--catalogue", "--json", home=home)
    assert again.status == 0 and again.json() == listed.json()
    # proof 2: strace sees no open of anything in the store
    if shutil.which("strace") is None:
        pytest.skip("strace is not installed")
    trace = tmp_path / "trace"
    traced = cli("list", "--catalogue", "--home", home,
                 prefix=["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", trace])
    assert traced.status == 0, traced.stderr
    opened = [line for line in trace.read_text().splitlines() if ".zip" in line]
    assert opened == [], opened


def test_different_bytes_under_an_installed_version_are_refused(harness_zip: Path,
                                                                tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    other = built_zip(tmp_path / "other", edit=lambda root: (root / "commands" / "review.md")
                      .write_text("---\ndescription: Review it all\n---\nReview.\n"))
    assert _sha256(other) != _sha256(harness_zip)
    before = home_state(home)
    result = hb("install", other, home=home)
    assert_refused(result, "install.version-conflict")
    assert _sha256(harness_zip) in result.stderr and _sha256(other) in result.stderr
    assert home_state(home) == before


def test_check_status_and_uninstall(harness_zip: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    checked = hb("check", PLUGIN_NAME, "--json", home=home)
    assert checked.status == 0, checked.stderr
    assert checked.json()["ref"] == json.loads(Path(f"{harness_zip}.ref.json").read_text())
    status = hb("status", "--verify", "--json", home=home)
    assert status.status == 0, status.stderr
    [bundle] = status.json()["harness_bundles"]
    assert (bundle["state"], bundle["verified"]) == ("installed", True)
    assert "catalogue" not in bundle["record"]  # status leaves catalogues to list --catalogue
    gone = hb("uninstall", PLUGIN_NAME, PLUGIN_VERSION, "--json", home=home)
    assert gone.status == 0, gone.stderr
    assert gone.json()["kind"] == "harness"
    assert not _stored(home, harness_zip).exists()
    assert "harness_bundles" not in json.loads((home / "state.json").read_text())
    assert_refused(hb("check", PLUGIN_NAME, "--kind", "harness", home=home),
                   "install.not-installed")


@pytest.mark.parametrize("damage", ["appended", "replaced", "removed"])
def test_a_tampered_stored_zip_is_caught_by_check_and_status(harness_zip: Path, tmp_path: Path,
                                                             damage: str) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    stored = _stored(home, harness_zip)
    stored.chmod(0o644)
    if damage == "appended":
        stored.write_bytes(stored.read_bytes() + b"\0")
    elif damage == "replaced":  # another valid zip of the same plugin under this name
        other = built_zip(tmp_path / "other", edit=lambda root: (root / "agents" / "more.md")
                          .write_text("---\nname: more\ndescription: more\n---\nMore.\n"))
        stored.write_bytes(other.read_bytes())
    else:
        stored.unlink()
    before = home_state(home)
    code = "install.not-installed" if damage == "removed" else "install.tampered"
    assert_refused(hb("check", PLUGIN_NAME, home=home), code)
    status = hb("status", "--verify", "--json", home=home)
    assert status.status == 1
    assert code in [f["code"] for f in status.json()["harness_bundles"][0]["findings"]]
    assert home_state(home) == before  # readers write nothing


@pytest.mark.process
def test_a_stored_zip_no_record_names_is_debris(harness_zip: Path, tmp_path: Path) -> None:
    """An install killed after its rename, before its state update: the zip is in the store
    but nothing records it; status shows it, the next harness writer removes it."""
    home = tmp_path / "home"
    marker = tmp_path / "pause"
    paused = Paused(["install", harness_zip, "--home", home], "renamed", marker)
    paused.kill()
    stored = _stored(home, harness_zip)
    assert stored.is_file() and not (home / "state.json").exists()
    status = hb("status", "--json", home=home)
    assert [b["state"] for b in status.json()["harness_bundles"]] == ["unrecorded"]
    again = hb("install", harness_zip, "--json", home=home)
    assert again.status == 0, again.stderr
    assert again.json()["status"] == "installed"
    assert any("no record names it" in note for note in again.json()["notes"])
    assert stored.read_bytes() == harness_zip.read_bytes()


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("step", ["hashed", "walked", "copying", "staged", "before-rename",
                                  "state-replace"])
def test_a_killed_install_leaves_the_previous_state(harness_zip: Path, tmp_path: Path,
                                                    step: str) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "state.json").write_text('{"format": "horon.agent-home.v1", "native_plugins": {}}\n')
    state_before = (home / "state.json").read_bytes()
    Paused(["install", harness_zip, "--home", home], step, tmp_path / "pause").kill()
    assert (home / "state.json").read_bytes() == state_before
    # before its state update the install has committed nothing: at most an unrecorded zip
    assert _stored(home, harness_zip).exists() == (step == "state-replace")
    result = hb("install", harness_zip, home=home)  # the next writer sweeps what was left
    assert result.status == 0, result.stderr
    assert debris(home) == []
    assert hb("check", PLUGIN_NAME, home=home).status == 0


def test_install_refuses_a_harness_directory_and_native_options(harness_zip: Path,
                                                                tmp_path: Path) -> None:
    home = tmp_path / "home"
    unpacked = tmp_path / "unpacked"
    assert cli("fetch", f"{harness_zip}.ref.json", "--into", unpacked,
               "--zip", harness_zip).status == 0
    assert_refused(hb("install", unpacked, home=home), "install.harness-directory")
    assert_refused(hb("install", harness_zip, "--enable", home=home), "harness.unsupported",
                   status=2)
    assert_refused(hb("install", harness_zip, "--allow-qa", home=home), "harness.unsupported",
                   status=2)
    assert_refused(hb("install", harness_zip, "--zip", harness_zip, home=home),
                   "usage.invalid", status=2)
    assert not home.exists()


def test_install_refuses_what_verify_refuses_before_touching_the_home(
        harness_zip: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    copy = _copy(harness_zip, tmp_path / "dist")
    ref = Path(f"{copy}.ref.json")
    ref.write_text(json.dumps({"name": PLUGIN_NAME, "sha256": "0" * 64}))
    assert_refused(hb("install", ref, home=home), "ref.digest")
    assert_refused(hb("install", copy, home=home), "ref.digest")  # the ref beside it, too
    ref.unlink()
    profile = tmp_path / "host.json"  # a host that never fires the plugin's SessionStart hook
    profile.write_text(json.dumps({
        "format": "horon.host-profile.v1", "host": "narrow", "version": "1.0.0",
        "description": "fires PreToolUse only", "source": "this test",
        "events": {"fired": ["PreToolUse"], "understood": [], "absent": ["SessionStart"]}}))
    warned = hb("install", copy, "--host", profile, home=tmp_path / "warned")
    assert warned.status == 0 and "harness.event-not-fired" in warned.stderr
    assert_refused(hb("install", copy, "--host", profile, "--strict", home=home),
                   "harness.event-not-fired")
    assert_refused(hb("install", copy, "--require-signature", "--identity", "a@example.com",
                      "--issuer", "https://accounts.example.com", home=home),
                   "signature.missing")
    assert not home.exists()


def test_the_state_file_stays_readable_when_a_record_would_not_fit(tmp_path: Path) -> None:
    """A state that could never be read back is never written (install.state)."""
    home = tmp_path / "home"
    home.mkdir()
    big = HomeState().with_harness("big", "1.0.0", HarnessRecord(
        sha256="0" * 64, size=1, installed_at="2026-01-01T00:00:00Z", source="big.zip",
        catalogue={"pad": "x" * MAX_STATE_BYTES}))
    fd = os.open(home, os.O_RDONLY)
    try:
        with pytest.raises(Refused) as refused:
            replace_state(fd, big)
    finally:
        os.close(fd)
    assert refused.value.codes() == ["install.state"]
    assert tree_snapshot(home) == {}


@pytest.mark.cargo
def test_one_name_both_kinds_needs_kind(tmp_path: Path, example_release: BuiltExample) -> None:
    """A native plugin and a harness bundle both named `example`: check and uninstall ask
    which (install.kind-ambiguous) rather than guess."""
    archive = example_release.archive
    home = tmp_path / "home"
    assert hb("install", archive, "--enable", home=home).status == 0
    harness = built_zip(tmp_path / "named", manifest={"name": "example", "version": "0.1.0"})
    assert hb("install", harness, home=home).status == 0
    before = home_state(home)
    assert_refused(hb("check", "example", home=home), "install.kind-ambiguous", status=2)
    assert_refused(hb("uninstall", "example", "0.1.0", home=home), "install.kind-ambiguous",
                   status=2)
    assert home_state(home) == before
    assert hb("check", "example", "--kind", "harness", home=home).status == 0
    assert hb("check", "example", "--kind", "native", "--target", HOST, home=home).status == 0
    assert_refused(hb("install", archive, "--host", "muse-code", home=home), "usage.invalid",
                   status=2)
    listed = hb("list", home=home)
    assert "example 0.1.0  harness" in listed.stdout and f"example 0.1.0 {HOST}" in listed.stdout



def test_check_of_several_versions_needs_one_named(harness_zip: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    newer = built_zip(tmp_path / "newer", manifest={"name": PLUGIN_NAME, "version": "1.3.0"})
    assert hb("install", harness_zip, home=home).status == 0
    assert hb("install", newer, home=home).status == 0
    before = home_state(home)
    result = hb("check", PLUGIN_NAME, home=home)
    assert_refused(result, "install.version-required", status=2)
    assert "1.2.0, 1.3.0" in result.stderr
    assert hb("check", PLUGIN_NAME, "1.3.0", home=home).status == 0
    assert home_state(home) == before
    assert_refused(hb("check", PLUGIN_NAME, "1.3.0", "--target", HOST, home=home),
                   "harness.unsupported", status=2)
    assert_refused(hb("uninstall", PLUGIN_NAME, "1.3.0", "--target", HOST, home=home),
                   "harness.unsupported", status=2)
    assert home_state(home) == before


def _documented_commands(page: Path, heading: str) -> list[list[str]]:
    """The `horon-bundle …` lines of the sh block after `heading` that installs a harness zip."""
    text = page.read_text()
    after = text[text.index(heading):]
    for block in after.split("```sh\n")[1:]:
        body = block.split("```", 1)[0]
        if "install dist/guard-kit" in body:
            return [line.split()[1:] for line in body.splitlines()
                    if line.startswith("horon-bundle ")]
    raise AssertionError(f"{page}: no harness install block after {heading!r}")


@pytest.mark.parametrize(("page", "heading"), [("README.md", "## Harness bundles"),
                                               ("docs/harness.md", "## In an agent home")])
def test_the_documented_harness_commands_run_as_shown(harness_zip: Path, tmp_path: Path,
                                                      page: str, heading: str) -> None:
    commands = _documented_commands(REPO / page, heading)
    assert [c[0] for c in commands] == ["install", "list", "fetch", "check"]
    _copy(harness_zip, tmp_path / "dist")
    (tmp_path / "sandbox").mkdir()
    for command in commands:
        result = cli(*command, cwd=tmp_path)
        assert result.status == 0, (command, result.stderr)
    assert (tmp_path / "sandbox" / "guard-kit" / "catalogue.json").is_file()
    assert "skill release-notes" in cli(*commands[1], cwd=tmp_path).stdout


@pytest.mark.process
def test_a_killed_uninstall_leaves_debris_the_next_writer_removes(harness_zip: Path,
                                                                  tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    Paused(["uninstall", PLUGIN_NAME, PLUGIN_VERSION, "--home", home], "trashed",
           tmp_path / "pause").kill()
    state = json.loads((home / "state.json").read_text())
    assert "harness_bundles" not in state  # the record went first: nothing names the zip
    assert _stored(home, harness_zip).exists()
    assert_refused(hb("check", PLUGIN_NAME, "--kind", "harness", home=home),
                   "install.not-installed")
    again = hb("install", harness_zip, "--json", home=home)
    assert again.status == 0 and again.json()["status"] == "installed"
    assert any("no record names it" in note for note in again.json()["notes"])


def test_enable_of_a_harness_bundle_says_there_is_nothing_to_enable(harness_zip: Path,
                                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    before = home_state(home)
    for command in (("enable", PLUGIN_NAME), ("disable", PLUGIN_NAME)):
        assert_refused(hb(*command, home=home), "harness.unsupported", status=2)
    assert home_state(home) == before


def test_doctor_of_an_installed_harness_name_says_it_is_a_harness_bundle(
        harness_zip: Path, tmp_path: Path) -> None:
    """`doctor NAME` loads a native library: for a name installed as a harness bundle it says
    what the name is (and what to run instead), not "not installed"."""
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    before = home_state(home)
    for command in (("doctor", PLUGIN_NAME), ("doctor", PLUGIN_NAME, "--installed"),
                    ("check", PLUGIN_NAME, "--kind", "native")):
        result = hb(*command, home=home)
        assert_refused(result, "layout.harness-bundle")
        assert "as a harness bundle" in result.stderr and "not installed" not in result.stderr
        assert f"horon-bundle check {PLUGIN_NAME}" in result.stderr
    assert home_state(home) == before


def test_a_stored_zip_deleted_by_hand_is_restored_by_the_same_bytes(harness_zip: Path,
                                                                     tmp_path: Path) -> None:
    """The record pins the digest, so the same zip again may only put back those bytes (the
    native store does the same for a deleted copy); other bytes stay a version conflict."""
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    stored = _stored(home, harness_zip)
    state = (home / "state.json").read_bytes()
    stored.unlink()
    other = built_zip(tmp_path / "other", edit=lambda root: (root / "commands" / "review.md")
                      .write_text("---\ndescription: Review it all\n---\nReview.\n"))
    before = home_state(home)
    assert_refused(hb("install", other, home=home), "install.version-conflict")
    assert home_state(home) == before
    result = hb("install", harness_zip, "--json", home=home)
    assert result.status == 0, result.stderr
    assert (result.json()["status"], result.json()["wrote"]) == ("installed", ["files"])
    assert stored.read_bytes() == harness_zip.read_bytes()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o444
    assert (home / "state.json").read_bytes() == state
    assert hb("check", PLUGIN_NAME, home=home).status == 0
    assert debris(home) == []


def _many_skills(version: str) -> Any:
    def edit(root: Path) -> None:
        manifest = root / ".claude-plugin" / "plugin.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "version": version}))
        # 50 frontmatters of 15,000 emoji (60 kB each, under the frontmatter limit): each emoji
        # is 12 bytes of escaped JSON, so a 9 MB catalogue for a twelfth of the YAML to read
        for index in range(50):
            skill = root / "skills" / f"s{index}"
            skill.mkdir(parents=True)
            description = "\U0001f600" * 15000
            (skill / "SKILL.md").write_text(f"---\nname: s\ndescription: {description}\n---\n",
                                            encoding="utf-8")
    return edit


@pytest.mark.slow
def test_a_record_that_would_not_fit_the_state_file_stores_no_zip(tmp_path: Path) -> None:
    """The state size limit is checked before the zip is stored: a refused install leaves
    no zip in the store (it left one, saying 'nothing was changed')."""
    first = built_zip(tmp_path / "first", edit=_many_skills("1.0.0"))
    second = built_zip(tmp_path / "second", edit=_many_skills("2.0.0"))
    home = tmp_path / "home"
    assert hb("install", first, home=home).status == 0
    before = home_state(home)
    result = hb("install", second, home=home)
    assert_refused(result, "install.state")
    assert "would be" in result.stderr and "uninstall what is no longer needed" in result.stderr
    assert home_state(home) == before


def test_a_fifo_planted_in_the_home_is_refused_not_waited_on(harness_zip: Path,
                                                              tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes: a FIFO in place of the stored
    zip or of state.json hung check, status --verify, fetch and install (the last holding
    the home's lock) forever. They are opened without blocking and refused."""
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    stored = _stored(home, harness_zip)
    stored.unlink()
    os.mkfifo(stored)
    before = home_state(home)
    for args in (("check", PLUGIN_NAME), ("status", "--verify"), ("install", harness_zip),
                 ("fetch", f"{harness_zip}.ref.json", "--into", tmp_path / "sandbox")):
        result = cli(*args, "--home", home, timeout=60)
        assert_refused(result, "install.tampered")
        assert "is a FIFO, not a stored zip" in result.stderr
    assert home_state(home) == before and not (tmp_path / "sandbox").exists()
    (home / "state.json").unlink()
    os.mkfifo(home / "state.json")
    assert_refused(cli("list", "--home", home, timeout=60), "install.home")
    beside = tmp_path / "beside"
    beside.mkdir()
    shutil.copy(f"{harness_zip}.ref.json", beside)
    os.mkfifo(beside / harness_zip.name)
    for extra in ((), ("--zip", beside / harness_zip.name)):
        result = cli("fetch", beside / f"{harness_zip.name}.ref.json", "--into",
                     tmp_path / "sandbox", *extra, timeout=60)
        assert_refused(result, "ref.zip-missing")
        assert "not a regular file" in result.stderr
    ref = beside / f"{harness_zip.name}.ref.json"
    commands: list[tuple[str | Path, ...]] = [("install", ref, "--home", home), ("verify", ref)]
    for command in commands:
        result = cli(*command, timeout=60)  # it exists: not "no such file"
        assert_refused(result, "ref.zip-missing")
        assert "not a regular file" in result.stderr and "no such file" not in result.stderr


def test_status_verify_reports_a_linked_stored_zip_and_still_judges_the_others(
        harness_zip: Path, tmp_path: Path) -> None:
    """A link (or FIFO) in place of one stored zip is that bundle's finding: status --verify
    still verifies and lists every other bundle, as it does for native copies."""
    def renamed(root: Path) -> None:
        manifest = root / ".claude-plugin" / "plugin.json"
        manifest.write_text(json.dumps({**json.loads(manifest.read_text()),
                                        "name": "other-kit"}))
    other = built_zip(tmp_path / "other", edit=renamed)
    home = tmp_path / "home"
    for archive in (harness_zip, other):
        assert hb("install", archive, home=home).status == 0
    stored = _stored(home, harness_zip)
    stored.unlink()
    stored.symlink_to(harness_zip)
    result = hb("status", "--verify", "--json", home=home)
    assert_refused(result, "install.symlink")
    verified = {b["name"]: b["verified"] for b in result.json()["harness_bundles"]}
    assert verified == {PLUGIN_NAME: False, "other-kit": True}


def test_a_directory_planted_under_a_stored_name_is_swept_not_a_wedge(harness_zip: Path,
                                                                      tmp_path: Path) -> None:
    """A directory named like a stored zip that no record names made every harness writer
    fail (install.io 'Is a directory', exit 3) — uninstall after it had already changed the
    state. It is debris like any unrecorded name: removed, a link inside not followed."""
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("mine\n")
    planted = home / STORE / f"{'a' * 64}.zip"
    (planted / "sub").mkdir(parents=True)
    (planted / "sub" / "link").symlink_to(outside, target_is_directory=True)
    result = hb("uninstall", PLUGIN_NAME, PLUGIN_VERSION, home=home)
    assert result.status == 0, result.stderr
    assert not planted.exists() and list((home / STORE).iterdir()) == []
    assert (outside / "keep").read_text() == "mine\n"
    (planted / "sub").mkdir(parents=True)
    installed = hb("install", harness_zip, home=home)
    assert installed.status == 0, installed.stderr
    assert not planted.exists() and _stored(home, harness_zip).is_file()


def test_an_uninstall_whose_zip_cannot_be_removed_says_the_record_is_gone(
        harness_zip: Path, tmp_path: Path) -> None:
    """The record goes first (the commit point), then the zip: a zip that cannot be removed
    is install.io, whose hint said 'the previous state is unchanged' — false here."""
    home = tmp_path / "home"
    assert hb("install", harness_zip, home=home).status == 0
    stored = _stored(home, harness_zip)
    if subprocess.run(["chattr", "+i", str(stored)], capture_output=True,
                      check=False).returncode != 0:
        pytest.skip("chattr +i is not available here")
    try:
        result = hb("uninstall", PLUGIN_NAME, PLUGIN_VERSION, home=home)
        assert_refused(result, "install.io", status=3)
        assert "state.json no longer names this bundle" in result.stderr
        assert "previous state is unchanged" not in result.stderr
    finally:
        subprocess.run(["chattr", "-i", str(stored)], capture_output=True, check=False)
    assert hb("list", "--json", home=home).json()["harness_bundles"][0]["state"] == "unrecorded"
    assert hb("install", harness_zip, home=home).status == 0  # a harness writer: swept, stored


def test_a_missing_or_malformed_ref_is_named_not_the_zip_it_would_name(
        harness_zip: Path, tmp_path: Path) -> None:
    """`install X.zip.ref.json` reads the ref first, as `verify` and `fetch` do: an absent ref
    is "no such file" for the ref, never a missing zip; a malformed one is refused by its own
    code even when its zip is there. Nothing is written into the home."""
    home = tmp_path / "home"
    absent = tmp_path / f"{harness_zip.name}.ref.json"
    result = cli("install", absent, "--home", home)
    assert_refused(result, "input.unreadable")
    assert f"ref {absent}: no such file or directory" in result.stderr
    assert "ref.zip-missing" not in result.stderr
    beside = tmp_path / "beside"
    beside.mkdir()
    shutil.copy(harness_zip, beside)
    malformed = beside / f"{harness_zip.name}.ref.json"
    malformed.write_text('{"name": "guard-kit"}\n')
    result = cli("install", malformed, "--home", home)
    assert result.status == 1 and "Traceback" not in result.stderr
    assert result.codes and "ref.zip-missing" not in result.codes, result.stderr
    assert malformed.name in result.stderr
    assert not home.exists()
