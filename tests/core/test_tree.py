"""The one hardened tree reader (`core.tree`), driven directly with the harness policy (links
followed inside the root) and the bundle policy (no link at all).

Every class of hostile tree: links (to themselves, in cycles, through the root, outside,
through `..`, absolute, dangling, chained past 40, a name over NAME_MAX), hard links, FIFOs,
sockets and devices, and each limit exactly at and one past its figure; then what the walk
hands out: files reached through links read from their target, a file changed between walk
and read refused, excluded directories and `.git` never entered, a listing (git's) judged
path by path.
"""

from __future__ import annotations

import dataclasses
import os
import socket
import stat
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.tree import Tree
from horon_bundle.core.tree_cursor import (
    DIR_FDS,
    MAX_COMPONENT_BYTES,
    MAX_LINK_HOPS,
    Resolved,
    locate,
)
from horon_bundle.core.tree_listing import ListedTree
from horon_bundle.core.tree_policy import TreePolicy
from horon_bundle.verify import limits


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A small plugin-like tree: two files, one executable, in two directories."""
    plugin = tmp_path / "plugin"
    (plugin / "skills" / "s").mkdir(parents=True)
    (plugin / "skills" / "s" / "SKILL.md").write_text("skill\n")
    (plugin / "bin").mkdir()
    (plugin / "bin" / "run").write_text("#!/bin/sh\n")
    (plugin / "bin" / "run").chmod(0o755)
    return plugin


def _walk(root: Path, policy: TreePolicy | None = None, *, descriptors: bool = DIR_FDS,
          exclude: tuple[Path, ...] = ()) -> Tree:
    tree = Tree(root, policy or limits.harness_tree(), label=root.name,
                descriptors=descriptors, exclude=exclude)
    tree.walk()
    return tree


def _found(tree: Tree) -> list[tuple[str, str]]:
    return [(f.code.name, f.message) for f in tree.findings]


@pytest.fixture(params=[True, False] if DIR_FDS else [False])
def descriptors(request: pytest.FixtureRequest) -> bool:
    """Walked through descriptors and (as where the OS has none) by path."""
    return bool(request.param)


def test_a_plain_tree_is_every_file_with_its_size_and_bit(root: Path, descriptors: bool) -> None:
    tree = _walk(root, descriptors=descriptors)
    assert not tree.findings
    assert sorted(tree.files) == ["bin/run", "skills/s/SKILL.md"]
    assert (tree.files["bin/run"].size, tree.files["bin/run"].executable) == (10, True)
    assert tree.files["skills/s/SKILL.md"].executable is False
    with tree.open("skills/s/SKILL.md") as stream:
        assert stream.read() == b"skill\n"
    tree.close()


# --- links -------------------------------------------------------------------------------

def test_a_link_inside_the_root_is_read_from_its_target(root: Path, descriptors: bool) -> None:
    (root / "skills" / "again.md").symlink_to("s/SKILL.md")
    (root / "tools").symlink_to("bin", target_is_directory=True)
    (root / "abs").symlink_to(root / "bin" / "run")  # absolute, into the root
    tree = _walk(root, descriptors=descriptors)
    assert not tree.findings
    assert sorted(tree.files) == ["abs", "bin/run", "skills/again.md", "skills/s/SKILL.md",
                                  "tools/run"]
    assert tree.files["tools/run"].real == ("bin", "run")
    assert tree.files["skills/again.md"].real == ("skills", "s", "SKILL.md")
    for path in ("abs", "tools/run"):
        with tree.open(path) as stream:
            assert stream.read() == b"#!/bin/sh\n"
    tree.close()


def test_links_through_dot_dot_inside_the_root_are_followed(root: Path) -> None:
    (root / "skills" / "s" / "up").symlink_to("../../bin/./run")
    (root / "skills" / "s" / "via").symlink_to("../s/../../bin/", target_is_directory=True)
    tree = _walk(root)
    assert not tree.findings
    assert tree.files["skills/s/up"].real == ("bin", "run")
    assert tree.files["skills/s/via/run"].real == ("bin", "run")


HOSTILE_LINKS = {
    "to itself": ([("skills/me", "me")], "harness.link-loop", "'skills/me' is a symbolic "
                  "link to 'me': the links loop"),
    "a 2-cycle": ([("skills/a", "b"), ("skills/b", "a")], "harness.link-loop",
                  "'skills/a' is a symbolic link to 'b': the links loop"),
    "to the root": ([("loop", ".")], "harness.link-loop",
                    "'loop' is a symbolic link to '.', a directory that contains it (a cycle)"),
    "to its own directory": ([("skills/s/here", "../s")], "harness.link-loop",
                             "'skills/s/here' is a symbolic link to 'skills/s', a directory "
                             "that contains it (a cycle)"),
    "/etc/passwd": ([("skills/p", "/etc/passwd")], "harness.path-unsafe",
                    "'skills/p' is a symbolic link to '/etc/passwd', outside the root"),
    "through ..": ([("skills/up", "../../secret.txt")], "harness.path-unsafe",
                   "'skills/up' is a symbolic link to '../../secret.txt', outside the root"),
    "out and back in": ([("skills/back", "../../plugin/bin/run")], "harness.path-unsafe",
                        "outside the root"),
    "to /": ([("skills/slash", "/")], "harness.path-unsafe", "outside the root"),
    "to nothing": ([("skills/gone", "absent")], "harness.file-type",
                   "'skills/gone' is a symbolic link to 'absent', which does not exist"),
    "through a file": ([("skills/into", "s/SKILL.md/x")], "harness.file-type",
                       "which does not exist"),
    "a name over NAME_MAX": ([("skills/far", "x" * (MAX_COMPONENT_BYTES + 1))],
                             "harness.tree-limit", "a name in it is longer than 255 bytes"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE_LINKS))
def test_a_hostile_link_is_refused_with_its_code(root: Path, descriptors: bool,
                                                 case: str) -> None:
    links, code, words = HOSTILE_LINKS[case]
    (root.parent / "secret.txt").write_text("not yours\n")
    for place, text in links:
        (root / place).symlink_to(text)
    tree = _walk(root, descriptors=descriptors)
    tree.close()
    assert [f.code.name for f in tree.findings][:1] == [code], _found(tree)
    assert words in tree.findings.items[0].message
    assert sorted(tree.files) == ["bin/run", "skills/s/SKILL.md"]


def test_four_links_in_a_cycle_through_the_root_are_one_finding_each(root: Path) -> None:
    for index in range(1, 5):
        (root / f"d{index}").mkdir()
    for index in range(1, 4):
        (root / f"d{index}" / "x").symlink_to(f"../d{index + 1}")
    (root / "d4" / "x").symlink_to("..")
    tree = _walk(root)
    assert [f.code.name for f in tree.findings] == ["harness.link-loop"]
    assert "'d1/x/x/x/x' is a symbolic link to '.'" in tree.findings.items[0].message


@pytest.mark.parametrize("chained", [MAX_LINK_HOPS, MAX_LINK_HOPS + 1])
def test_a_chain_of_links_is_followed_up_to_the_kernels_limit(root: Path, chained: int) -> None:
    (root / "c0").symlink_to("bin/run")
    for index in range(1, chained):
        (root / f"c{index}").symlink_to(f"c{index - 1}")
    tree = _walk(root)
    last = f"c{chained - 1}"
    if chained <= MAX_LINK_HOPS:
        assert not tree.findings and tree.files[last].real == ("bin", "run")
    else:
        assert _found(tree) == [("harness.link-loop", f"plugin: {last!r} is a symbolic link "
                                 f"to 'c{chained - 2}': the links loop (one reached again, or "
                                 "more than 40 followed)")]


def test_a_fan_out_of_links_stops_at_the_entry_limit(root: Path) -> None:
    """Ten links per level to the level below, six levels: a million paths from sixty links;
    each link resolved once, each directory listed once, the walk stopped at the limit."""
    (root / "l0").mkdir()
    (root / "l0" / "f").write_text("x\n")
    for level in range(1, 7):
        (root / f"l{level}").mkdir()
        for index in range(10):
            (root / f"l{level}" / f"k{index}").symlink_to(f"../l{level - 1}")
    policy = dataclasses.replace(limits.harness_tree(), max_entries=5_000)
    tree = _walk(root, policy)
    assert _found(tree) == [("harness.tree-limit", "plugin: more than 5000 entries")]


def test_the_bundle_policy_follows_no_link(root: Path, descriptors: bool) -> None:
    (root / "tools").symlink_to("bin", target_is_directory=True)
    tree = _walk(root, limits.bundle_tree(), descriptors=descriptors)
    assert _found(tree) == [("layout.symlink", "plugin: 'tools' is a symbolic link")]
    assert "tools/run" not in tree.files


# --- hard links and special files ---------------------------------------------------------

@pytest.mark.parametrize("where", ["outside", "inside"])
def test_every_hard_link_is_refused(root: Path, where: str) -> None:
    if where == "outside":
        secret = root.parent / "secret.txt"
        secret.write_text("not yours\n")
        os.link(secret, root / "skills" / "leak.txt")
        named = "skills/leak.txt"
    else:
        os.link(root / "bin" / "run", root / "bin" / "twin")
        named = "bin/run"
    tree = _walk(root)
    assert ("harness.hard-link", f"plugin: {named!r} is a hard link (2 links)") in _found(tree)
    assert named not in tree.files


def _device(path: Path) -> None:
    try:
        os.mknod(path, stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("making a device node needs root")


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()


@pytest.mark.parametrize(("kind", "words"), [("fifo", "a FIFO"), ("socket", "a socket"),
                                             ("device", "a device")])
def test_special_files_are_refused_from_their_lstat(root: Path, descriptors: bool, kind: str,
                                                   words: str) -> None:
    path = root / "skills" / "odd"
    {"fifo": os.mkfifo, "socket": _socket, "device": _device}[kind](path)
    (root / "linked").symlink_to("skills/odd")
    tree = _walk(root, descriptors=descriptors)
    assert _found(tree) == [("harness.file-type", f"plugin: 'linked' is {words}"),
                            ("harness.file-type", f"plugin: 'skills/odd' is {words}")]


# --- limits --------------------------------------------------------------------------------

def test_each_size_limit_is_exact(root: Path) -> None:
    """bin/run holds 10 bytes, SKILL.md 6: a limit of exactly that passes."""
    exact = dataclasses.replace(limits.harness_tree(), max_file_bytes=10, max_total_bytes=16)
    assert not _walk(root, exact).findings
    smaller = dataclasses.replace(exact, max_file_bytes=9)
    assert _found(_walk(root, smaller)) == [("harness.tree-limit",
                                             "plugin: 'bin/run': 10 bytes, limit 9")]


def test_a_file_over_the_size_limit_is_refused_without_reading_it(root: Path) -> None:
    with (root / "big.bin").open("wb") as handle:
        handle.truncate(limits.HARNESS_MAX_FILE_BYTES + 1)
    tree = _walk(root)
    assert _found(tree) == [("harness.tree-limit", f"plugin: 'big.bin': "
                             f"{limits.HARNESS_MAX_FILE_BYTES + 1} bytes, limit "
                             f"{limits.HARNESS_MAX_FILE_BYTES}")]


def test_the_total_stops_the_walk(root: Path) -> None:
    policy = dataclasses.replace(limits.harness_tree(), max_total_bytes=15)
    tree = _walk(root, policy)
    assert _found(tree) == [("harness.tree-limit", "plugin: more than 15 bytes in all files")]
    assert sorted(tree.files) == ["bin/run"]


def test_depth_and_path_length_are_exact(root: Path) -> None:
    policy = dataclasses.replace(limits.harness_tree(), max_depth=3, max_path_bytes=20)
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "ok").write_text("")           # depth 3, 9 bytes
    (root / "a" / "b" / "c" / "d").mkdir()                   # depth 4
    (root / "a" / "b" / "c" / "d" / "no").write_text("")
    (root / "a" / ("n" * 18)).write_text("")                 # 20 bytes: the limit
    (root / "a" / ("m" * 19)).write_text("")                 # 21 bytes
    tree = _walk(root, policy)
    assert _found(tree) == [
        ("harness.tree-limit", f"plugin: {'a/' + 'm' * 19!r}… is longer than 20 bytes"),
        ("harness.tree-limit", "plugin: 'a/b/c/d' lies deeper than 3 directories")]
    assert {"a/b/c/ok", "a/" + "n" * 18} <= set(tree.files)


def test_exactly_the_entry_limit_is_walked(root: Path) -> None:
    entries = sum(1 for _ in root.rglob("*"))
    exact = dataclasses.replace(limits.harness_tree(), max_entries=entries)
    assert not _walk(root, exact).findings
    fewer = dataclasses.replace(limits.harness_tree(), max_entries=entries - 1)
    assert _found(_walk(root, fewer)) == [("harness.tree-limit",
                                           f"plugin: more than {entries - 1} entries")]


# --- what is left out, what is read -------------------------------------------------------

def test_excluded_directories_and_git_are_never_entered(root: Path) -> None:
    out = root / "dist"
    out.mkdir()
    os.mkfifo(out / "pipe")  # judged, it would be refused
    (root / ".git").mkdir()
    os.mkfifo(root / ".git" / "pipe")
    (root / "bin" / ".git").write_text("gitdir: elsewhere\n")
    (root / "via").symlink_to("dist", target_is_directory=True)
    (root / "into").symlink_to("dist/pipe")
    tree = _walk(root, exclude=(out, root.parent / "elsewhere"))
    assert not tree.findings
    assert sorted(tree.files) == ["bin/run", "skills/s/SKILL.md"]


def test_a_file_changed_after_the_walk_is_refused_at_its_read(root: Path) -> None:
    (root / "tools").symlink_to("bin", target_is_directory=True)
    tree = _walk(root)
    (root / "bin" / "run").write_text("#!/bin/sh\nlonger\n")
    for path in ("bin/run", "tools/run"):
        with pytest.raises(Refused) as caught:
            tree.open(path)
        assert caught.value.codes() == ["harness.changed"]
        assert caught.value.findings[0].message == (
            f"plugin: {path!r} was replaced or resized while the plugin was read")
    (root / "bin").rename(root / "elsewhere")
    (root / "bin").symlink_to("/etc", target_is_directory=True)
    with pytest.raises(Refused) as caught:
        tree.open("bin/run")
    assert "stopped being a directory" in caught.value.findings[0].message
    tree.close()


def test_a_listing_is_judged_path_by_path(root: Path) -> None:
    """git's listing: each path resolved as the walk would; a listed directory walked whole,
    a listed link followed, a path no longer there left out; nothing else is looked at."""
    (root / "ignored").mkdir()
    os.mkfifo(root / "ignored" / "pipe")
    (root / "ignored" / "own").write_text("x\n")
    os.link(root / "ignored" / "own", root / "ignored" / "twin")
    (root / "tools").symlink_to("bin", target_is_directory=True)
    (root / "skills" / "loop").symlink_to("..")
    tree = ListedTree(root, limits.harness_tree(), label="plugin", descriptors=DIR_FDS)
    for listed in ("skills/s/SKILL.md", "tools", "gone/file", "skills/loop/s/SKILL.md",
                   ".git/config", "bin"):
        tree.add(listed)
    tree.close()
    assert sorted(tree.files) == ["bin/run", "skills/s/SKILL.md", "tools/run"]
    assert _found(tree) == [
        ("harness.link-loop", "plugin: 'skills/loop' is a symbolic link to '.', a directory "
                              "that contains it (a cycle)")]


def test_a_listed_path_over_a_limit_is_refused_before_it_is_looked_up(root: Path) -> None:
    tree = ListedTree(root, limits.harness_tree(), label="plugin", descriptors=DIR_FDS)
    tree.add("a/" * 65 + "f")
    tree.add("n" * 600)
    tree.close()
    assert [f.code.name for f in tree.findings] == ["harness.tree-limit"] * 2


def test_locate_finds_a_directory_as_the_walk_follows_links(root: Path) -> None:
    (root / "plugins").symlink_to("skills", target_is_directory=True)
    found = locate(root, "plugins/s", descriptors=DIR_FDS)
    assert isinstance(found, Resolved) and found.real == ("skills", "s")
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    assert not isinstance(locate(root, "a/x", descriptors=DIR_FDS), Resolved)
    assert not isinstance(locate(root, "../plugin", descriptors=DIR_FDS), Resolved)
