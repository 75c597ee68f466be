"""A position in a walked tree, and symbolic links resolved by hand, one hop at a time.

`Cursor` holds the real directories from the tree's root down, each opened relative to its
parent with `O_DIRECTORY | O_NOFOLLOW` (where the OS has no descriptor-relative calls, their
paths): no link is ever followed by the kernel and no path handed to it is longer than one
name, so neither ENAMETOOLONG nor ELOOP can arise from a tree of any shape.

`resolve_link` follows a link the way the kernel would, but itself: it reads the link's
text and walks it component by component from the directory holding the link, `..` moving to
the real parent. Every hop is checked: a name over `MAX_COMPONENT_BYTES` (NAME_MAX) is
refused by its length before any call, a step above the root (or an absolute target outside
it) is outside, the same link reached twice or more than `MAX_LINK_HOPS` links is a loop, a
missing component is missing. The answer is the target's real place below the root and its lstat.
"""

from __future__ import annotations

import errno
import os
import stat
from dataclasses import dataclass
from pathlib import Path

_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
DIR_FLAGS = os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC
# descriptor-relative opens and listings (POSIX); elsewhere paths, walked the same way
DIR_FDS = os.open in os.supports_dir_fd and os.scandir in os.supports_fd
MAX_COMPONENT_BYTES = 255  # bytes of one file name: NAME_MAX (Linux, the BSDs, macOS)
MAX_LINK_HOPS = 40   # links followed to resolve one name (Linux's MAXSYMLINKS)

Identity = tuple[int, int]  # (st_dev, st_ino)


def identity(info: os.stat_result) -> Identity:
    return info.st_dev, info.st_ino


class Cursor:
    """The real directories from the root down to where it stands; closed together."""

    def __init__(self, root: Path, root_fd: int, *, descriptors: bool) -> None:
        self.root = root
        self.parts: list[str] = []
        self._descriptors = descriptors
        self._fds = [os.dup(root_fd)] if descriptors else []

    @property
    def path(self) -> Path:
        return self.root.joinpath(*self.parts)

    def lstat(self, name: str) -> os.stat_result:
        if self._descriptors:
            return os.stat(name, dir_fd=self._fds[-1], follow_symlinks=False)
        return os.lstat(self.path / name)

    def readlink(self, name: str) -> str:
        if self._descriptors:
            return os.readlink(name, dir_fd=self._fds[-1])
        return str((self.path / name).readlink())

    def down(self, name: str) -> None:
        """Into the directory `name` (never through a link: ELOOP or ENOTDIR if it is one)."""
        if self._descriptors:
            self._fds.append(os.open(name, DIR_FLAGS, dir_fd=self._fds[-1]))
        elif not stat.S_ISDIR(os.lstat(self.path / name).st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), name)
        self.parts.append(name)

    def up(self) -> None:
        if self._descriptors:
            os.close(self._fds.pop())
        self.parts.pop()

    def to_root(self) -> None:
        while self.parts:
            self.up()

    def here(self) -> os.stat_result:
        """The stat of the directory the cursor stands in."""
        return os.fstat(self._fds[-1]) if self._descriptors else os.lstat(self.path)

    def listing(self) -> list[tuple[str, os.stat_result]]:
        """The entries of this directory, sorted by name, with their lstat."""
        with os.scandir(self._fds[-1] if self._descriptors else self.path) as scan:
            return sorted(((e.name, e.stat(follow_symlinks=False)) for e in scan),
                          key=lambda item: item[0])

    def open_file(self, name: str, flags: int) -> int:
        if self._descriptors:
            return os.open(name, flags, dir_fd=self._fds[-1])
        return os.open(self.path / name, flags)

    def close(self) -> None:
        while self._fds:
            os.close(self._fds.pop())
        self.parts.clear()

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# what a link resolves to, when it resolves to nothing usable
OUTSIDE, LOOP, MISSING, TOO_LONG = "outside", "loop", "missing", "too-long"


@dataclass(frozen=True, slots=True)
class Resolved:
    real: tuple[str, ...]  # its place below the root, every component a real name
    info: os.stat_result   # its lstat (never a link)


@dataclass(frozen=True, slots=True)
class Unresolved:
    why: str    # OUTSIDE, LOOP, MISSING or TOO_LONG
    text: str   # the text of the first link, as written


def resolve_link(cursor: Cursor, name: str, *, root_real: str) -> Resolved | Unresolved:
    """Resolve the link `name` in the cursor's directory; the cursor is left at the target's
    parent (the caller closes it). `root_real` is the root's own real path, for absolute
    targets that point into the root."""
    text = cursor.readlink(name)
    return resolve_text(cursor, text, root_real=root_real,
                        seen={identity(cursor.lstat(name))}, shown=text)


def resolve_text(cursor: Cursor, text: str, *, root_real: str, seen: set[Identity] | None = None,
                 shown: str | None = None) -> Resolved | Unresolved:
    """Resolve the path `text` from the cursor's directory as a link's text is resolved:
    every link on the way followed by hand, each hop checked. `seen` holds the links already
    followed; `shown` is what an Unresolved names (the text itself by default)."""
    first = text if shown is None else shown
    seen = set() if seen is None else seen
    pending = _components(text)
    inside = root_real.strip("/")
    while pending:
        part = pending.pop()
        if part == "/":  # an absolute target: inside the root, or outside it
            rest = "/".join(reversed(pending))
            if rest != inside and not rest.startswith(inside + "/"):
                return Unresolved(OUTSIDE, first)
            cursor.to_root()
            pending = _components(rest[len(inside):].lstrip("/"))
            continue
        if part == "..":
            if not cursor.parts:
                return Unresolved(OUTSIDE, first)
            cursor.up()
            continue
        if len(part.encode("utf-8", "surrogateescape")) > MAX_COMPONENT_BYTES:
            return Unresolved(TOO_LONG, first)
        try:
            info = cursor.lstat(part)
        except (FileNotFoundError, NotADirectoryError):
            return Unresolved(MISSING, first)
        if stat.S_ISLNK(info.st_mode):
            if len(seen) >= MAX_LINK_HOPS or identity(info) in seen:
                return Unresolved(LOOP, first)
            seen.add(identity(info))
            pending.extend(_components(cursor.readlink(part)))
            continue
        if not pending:
            return Resolved((*cursor.parts, part), info)
        if not stat.S_ISDIR(info.st_mode):
            return Unresolved(MISSING, first)
        cursor.down(part)
    # the text ended on a directory already entered (`.`, `..`, `dir/`) or on the root
    return Resolved(tuple(cursor.parts), cursor.here())


def _components(text: str) -> list[str]:
    """The components of a link's text, last first (popped in order); `/` marks an absolute
    text; empty and `.` components are dropped."""
    parts = [p for p in text.split("/") if p not in ("", ".")]
    if text.startswith("/"):
        parts.insert(0, "/")
    parts.reverse()
    return parts


def locate(root: Path, text: str, *, descriptors: bool) -> Resolved | Unresolved:
    """Where the relative path `text` leads below `root`, its links followed as a tree's are
    (OSError when the root cannot be opened as a directory)."""
    fd = os.open(root, DIR_FLAGS) if descriptors else -1
    try:
        with Cursor(root, fd, descriptors=descriptors) as cursor:
            return resolve_text(cursor, text, root_real=os.path.realpath(root))
    finally:
        if fd >= 0:
            os.close(fd)


def target_text(target: Resolved) -> str:
    return "/".join(target.real) or "."


def below_root(root_real: str, path: Path) -> tuple[str, ...] | None:
    """`path`'s real place below the root, None when it lies elsewhere (or is the root)."""
    relative = os.path.relpath(os.path.realpath(path), root_real)
    if relative in {".", ".."} or relative.startswith(("../", "/")):
        return None
    return tuple(Path(relative).parts)


def unresolved_problem(target: Unresolved, where: str) -> tuple[str, str]:
    """The class of an unresolved link (a `TreeCodes` field) and the message naming it."""
    shown = target.text if len(target.text) <= 120 else target.text[:120] + "…"
    text = f"{where} is a symbolic link to {shown!r}"
    if target.why == OUTSIDE:
        return "link", f"{text}, outside the root"
    if target.why == LOOP:
        return "loop", (f"{text}: the links loop (one reached again, or more than "
                        f"{MAX_LINK_HOPS} followed)")
    if target.why == MISSING:
        return "file_type", f"{text}, which does not exist"
    return "limit", f"{text}: a name in it is longer than {MAX_COMPONENT_BYTES} bytes"
