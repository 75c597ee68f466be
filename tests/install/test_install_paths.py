"""The agent home's paths: nothing is followed through a link, nothing written through one.

Each directory install walks (native-plugins, the id, the version, the target) is replaced by
a link to a directory outside the home; a regular file stands where a directory belongs; a
link is swapped in between the walk's check and the write (the test-only pause point
`walked`); an empty directory waits under the final name; the bundle changes between its
verification and its copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.harness_support import built_zip
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.install_support import (
    Bundles,
    Paused,
    copy_location,
    debris,
    hb,
    home_state,
)

pytestmark = pytest.mark.cargo


def _home_with_v1(bundles: Bundles, tmp_path: Path) -> Path:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, "--enable", home=home).status == 0
    return home


@pytest.mark.parametrize("level", ["native-plugins", "id", "version", "target"])
def test_a_linked_directory_is_refused_and_nothing_is_written_through_it(
        bundles: Bundles, tmp_path: Path, level: str) -> None:
    home = _home_with_v1(bundles, tmp_path)
    native = home / "native-plugins"
    outside = tmp_path / "outside"
    outside.mkdir()
    # the directory install of 0.2.0 would walk through at this level, made a link
    place = {"native-plugins": native, "id": native / "example",
             "version": native / "example" / "0.2.0",
             "target": native / "example" / "0.2.0" / HOST}[level]
    if place.exists():
        shutil.move(place, outside / "moved")
    else:
        place.parent.mkdir(parents=True, exist_ok=True)
        (outside / "moved").mkdir()
    place.symlink_to(outside / "moved", target_is_directory=True)
    before, outside_before = home_state(home), tree_snapshot(outside)
    result = hb("install", bundles.v2, home=home)
    assert_refused(result, "install.symlink")
    assert "is a symbolic link" in result.stderr and "not followed" in result.stderr
    assert home_state(home) == before
    assert tree_snapshot(outside) == outside_before
    # readers refuse the link too, and write nothing either
    if level in ("native-plugins", "id"):
        assert_refused(hb("check", "example", home=home), "install.symlink")
    assert_refused(hb("status", "--verify", home=home), "install.symlink")
    assert home_state(home) == before and tree_snapshot(outside) == outside_before


@pytest.mark.parametrize("level", ["native-plugins", "id", "version"])
def test_a_regular_file_where_a_directory_belongs_is_refused(bundles: Bundles, tmp_path: Path,
                                                             level: str) -> None:
    home = tmp_path / "home"
    home.mkdir()
    native = home / "native-plugins"
    place = {"native-plugins": native, "id": native / "example",
             "version": native / "example" / "0.1.0"}[level]
    place.parent.mkdir(parents=True, exist_ok=True)
    place.write_text("not a directory\n")
    before = tree_snapshot(home)
    result = hb("install", bundles.v1, home=home)
    assert_refused(result, "install.not-a-directory")
    assert "is a regular file, not a directory" in result.stderr
    assert {p: v for p, v in tree_snapshot(home).items() if p != "install.lock"} == before


def test_the_state_file_and_the_lock_are_never_followed(bundles: Bundles,
                                                        tmp_path: Path) -> None:
    home = _home_with_v1(bundles, tmp_path)
    elsewhere = tmp_path / "elsewhere.json"
    (home / "state.json").replace(elsewhere)
    (home / "state.json").symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    assert_refused(hb("install", bundles.v2, home=home), "install.symlink")
    assert_refused(hb("list", home=home), "install.symlink")
    assert elsewhere.read_bytes() == before
    (home / "state.json").unlink()
    elsewhere.replace(home / "state.json")
    (home / "install.lock").unlink()
    (home / "install.lock").symlink_to(tmp_path / "lock-target")
    assert_refused(hb("install", bundles.v2, home=home), "install.symlink")
    assert not (tmp_path / "lock-target").exists()


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("swapped", ["home", "native-plugins", "id"])
def test_a_link_swapped_in_after_the_check_redirects_nothing(bundles: Bundles, tmp_path: Path,
                                                             swapped: str) -> None:
    home = _home_with_v1(bundles, tmp_path)
    native = home / "native-plugins"
    place = {"home": home, "native-plugins": native, "id": native / "example"}[swapped]
    outside = tmp_path / "outside"
    shutil.copytree(place, outside)
    outside_before = tree_snapshot(outside)
    state_before = (home / "state.json").read_bytes()
    paused = Paused(["install", bundles.v2, "--home", home], "walked", tmp_path / "marker")
    moved = place.with_name(place.name + ".moved")
    place.rename(moved)
    place.symlink_to(outside, target_is_directory=True)
    result = paused.resume()
    assert_refused(result, "install.race")
    assert ("was replaced while the command ran" if swapped == "home"
            else "was replaced after it was checked") in result.stderr
    assert tree_snapshot(outside) == outside_before  # nothing went through the link
    opened_home = moved if swapped == "home" else home
    assert (opened_home / "state.json").read_bytes() == state_before
    # the directory that was opened got no new version and kept no staging
    assert debris(tmp_path) == []
    assert not (opened_home / "native-plugins" / "example" / "0.2.0").exists()
    assert not (moved / ("example/0.2.0" if swapped == "native-plugins" else "0.2.0")).exists()


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.parametrize("step", ["staged", "before-rename"])
def test_a_staging_directory_swapped_before_the_rename_is_never_installed(
        bundles: Bundles, tmp_path: Path, step: str) -> None:
    """The copy verified is the copy renamed: a directory put in the staging directory's
    place (here: a copy of the other 0.2.0 bytes) is refused, never renamed into place."""
    home = _home_with_v1(bundles, tmp_path)
    before = tree_snapshot(home)
    paused = Paused(["install", bundles.v2, "--home", home], step, tmp_path / "marker")
    [staging] = (home / "native-plugins").glob(".staging-*")
    staging.rename(tmp_path / "taken")
    shutil.copytree(tmp_path / "taken", staging)
    result = paused.resume()
    assert_refused(result, "install.race")
    assert "was replaced while" in result.stderr
    assert not copy_location(home, "0.2.0").exists()
    assert {p: v for p, v in tree_snapshot(home).items()
            if not p.startswith("native-plugins/.staging-")} == before


@pytest.mark.slow
@pytest.mark.process
def test_a_final_directory_that_appears_before_the_rename_is_not_replaced(
        bundles: Bundles, tmp_path: Path) -> None:
    """renameat2(RENAME_NOREPLACE): an empty directory made under the final name by a program
    that ignores the lock is not replaced, as plain rename(2) would."""
    home = _home_with_v1(bundles, tmp_path)
    paused = Paused(["install", bundles.v2, "--home", home], "before-rename",
                    tmp_path / "marker")
    (home / "native-plugins" / "example" / "0.2.0").mkdir()
    result = paused.resume()
    assert_refused(result, "install.race")
    assert "native-plugins/example/0.2.0 appeared while this install held" in result.stderr
    assert list((home / "native-plugins" / "example" / "0.2.0").iterdir()) == []
    assert debris(home) == []


def test_an_empty_final_directory_is_not_replaced(bundles: Bundles, tmp_path: Path) -> None:
    """rename(2) would silently replace it: install refuses it and leaves it alone."""
    home = tmp_path / "home"
    copy_location(home, "0.1.0").mkdir(parents=True)
    before = tree_snapshot(home)
    result = hb("install", bundles.v1, home=home)
    assert_refused(result, "install.occupied")
    assert "layout.missing" in result.codes
    assert {p: v for p, v in tree_snapshot(home).items() if p != "install.lock"} == before


@pytest.mark.slow
@pytest.mark.process
def test_a_bundle_changed_between_its_verification_and_its_copy_is_refused(
        bundles: Bundles, tmp_path: Path) -> None:
    home = _home_with_v1(bundles, tmp_path)
    before = tree_snapshot(home)  # staging came and went: native-plugins' mtime moved
    source = tmp_path / bundles.v2_dir.name
    shutil.copytree(bundles.v2_dir, source)
    paused = Paused(["install", source, "--home", home], "walked", tmp_path / "marker")
    (source / "LICENSE").write_text("swapped after verification\n")
    result = paused.resume()
    assert_refused(result, "install.integrity")
    assert "the staged copy differs from the verified bundle" in result.stderr
    assert tree_snapshot(home) == before
    archive = tmp_path / bundles.v2.name
    shutil.copyfile(bundles.v2, archive)
    paused = Paused(["install", archive, "--home", home], "walked", tmp_path / "marker")
    shutil.copyfile(bundles.v1, archive)  # another valid archive under the verified name
    result = paused.resume()
    assert_refused(result, "install.integrity")
    assert tree_snapshot(home) == before


def test_a_malformed_state_file_is_refused_before_anything_is_staged(bundles: Bundles,
                                                                     tmp_path: Path) -> None:
    home = _home_with_v1(bundles, tmp_path)
    state = home / "state.json"
    good = json.loads(state.read_text())
    cases = [
        b"{\"format\": \"horon.agent-home.v1\",",
        json.dumps({**good, "extra": 1}).encode(),
        json.dumps({**good, "format": "horon.agent-home.v2"}).encode(),
        json.dumps({"format": "horon.agent-home.v1", "native_plugins": {"example": {
            "enabled": {HOST: "9.9.9"},
            "installed": good["native_plugins"]["example"]["installed"]}}}).encode(),
        json.dumps({"format": "horon.agent-home.v1", "native_plugins": {"../x": {
            "enabled": {}, "installed": {}}}}).encode(),
    ]
    for data in cases:
        state.write_bytes(data)
        before = home_state(home)
        assert_refused(hb("install", bundles.v2, home=home), "install.state")
        assert_refused(hb("status", home=home), "install.state")
        assert home_state(home) == before


@pytest.mark.parametrize(("case", "code"), [("malformed", "install.state"),
                                            ("directory", "install.home"),
                                            ("link", "install.symlink")])
def test_a_state_file_that_cannot_be_read_is_refused_before_any_write(
        bundles: Bundles, tmp_path: Path, case: str, code: str) -> None:
    """A home holding no native-plugins/ or harness store yet (a harness-only home, one a host
    made): every writer refuses its unreadable state.json with nothing written — no lock
    file, no area directory, not even the sweep of a killed writer's temp file."""
    harness = built_zip(tmp_path / "harness")
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    state = home / "state.json"
    if case == "malformed":
        state.write_text('{"format": "horon.agent-home.v1",')
    elif case == "directory":
        state.mkdir()
    else:
        state.symlink_to(tmp_path / "elsewhere.json")
    (home / ".state.json.0123456789abcdef.tmp").write_text("left by a killed writer\n")
    before = home_state(home)
    for args in (("install", bundles.v1), ("install", harness), ("enable", "example"),
                 ("disable", "example"), ("uninstall", "example", "0.1.0"),
                 ("uninstall", "guard-kit", "1.2.0", "--kind", "harness")):
        assert_refused(hb(*args, home=home), code)
        assert home_state(home) == before, args
    assert not (tmp_path / "elsewhere.json").exists()


def test_an_empty_home_is_a_usage_error_not_the_current_directory(bundles: Bundles,
                                                                  tmp_path: Path) -> None:
    """`--home ""` (an unset variable in a script) is Path(""), the current directory: it
    would become an agent home. It is refused before anything is read or written."""
    work = tmp_path / "work"
    work.mkdir()
    for args in (("install", bundles.v1), ("list",), ("status",), ("enable", "example"),
                 ("uninstall", "example", "0.1.0"), ("check", "example")):
        result = cli(*args, "--home", "", cwd=work)
        assert_refused(result, "usage.invalid", status=2)
        assert "argument --home: an empty path" in result.stderr, result.stderr
    ref = built_zip(tmp_path / "harness").with_name("guard-kit-1.2.0.zip.ref.json")
    result = cli("fetch", ref, "--into", "sandbox", "--home", "", cwd=work)
    assert_refused(result, "usage.invalid", status=2)
    assert not any(work.iterdir())


def test_malformed_names_on_the_command_line_are_usage_errors(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for args in (("enable", "../etc"), ("enable", "example", "1.x"),
                 ("check", "example", "--target", "../../x"),
                 ("uninstall", "example", "0.1.0/..")):
        assert_refused(hb(*args, home=home), "install.name", status=2)
    assert not home.exists()


@pytest.mark.process
def test_an_archive_replaced_between_its_hash_and_its_verification_is_refused(
        bundles: Bundles, tmp_path: Path) -> None:
    """The digest recorded is the digest of the bytes verified: another valid archive put
    under the name after hashing is refused before the home is touched."""
    archive = tmp_path / bundles.v1.name
    shutil.copyfile(bundles.v1, archive)
    home = tmp_path / "home"
    paused = Paused(["install", archive, "--home", home], "hashed", tmp_path / "marker")
    replacement = tmp_path / "replacement.zip"
    shutil.copyfile(bundles.v1_other, replacement)
    replacement.replace(archive)
    result = paused.resume()
    assert_refused(result, "install.integrity")
    assert "the archive changed while it was being verified" in result.stderr
    assert not home.exists()


def test_a_copy_of_another_version_under_the_final_name_is_occupied(bundles: Bundles,
                                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v2, home=home).status == 0
    copy_location(home, "0.1.0").parent.mkdir()
    copy_location(home, "0.2.0").rename(copy_location(home, "0.1.0"))
    before = tree_snapshot(home)
    result = hb("install", bundles.v1, home=home)
    assert_refused(result, "install.occupied")
    assert f"native-plugins/example/0.1.0/{HOST}: its plugin.json names example 0.2.0" in (
        result.stderr)
    assert tree_snapshot(home) == before


def test_a_pause_point_without_its_file_is_refused(bundles: Bundles, tmp_path: Path) -> None:
    result = hb("install", bundles.v1, home=tmp_path / "home",
                env={"HORON_INSTALL_PAUSE_AT": "hashed"})
    assert_refused(result, "environment.value")
    assert "needs HORON_INSTALL_PAUSE_FILE" in result.stderr
