"""The files of a harness plugin: what goes into its zip, read from the workspace.

In a git work tree: the tracked and untracked-but-not-ignored files (what a clone or copy
gives the host, without build output); elsewhere every file. `.git` and the output directory
are never included. A symbolic link is followed, as the host follows it when it copies a
plugin, when it resolves inside the plugin root; one pointing outside is refused.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.process import run_quiet
from horon_bundle.model.harness.layout import (
    COMPONENT_DEFAULTS,
    HOOKS_DEFAULT,
    MANIFEST_DIRS,
    RESERVED,
)

_MAX_LINK_DEPTH = 8


@dataclass(frozen=True, slots=True)
class SourceFile:
    path: str  # bundle path
    source: Path  # the file whose bytes it holds (a link's target)
    size: int
    executable: bool | None


@dataclass(slots=True)
class WorkspaceFiles:
    """`PluginFiles` over a workspace listing (read by the same reader as a bundle)."""

    files: dict[str, SourceFile]

    def read_small(self, path: str, limit: int) -> bytes:
        info = self.files[path]
        if info.size > limit:
            raise Refused.one(codes.JSON_TOO_LARGE, f"{path}: {info.size} bytes, limit {limit}")
        try:
            return info.source.read_bytes()
        except OSError as exc:
            raise Refused.one(codes.HARNESS_FILE_TYPE,
                              f"{path}: cannot be read ({exc.strerror or exc})") from None


def _git_listing(root: Path) -> list[str] | None:
    inside = run_quiet(["git", "-C", str(root), "rev-parse", "--is-inside-work-tree"])
    if inside.returncode != 0 or inside.stdout.strip() != "true":
        return None
    listed = run_quiet(["git", "-C", str(root), "ls-files", "-z", "--cached", "--others",
                        "--exclude-standard", "--", "."])
    if listed.returncode != 0:
        raise Refused.one(codes.SOURCE_GIT, f"{root}: {listed.stderr.strip()[:200]}")
    return sorted({p for p in listed.stdout.split("\0") if p})


def _walk(root: Path) -> list[str]:
    found = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        base = Path(directory).relative_to(root)
        for name in names:
            found.append((base / name).as_posix())
        for name in dirs:  # links to directories are followed below, like files
            if (Path(directory) / name).is_symlink():
                found.append((base / name).as_posix())
    return sorted(set(found))


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


def plugin_files(root: Path, *, exclude: tuple[Path, ...] = ()) -> dict[str, SourceFile]:
    """Bundle path -> source file; refuses what the zip cannot hold faithfully."""
    root = root.resolve()
    excluded = tuple(e.resolve() for e in exclude)
    listing = _git_listing(root)
    names = listing if listing is not None else _walk(root)
    findings = Findings()
    files: dict[str, SourceFile] = {}
    for name in names:
        if name == ".git" or name.startswith(".git/") or "/.git/" in f"/{name}":
            continue
        _add(root, name, root / name, files=files, findings=findings, excluded=excluded,
             depth=0)
    for first, second in paths.collisions(list(files)):
        findings.add(codes.HARNESS_FILE_TYPE,
                     f"{first!r} and {second!r} collide on case-insensitive file systems")
    for reserved in RESERVED:
        if reserved in files:
            findings.add(codes.HARNESS_RESERVED_PATH,
                         f"{root.name}/{reserved}: the bundle writes this file itself")
    findings.raise_if_any()
    return files


def _add(root: Path, name: str, path: Path, *, files: dict[str, SourceFile], findings: Findings,
         excluded: tuple[Path, ...], depth: int) -> None:
    if any(path == e or e in path.parents for e in excluded):
        return
    if problem := paths.path_problem(name):
        findings.add(codes.HARNESS_FILE_TYPE, f"{name!r}: {problem}")
        return
    try:
        info = path.lstat()
    except OSError:
        return  # listed by git but deleted from the work tree: not part of the plugin
    if stat.S_ISLNK(info.st_mode):
        target = path.resolve()
        if target != root and root not in target.parents:
            findings.add(codes.HARNESS_PATH_UNSAFE,
                         f"{name!r} is a symbolic link to {target}, outside the plugin root")
            return
        if any(e == target or e in target.parents for e in excluded):
            return
        if depth >= _MAX_LINK_DEPTH:
            findings.add(codes.HARNESS_PATH_UNSAFE,
                         f"{name!r}: symbolic links nest deeper than {_MAX_LINK_DEPTH} (a cycle?)")
            return
        if target.is_dir():
            for child in sorted(target.iterdir()):
                if child.name != ".git":
                    _add(root, f"{name}/{child.name}", child, files=files, findings=findings,
                         excluded=excluded, depth=depth + 1)
            return
        path, info = target, target.stat()
    if stat.S_ISDIR(info.st_mode):  # a submodule or nested checkout git lists as one entry
        for child in sorted(path.iterdir()):
            if child.name != ".git":
                _add(root, f"{name}/{child.name}", child, files=files, findings=findings,
                     excluded=excluded, depth=depth)
        return
    if not stat.S_ISREG(info.st_mode):
        findings.add(codes.HARNESS_FILE_TYPE, f"{name!r} is a FIFO, socket or device")
        return
    executable = bool(info.st_mode & stat.S_IXUSR) if os.name == "posix" else None
    files[name] = SourceFile(name, path, info.st_size, executable)


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
