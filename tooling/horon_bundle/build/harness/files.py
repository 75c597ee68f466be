"""The files of a harness plugin: what goes into its zip, read from the workspace by the one
hardened tree reader (`core.tree`, with the harness policy `verify.limits.harness_tree`).

In a git work tree: the tracked and untracked-but-not-ignored files (what a clone or copy
gives the host, without build output), each listed path judged by the tree reader; elsewhere
the whole tree, walked. `.git` and the output directory are never included. A symbolic link
is followed, as the host follows it when it copies a plugin, when it resolves inside the
plugin root — resolved hop by hop, never by the kernel; one leading outside, a loop, a hard
link, a FIFO, socket or device, and a tree over its limits are refused, each with its code,
from the file system's stat before a byte is read.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.process import run_quiet
from horon_bundle.core.tree import Tree, TreeFile
from horon_bundle.core.tree_cursor import DIR_FDS, Resolved, locate
from horon_bundle.core.tree_listing import ListedTree
from horon_bundle.core.tree_stream import TreeStream
from horon_bundle.model.harness.layout import (
    COMPONENT_DEFAULTS,
    HOOKS_DEFAULT,
    MANIFEST_DIRS,
    RESERVED,
)
from horon_bundle.verify import limits


@dataclass(slots=True)
class WorkspaceFiles:
    """`PluginFiles` over a walked workspace (read by the same reader as a bundle); each file
    opened through the tree, as judged. Holds the plugin root's descriptor until closed."""

    tree: Tree
    files: dict[str, TreeFile] = field(default_factory=dict)

    def open(self, path: str) -> TreeStream:
        return self.tree.open(path)

    def read_small(self, path: str, limit: int) -> bytes:
        info = self.files[path]
        if info.size > limit:
            raise Refused.one(codes.JSON_TOO_LARGE, f"{path}: {info.size} bytes, limit {limit}")
        with self.tree.open(path) as stream:
            chunks = []
            while chunk := stream.read():
                chunks.append(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        self.tree.close()


def _git_listing(root: Path) -> list[str] | None:
    inside = run_quiet(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"])
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    listed = run_quiet(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard", "--", "."])
    if listed.returncode != 0:
        raise Refused.one(codes.SOURCE_GIT, f"{root}: {listed.stderr.strip()[:200]}")
    return sorted({p for p in listed.stdout.split("\0") if p})


def refuse_output_over_plugin(root: Path, out: Path) -> None:
    """The output directory is never bundled, so it must not take plugin files with it: the
    plugin directory itself or one above it (nothing would be left), a manifest directory or
    a component directory the host reads by default (its skills, commands, … would silently
    be missing from the zip)."""
    root, out = root.resolve(), out.resolve()
    if out == root or out in root.parents:
        raise Refused.one(codes.OUTPUT_OVER_PLUGIN,
                          f"--out {out}: the plugin directory {root} lies in it, so every "
                          "file of the plugin would be left out of the bundle")
    if root not in out.parents:
        return
    first = out.relative_to(root).parts[0]
    taken = {*MANIFEST_DIRS, *COMPONENT_DEFAULTS.values(), HOOKS_DEFAULT.split("/")[0]}
    if first in taken:
        raise Refused.one(codes.OUTPUT_OVER_PLUGIN,
                          f"--out {out}: inside {first}/ of the plugin, which the host reads; "
                          f"what it holds would be left out of the bundle")


def plugin_files(root: Path, *, exclude: tuple[Path, ...] = ()) -> WorkspaceFiles:
    """Bundle path -> file, read through the returned tree (the caller closes it); refuses
    what the zip cannot hold faithfully."""
    listing = _git_listing(root)
    kind = Tree if listing is None else ListedTree
    try:
        tree = kind(root, limits.harness_tree(), label=root.name, descriptors=DIR_FDS,
                    exclude=exclude)
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{root}: {exc.strerror or exc}") from None
    try:
        if not isinstance(tree, ListedTree):
            tree.walk()
        else:
            for name in listing or ():
                tree.add(name)
        findings = Findings()
        findings.extend(tree.findings)
        for name in tree.files:
            if problem := paths.path_problem(name):
                findings.add(codes.HARNESS_FILE_TYPE, f"{name!r}: {problem}")
        for first, second in paths.collisions(list(tree.files)):
            findings.add(codes.HARNESS_FILE_TYPE,
                         f"{first!r} and {second!r} collide on case-insensitive file systems")
        for reserved in RESERVED:
            if reserved in tree.files:
                findings.add(codes.HARNESS_RESERVED_PATH,
                             f"{root.name}/{reserved}: the bundle writes this file itself")
        findings.raise_if_any()
    except BaseException:
        tree.close()
        raise
    return WorkspaceFiles(tree, dict(tree.files))


def plugin_directory(root: Path, local: str) -> Path | None:
    """The directory a marketplace lists as `./local`, found below `root` as the tree reader
    follows links (inside the repository, hop by hop); None when it is no such directory."""
    if not local:
        return root
    try:
        found = locate(root, local, descriptors=DIR_FDS)
    except OSError:
        return None
    if not isinstance(found, Resolved) or not stat.S_ISDIR(found.info.st_mode):
        return None
    return root.joinpath(*found.real)


def source_state(root: Path, exclude: tuple[Path, ...]) -> tuple[str | None, bool | None,
                                                                  int | None]:
    """(revision, dirty, commit time) of the plugin's checkout; the output directory does not
    make it dirty. All None outside git."""
    inside = run_quiet(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"])
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return None, None, None
    head = run_quiet(["git", "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"])
    if head.returncode != 0:
        return None, True, None
    pathspecs = ["."]
    for path in exclude:
        resolved = path.resolve()
        if resolved == root.resolve() or root.resolve() in resolved.parents:
            pathspecs.append(f":(exclude){resolved.relative_to(root.resolve()).as_posix()}")
    status = run_quiet(["git", "-C", str(root), "status", "--porcelain",
                        "--untracked-files=normal", "--", *pathspecs])
    when = run_quiet(["git", "-C", str(root), "log", "-1", "--format=%ct", "HEAD"])
    if status.returncode != 0 or when.returncode != 0:
        raise Refused.one(codes.SOURCE_GIT, f"{root}: {status.stderr.strip()[:200]}")
    return head.stdout.strip(), bool(status.stdout.strip()), int(when.stdout.strip())
