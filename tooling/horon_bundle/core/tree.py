"""One hardened reader for every directory tree we read: a bundle directory (`verify`, an
installed copy in an agent home, a fetched directory), a harness plugin workspace and each
plugin a marketplace lists (`build`).

A `Tree` is walked once, iteratively (no recursion, whatever the depth), through directory
descriptors (`core.tree_cursor`): every directory is opened relative to its parent with
`O_DIRECTORY | O_NOFOLLOW`, so no path handed to the kernel is longer than one name and the
kernel follows no link. What a tree may hold is its `TreePolicy`:

- limits — entries, directory depth, bytes of one relative path, bytes of one file, bytes of
  all files — each checked from the lstat the listing gives, before any byte of a file is
  read; past the entry or total limit the walk stops instead of going on;
- symbolic links: refused, or (a plugin workspace, whose host follows links when it copies a
  plugin) followed when they resolve inside the root, resolved hop by hop by hand
  (`tree_cursor.resolve_link`); a link leading outside the root, to itself, into a cycle of
  links, or to a directory that contains it is refused with its code;
- a regular file with more than one hard link is refused: its other name may lie anywhere on
  the file system, and nothing inside the tree can tell;
- a FIFO, socket or device is refused from its lstat, never opened;
- (bundles) setuid, setgid and world-writable modes, and empty directories.

Each file is opened once for reading (`O_NOFOLLOW | O_NONBLOCK`, so a FIFO swapped in cannot
block), judged again on that descriptor with `fstat` (a regular file with one link, the inode
and size the walk saw) and streamed from it (`core.tree_stream`): a file replaced, removed,
retyped or grown between the walk and the read is refused with the policy's `changed` code.
"""

from __future__ import annotations

import contextlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core.errors import Code, Finding, Findings, Refused
from horon_bundle.core.inputs import file_kind
from horon_bundle.core.tree_cursor import (
    DIR_FLAGS,
    Cursor,
    Identity,
    Resolved,
    below_root,
    identity,
    resolve_link,
    target_text,
    unresolved_problem,
)
from horon_bundle.core.tree_policy import TreeFile, TreePolicy
from horon_bundle.core.tree_stream import TreeStream

__all__ = ["Frame", "Tree", "TreeFile", "TreePolicy"]

# Windows reports synthetic mode bits (0o666 for every writable file, x for .exe/.bat), so
# mode checks are POSIX-only; archives carry their own Unix modes.
POSIX_MODES = os.name == "posix"
_UNSAFE_MODE = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_FILE_FLAGS = os.O_RDONLY | _O_BINARY | _O_NOFOLLOW | _O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True, slots=True)
class Frame:
    prefix: str               # "" or "a/b/"
    real: tuple[str, ...]
    depth: int
    ancestors: tuple[Identity, ...]  # the directories the logical path passed through
    linked: bool = False  # reached through a link: its listing may be walked again


class Tree:
    """The regular files of a directory tree, judged by `policy`; `files` and `findings`
    once walked (`walk`; `tree_listing.ListedTree.add` for each path a listing names);
    `open` streams one."""

    def __init__(self, root: Path, policy: TreePolicy, *, label: str, descriptors: bool,
                 exclude: tuple[Path, ...] = ()) -> None:
        """Open the root (OSError when it cannot be opened as a directory, never through a
        link); `exclude` names directories left out wherever they are reached."""
        self.root = root
        self.policy = policy
        self.label = label
        self.files: dict[str, TreeFile] = {}
        self.findings = Findings()
        self._descriptors = descriptors
        self._root_fd = os.open(root, DIR_FLAGS) if descriptors else -1
        try:
            self._root = os.fstat(self._root_fd) if descriptors else root.stat()
        except BaseException:
            self.close()
            raise
        self._root_real = os.path.realpath(root) if policy.follow_links or exclude else ""
        self._excluded: list[tuple[str, ...]] = []
        for path in exclude:
            if (below := below_root(self._root_real, path)) is not None:
                self._excluded.append(below)
        # a directory reached through links may be reached again by another path (the host
        # copies it each time): its listing and each link's resolution are taken once
        self._listings: dict[tuple[str, ...], list[tuple[str, os.stat_result]] | None] = {}
        self._links: dict[Identity, Resolved | None] = {}
        self._reported: set[Identity] = set()
        self._entries = 0
        self._bytes = 0
        self._stopped = False
        self._judge_mode(self._root, ".", self.findings)

    # --- walking ----------------------------------------------------------------------------
    def walk(self) -> None:
        """Walk the whole tree from its root."""
        self._walk([Frame("", (), 0, (identity(self._root),))])

    def _walk(self, stack: list[Frame]) -> None:
        while stack and not self._stopped:
            frame = stack.pop()
            if frame.linked and frame.real in self._listings:
                items = self._listings[frame.real]
            else:
                items = self._list(frame.prefix, frame.real, frame.ancestors[-1])
                if frame.linked:
                    self._listings[frame.real] = items
            if items is None:
                continue
            if not items and frame.prefix and self.policy.codes.empty_directory is not None:
                self._add(self.policy.codes.empty_directory,
                          f"{self.label}: empty directory {frame.prefix.rstrip('/')!r}")
            subdirectories = []
            for name, info in items:
                subdirectory = self._entry(frame, name, info)
                if self._stopped:
                    return
                if subdirectory is not None:
                    subdirectories.append(subdirectory)
            stack.extend(reversed(subdirectories))

    def _list(self, prefix: str, real: tuple[str, ...],
              expected: Identity) -> list[tuple[str, os.stat_result]] | None:
        """The entries of one directory, sorted, with their lstat; None (and a finding) when
        it changed since it was judged."""
        shown = prefix.rstrip("/")
        try:
            with self._cursor(real) as cursor:
                if self._descriptors and prefix and identity(cursor.here()) != expected:
                    raise self._changed(shown, "was replaced")
                return cursor.listing()
        except Refused as exc:
            self.findings.extend(exc.findings)
        except FileNotFoundError:
            if self._descriptors:
                self._add(self.policy.codes.changed, self._changed_text(shown, "was removed"))
            else:
                self._add(self.policy.codes.changed, f"{self.label}: {prefix!r}: "
                                                     "No such file or directory")
        except OSError as exc:
            self._add(self.policy.codes.changed, f"{self.label}: {prefix!r}: "
                                                 f"{exc.strerror or exc}")
        return None

    def _entry(self, frame: Frame, name: str, info: os.stat_result) -> Frame | None:
        """Judge one entry; the frame of a directory to walk, else None. (The hot loop of a
        walk: a plain file costs no call beyond its checks.)"""
        policy, found = self.policy, self.policy.codes
        if name in policy.skip_names:
            return None
        self._entries += 1
        if self._entries > policy.max_entries:
            self._stop(found.limit, f"{self.label}: more than {policy.max_entries} entries")
            return None
        relative = frame.prefix + name
        if len(relative.encode("utf-8", "surrogateescape")) > policy.max_path_bytes:
            self._add(found.limit, f"{self.label}: {relative[:80]!r}… is longer than "
                                   f"{policy.max_path_bytes} bytes")
            return None
        mode, linked = info.st_mode, frame.linked
        if stat.S_ISLNK(mode):
            target = self._follow(frame.real, name, info, relative, frame.ancestors)
            if target is None:
                return None
            real, info, mode, linked = target.real, target.info, target.info.st_mode, True
        else:
            real = (*frame.real, name)
            if self._excluded and self._left_out(real):
                return None
        if stat.S_ISREG(mode):
            if info.st_nlink > 1:
                self._problem(linked, info, found.hard_link, f"{self._where(relative)} is a "
                                                             f"hard link ({info.st_nlink} links)")
            elif info.st_size > policy.max_file_bytes:
                self._problem(linked, info, found.limit, f"{self._where(relative)}: "
                                                         f"{info.st_size} bytes, limit "
                                                         f"{policy.max_file_bytes}")
            elif found.mode is None or self._judge_mode(info, relative, self.findings):
                self._bytes += info.st_size
                if self._bytes > policy.max_total_bytes:
                    self._stop(found.limit, f"{self.label}: more than "
                                            f"{policy.max_total_bytes} bytes in all files")
                    return None
                self.files[relative] = TreeFile(
                    relative, real, info.st_size,
                    bool(mode & stat.S_IXUSR) if POSIX_MODES else None,
                    (info.st_dev, info.st_ino, info.st_size))
            return None
        if stat.S_ISDIR(mode):
            self._judge_mode(info, relative, self.findings)
            if frame.depth + 1 > policy.max_depth:
                self._problem(linked, info, found.limit, f"{self._where(relative)} lies deeper "
                                                         f"than {policy.max_depth} directories")
                return None
            return Frame(relative + "/", real, frame.depth + 1,
                          (*frame.ancestors, identity(info)), linked)
        self._problem(linked, info, found.file_type, f"{self._where(relative)} is "
                                                     f"{file_kind(mode)}")
        return None

    def _follow(self, real: tuple[str, ...], name: str, link: os.stat_result, relative: str,
                ancestors: tuple[Identity, ...]) -> Resolved | None:
        """What the link `name` in `real` resolves to; None (and, the first time this link is
        met, a finding) when it may not be followed, or leads into an excluded directory."""
        key = identity(link)
        if key in self._links:
            target = self._links[key]
        else:
            target = self._links[key] = self._resolve(real, name, relative)
        if target is None or self._left_out(target.real):
            return None
        if stat.S_ISDIR(target.info.st_mode) and identity(target.info) in ancestors:
            if self._first(key):  # one finding per link, however often it is reached
                self._add(self.policy.codes.loop,
                          f"{self._where(relative)} is a symbolic link to "
                          f"{target_text(target)!r}, a directory that contains it (a cycle)")
            return None
        return target

    def _resolve(self, real: tuple[str, ...], name: str, relative: str) -> Resolved | None:
        found, where = self.policy.codes, self._where(relative)
        if not self.policy.follow_links:
            self._add(found.link, f"{where} is a symbolic link")
            return None
        try:
            with self._cursor(real) as cursor:
                target = resolve_link(cursor, name, root_real=self._root_real)
        except OSError as exc:
            self._add(found.changed, f"{where}: {exc.strerror or exc} {self.policy.during}")
            return None
        if isinstance(target, Resolved):
            return target
        kind, message = unresolved_problem(target, where)
        self._add({"link": found.link, "loop": found.loop, "file_type": found.file_type,
                   "limit": found.limit}[kind], message)
        return None

    def _left_out(self, real: tuple[str, ...]) -> bool:
        return any(real[:len(excluded)] == excluded for excluded in self._excluded)

    # --- findings ---------------------------------------------------------------------------
    def _first(self, key: Identity) -> bool:
        """Whether `key` is reported for the first time (a file or link reached through links
        is reported once, however many paths lead to it)."""
        if key in self._reported:
            return False
        self._reported.add(key)
        return True

    def _problem(self, linked: bool, info: os.stat_result, code: Code, message: str) -> None:
        if not linked or self._first(identity(info)):
            self._add(code, message)

    def _where(self, relative: str) -> str:
        return f"{self.label}: {relative!r}"

    def _add(self, code: Code, message: str) -> None:
        self.findings.add(code, message)

    def _stop(self, code: Code, message: str) -> None:
        self._add(code, message)
        self._stopped = True

    def _changed_text(self, path: str, what: str) -> str:
        return f"{self.label}: {path!r} {what} {self.policy.during}"

    def _changed(self, path: str, what: str) -> Refused:
        return Refused.one(self.policy.codes.changed, self._changed_text(path, what))

    def _judge_mode(self, info: os.stat_result, relative: str, findings: Findings) -> bool:
        code = self.policy.codes.mode
        if code is not None and POSIX_MODES and info.st_mode & _UNSAFE_MODE:
            what = "directory" if stat.S_ISDIR(info.st_mode) else "file"
            findings.add(code, f"{self.label}: {what} {relative!r} has mode "
                               f"{stat.S_IMODE(info.st_mode):o}")
            return False
        return True

    def _cursor(self, real: tuple[str, ...]) -> Cursor:
        """A cursor standing in the directory `real` (FileNotFoundError, NotADirectoryError
        or ELOOP when one of its components is no longer a directory)."""
        cursor = Cursor(self.root, self._root_fd, descriptors=self._descriptors)
        try:
            for part in real:
                cursor.down(part)
        except BaseException:
            cursor.close()
            raise
        return cursor

    # --- reading ----------------------------------------------------------------------------
    def open(self, path: str) -> TreeStream:
        """Stream one of `files`; Refused (never OSError) when it cannot be read as judged."""
        item = self.files[path]
        try:
            cursor = self._cursor(item.real[:-1])
        except FileNotFoundError:
            raise self._changed(path, "was removed") from None
        except OSError as exc:
            raise self._changed(path, f"stopped being a directory ({exc.strerror})") from None
        try:
            fd = cursor.open_file(item.real[-1], _FILE_FLAGS)
        except FileNotFoundError:
            raise self._changed(path, "was removed") from None
        except OSError as exc:
            raise self._changed(path, f"could not be opened ({exc.strerror})") from None
        finally:
            cursor.close()
        try:
            self._judge_open(fd, item)
        except BaseException:
            os.close(fd)
            raise
        return TreeStream(fd, item.size, self._where(path), self.policy.codes.changed)

    def _judge_open(self, fd: int, item: TreeFile) -> None:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise self._changed(item.path, f"became {file_kind(info.st_mode)}")
        if info.st_nlink > 1:
            raise self._changed(item.path, f"became a hard link ({info.st_nlink} links)")
        problems = Findings()
        if not self._judge_mode(info, item.path, problems):
            raise Refused([Finding(self.policy.codes.changed, f"{f.message}: changed "
                                                              f"{self.policy.during}")
                           for f in problems])
        if (info.st_dev, info.st_ino, info.st_size) != item.seen:
            raise self._changed(item.path, "was replaced or resized")

    def close(self) -> None:
        if self._root_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._root_fd)
            self._root_fd = -1
