"""Hostile harness plugin trees (issue 20): each refused by `build` with its code, exit 1, no
traceback, nothing written, the workspace untouched, within seconds and bounded memory.

Before the one tree reader (`core.tree`), a hard link to a file outside the root was bundled,
a link to itself was exit 4 (RuntimeError), four links in a cycle through the root hung
(225 MiB after 30 s), 1,100 nested directories and a path over PATH_MAX were exit 4, a 1,950
MiB sparse file was read for 19.8 s and 100,000 small files for 26 s (263 MiB) before their
refusal. Each class is tried here with more cases than those named, in a plain directory (the
walk) and in a git work tree (each listed path judged by the same reader).
"""

from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.build.harness import pipeline as harness_pipeline
from horon_bundle.build.harness import plugin as harness_plugin
from horon_bundle.core import tree
from horon_bundle.verify import limits
from tests.harness_support import commit_all, write_json, write_plugin
from tests.helpers import HANG_GUARD, assert_refused, cli, cli_measured, tree_snapshot

SECONDS = HANG_GUARD  # each refusal below takes about 0.5 s (figures: threat-model.md)


def _nest(root: Path, names: list[str]) -> None:
    """root/names[0]/names[1]/…/leaf, made through descriptors (any total length)."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for name in names:
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.close(os.open("leaf", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
    finally:
        os.close(fd)


def _remove(path: Path) -> None:
    """Remove a tree of any depth (shutil.rmtree recurses: 1,100 levels are too deep)."""
    subprocess.run(["rm", "-rf", str(path)], check=True)


def _outside(plugin: Path) -> Path:
    secret = plugin.parent / "secret.txt"
    secret.write_text("not yours\n")
    return secret


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()


def _device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")


def _sparse(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(1950 << 20)


def _four_cycle(plugin: Path) -> None:
    for index in range(1, 5):
        (plugin / f"d{index}").mkdir()
    for index in range(1, 4):
        (plugin / f"d{index}" / "x").symlink_to(f"../d{index + 1}")
    (plugin / "d4" / "x").symlink_to("..")


def _fan_out(plugin: Path) -> None:
    """Ten links per level to the level below, six levels: a million paths."""
    (plugin / "l0").mkdir()
    (plugin / "l0" / "f").write_text("x\n")
    for level in range(1, 7):
        (plugin / f"l{level}").mkdir()
        for index in range(10):
            (plugin / f"l{level}" / f"k{index}").symlink_to(f"../l{level - 1}")


def _hard_outside(plugin: Path) -> None:
    os.link(_outside(plugin), plugin / "skills" / "leak.txt")


def _hard_inside(plugin: Path) -> None:
    os.link(plugin / "commands" / "review.md", plugin / "commands" / "twin.md")


def _links(*pairs: tuple[str, str | Callable[[Path], Path]]) -> Callable[[Path], None]:
    """Plant links (place, text; a callable text is made from the plugin)."""
    def plant(plugin: Path) -> None:
        for place, text in pairs:
            (plugin / place).symlink_to(text(plugin) if callable(text) else text)
    return plant


Plant = Callable[[Path], None]
CASES: dict[str, tuple[Plant, str, str]] = {
    "hard link to a file outside": (_hard_outside, "harness.hard-link",
                                    "'skills/leak.txt' is a hard link (2 links)"),
    "hard link inside": (_hard_inside, "harness.hard-link", "is a hard link (2 links)"),
    "link to itself": (_links(("skills/me", "me")), "harness.link-loop",
                       "'skills/me' is a symbolic link to 'me'"),
    "2-cycle": (_links(("skills/a", "b"), ("skills/b", "a")), "harness.link-loop",
                "the links loop"),
    "4-cycle through the root": (_four_cycle, "harness.link-loop", "(a cycle)"),
    "four links to the root": (_links(*((f"l{i}", ".") for i in range(4))),
                               "harness.link-loop",
                               "'l0' is a symbolic link to '.', a directory that contains it"),
    "link to /etc/passwd": (_links(("skills/p", "/etc/passwd")), "harness.path-unsafe",
                            "'/etc/passwd', outside the root"),
    "link through ..": (_links(("skills/up", lambda p: Path("../..") / _outside(p).name)),
                        "harness.path-unsafe", "outside the root"),
    "absolute link to a file outside": (_links(("skills/abs", _outside)),
                                        "harness.path-unsafe", "outside the root"),
    "dangling link": (_links(("skills/gone", "nowhere")), "harness.file-type",
                      "which does not exist"),
    "1,100 nested directories": (lambda p: _nest(p, ["d"] * 1100), "harness.tree-limit",
                                 "lies deeper than 64 directories"),
    "a path over PATH_MAX": (lambda p: _nest(p, ["n" * 250] * 20), "harness.tree-limit",
                             "is longer than 512 bytes"),
    "a name over NAME_MAX in a link": (_links(("skills/far", "x" * 300)),
                                       "harness.tree-limit",
                                       "a name in it is longer than 255 bytes"),
    "a 1,950 MiB sparse file": (lambda p: _sparse(p / "big.bin"), "harness.tree-limit",
                                "'big.bin': 2044723200 bytes, limit 536870912"),
    "FIFO": (lambda p: os.mkfifo(p / "skills" / "pipe"), "harness.file-type", "is a FIFO"),
    "socket": (lambda p: _socket(p / "sock"), "harness.file-type", "is a socket"),
    "device": (lambda p: _device(p / "null"), "harness.file-type", "is a device"),
    "link fan-out": (_fan_out, "harness.tree-limit", "more than 100000 entries"),
}
# git lists no FIFO, socket or device, nor a path longer than PATH_MAX (a clone would not hold
# one either); it lists the 1,100-deep file, whose path is then refused by its length first
NOT_LISTED_BY_GIT = {"FIFO", "socket", "device", "a path over PATH_MAX"}
LISTED_WORDS = {"1,100 nested directories": "is longer than 512 bytes"}


@pytest.mark.parametrize(("checkout", "case"), [
    (checkout, case) for checkout in ("directory", "git") for case in sorted(CASES)
    if checkout == "directory" or case not in NOT_LISTED_BY_GIT])  # git lists no such file
def test_a_hostile_tree_is_refused_early_with_its_code(tmp_path: Path, case: str,
                                                       checkout: str) -> None:
    plant, code, words = CASES[case]
    if checkout == "git":
        words = LISTED_WORDS.get(case, words)
    plugin = write_plugin(tmp_path / "plugin")
    if checkout == "git":
        commit_all(plugin)
    plant(plugin)
    out = tmp_path / "out"
    before = tree_snapshot(plugin) if case not in ("1,100 nested directories",
                                                   "a path over PATH_MAX") else None
    try:
        start = time.monotonic()
        result = cli("build", plugin, "--out", out)
        elapsed = time.monotonic() - start
        assert_refused(result, code)
        assert words in result.stderr, result.stderr
        assert elapsed < SECONDS, f"{case}: {elapsed:.1f} s"
        assert not out.exists()
        if before is not None:
            assert tree_snapshot(plugin) == before
        refusals = [line for line in result.stderr.splitlines() if line.startswith("ERROR")]
        assert all(len(line) < 400 for line in refusals), refusals
    finally:
        _remove(plugin)


def test_a_hard_link_planted_over_a_tracked_file_is_refused(tmp_path: Path) -> None:
    """git lists the path; the reader judges what stands there now."""
    plugin = write_plugin(tmp_path / "plugin")
    commit_all(plugin)
    review = plugin / "commands" / "review.md"
    review.unlink()
    os.link(_outside(plugin), review)
    result = cli("build", plugin, "--out", tmp_path / "out")
    assert_refused(result, "harness.hard-link")
    assert not (tmp_path / "out").exists()


def test_ignored_files_are_never_judged(tmp_path: Path) -> None:
    """In a work tree only the listed paths are read: an ignored directory may hold a FIFO, a
    hard link and a link loop (build output, a cache) without refusing the plugin."""
    plugin = write_plugin(tmp_path / "plugin")
    (plugin / ".gitignore").write_text("cache/\n")
    commit_all(plugin)
    cache = plugin / "cache"
    cache.mkdir()
    os.mkfifo(cache / "pipe")
    os.link(_outside(plugin), cache / "leak")
    (cache / "loop").symlink_to(".")
    result = cli("build", plugin, "--out", tmp_path / "out")
    assert result.status == 0, result.stderr


def _swap_on_first_open(monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]) -> None:
    original = tree.Tree.open
    done: list[bool] = []

    def racing(self: tree.Tree, path: str) -> object:
        if not done:
            done.append(True)
            swap()
        return original(self, path)

    monkeypatch.setattr(tree.Tree, "open", racing)


def test_a_directory_swapped_for_a_link_after_the_walk_is_not_entered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plugin = write_plugin(tmp_path / "plugin")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    write_json(elsewhere / "plugin.json", {"name": "evil", "version": "6.6.6"})

    def swap() -> None:
        (plugin / ".claude-plugin").rename(tmp_path / "walked")
        (plugin / ".claude-plugin").symlink_to(elsewhere, target_is_directory=True)

    _swap_on_first_open(monkeypatch, swap)
    result = cli("build", plugin, "--out", tmp_path / "out")
    assert_refused(result, "harness.changed")
    assert "stopped being a directory" in result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("swap", ["fifo", "grown", "removed"])
def test_a_file_changed_between_the_walk_and_its_copy_is_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str) -> None:
    plugin = write_plugin(tmp_path / "plugin")
    target = plugin / "commands" / "review.md"

    def change() -> None:
        if swap == "fifo":
            target.unlink()
            os.mkfifo(target)
        elif swap == "grown":
            with target.open("a") as stream:
                stream.write("more\n")
        else:
            target.unlink()

    real_write = harness_plugin.write

    def racing(*args: Any, **kwargs: Any) -> Any:  # after the walk and every read, before
        change()                                   # the copy
        return real_write(*args, **kwargs)

    monkeypatch.setattr(harness_pipeline, "write", racing)
    out = tmp_path / "out"
    result = cli("build", plugin, "--out", out)
    assert_refused(result, "harness.changed")
    assert tree_snapshot(out) == {}


def test_a_marketplace_entry_through_a_link_loop_is_refused(tmp_path: Path) -> None:
    repository = tmp_path / "market"
    write_plugin(repository / "real" / "guard")
    (repository / "plugins").symlink_to("plugins")
    (repository / "linked").symlink_to("real", target_is_directory=True)
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": "m", "owner": {"name": "o"},
        "plugins": [{"name": "looped", "source": "./plugins/x"},
                    {"name": "guard-kit", "source": "./linked/guard"}]})
    result = cli("build", repository, "--out", tmp_path / "out")
    assert_refused(result, "marketplace.invalid")
    assert "./plugins/x is not a directory of the repository" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_marketplace_entry_through_an_inside_link_builds(tmp_path: Path) -> None:
    repository = tmp_path / "market"
    write_plugin(repository / "real" / "guard")
    (repository / "linked").symlink_to("real", target_is_directory=True)
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": "m", "owner": {"name": "o"},
        "plugins": [{"name": "guard-kit", "source": "./linked/guard"}]})
    result = cli("build", repository, "--out", tmp_path / "out")
    assert result.status == 0, result.stderr


def test_a_workspace_path_looping_on_itself_is_refused(tmp_path: Path) -> None:
    (tmp_path / "ws").symlink_to("ws")
    result = cli("build", tmp_path / "ws", "--out", tmp_path / "out")
    assert result.status != 0 and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def _many_files(plugin: Path, count: int) -> None:
    """`count` empty files, a thousand to a directory, made through descriptors."""
    fd = os.open(plugin, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for block in range(count // 1000):
            os.mkdir(f"b{block:03d}", dir_fd=fd)
            sub = os.open(f"b{block:03d}", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            try:
                for index in range(1000):
                    os.close(os.open(f"f{index:04d}", os.O_WRONLY | os.O_CREAT, 0o644,
                                     dir_fd=sub))
            finally:
                os.close(sub)
    finally:
        os.close(fd)


@pytest.mark.process
@pytest.mark.slow  # making 100,000 files takes 10 s (a minute on a loaded machine)
@pytest.mark.parametrize("case", ["100,000 small files", "link fan-out"])
def test_a_huge_tree_is_refused_in_bounded_time_and_memory(tmp_path: Path, case: str) -> None:
    """Before: 100,000 small files were refused after 26 s and 263 MiB; four links in a cycle
    hung at 225 MiB and growing. Now the walk stops at the entry limit: a few seconds (the
    child's start included) and under 160 MiB (measured: 2 to 5 s, 60 to 80 MiB here)."""
    plugin = write_plugin(tmp_path / "plugin")
    if case == "link fan-out":
        _fan_out(plugin)
    else:
        _many_files(plugin, 100_000)
    out = tmp_path / "out"
    measured = cli_measured("build", plugin, "--out", out)
    status, seconds, peak, stderr = (measured.status, measured.seconds, measured.peak_rss_mib,
                                     measured.stderr)
    assert status == 1, stderr
    assert "ERROR harness.tree-limit: plugin: more than 100000 entries" in stderr, stderr
    assert "Traceback" not in stderr
    assert not out.exists()
    assert seconds < HANG_GUARD, seconds
    assert peak < 160, peak
    print(f"{case}: {seconds:.2f} s, {peak:.0f} MiB")


def test_more_files_than_a_harness_zip_holds_is_refused_before_the_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The zip is read back by the archive reader, whose entry limit for a harness zip (all a
    zip without ZIP64 can count) is lower than the plugin tree's: said when the plugin is
    judged, not after every file was copied."""
    monkeypatch.setattr(limits, "HARNESS_MAX_ARCHIVE_ENTRIES", 12)  # 10 files and 3 generated
    plugin = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    result = cli("build", plugin, "--out", out)
    assert_refused(result, "harness.tree-limit")
    assert "plugin: 10 files; its zip would hold 13 entries, and a zip holds at most 12 " \
           "(without ZIP64, which no reader of ours accepts)" in result.stderr
    assert not out.exists()


def test_a_zip_unpacking_into_more_than_a_harness_bundle_holds_is_refused_before_the_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """18 entries in the plugin tree (10 files, 8 directories), 21 once the three root files
    are added: the unpacked bundle's limit is the plugin tree's, checked on the zip too."""
    plugin = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    monkeypatch.setattr(limits, "HARNESS_MAX_ENTRIES", 20)
    result = cli("build", plugin, "--out", out)
    assert_refused(result, "harness.tree-limit")
    assert "plugin: its zip would unpack into 21 files and directories, and an unpacked " \
           "harness bundle holds at most 20" in result.stderr
    assert not out.exists()
    monkeypatch.setattr(limits, "HARNESS_MAX_ENTRIES", 21)
    assert cli("build", plugin, "--out", out).status == 0


def test_a_plugin_of_more_files_than_a_native_bundle_holds_builds(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A native bundle's entries are no limit of a harness zip (12,000 real files:
    tests/build/test_harness_many_files.py)."""
    monkeypatch.setattr(limits, "MAX_ENTRIES", 12)
    plugin = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    assert cli("build", plugin, "--out", out).status == 0
    [built] = out.glob("*.zip")
    assert cli("verify", built).status == 0
