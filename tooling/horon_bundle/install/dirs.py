"""Directories of the agent home, opened one component at a time and never through a link.

Each component is `lstat`ed relative to its parent's descriptor (a link or a non-directory is
refused with its code), opened with `O_DIRECTORY | O_NOFOLLOW` relative to the same
descriptor, and its `fstat` compared with the `lstat`: a directory swapped between the two is
`install.race`. Every later operation names files relative to these descriptors, so a link
planted after the walk redirects nothing; `Chain.recheck` (called before a commit) refuses a
name that no longer leads to the directory that was opened.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

DIR_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) \
    | getattr(os, "O_CLOEXEC", 0)
FILE_FLAGS = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
# reading a file of the home (or a zip named to fetch): with O_NONBLOCK a FIFO planted under
# the name opens at once, to be refused as not a regular file, instead of blocking forever
# for a writer; the caller makes a regular file's descriptor blocking again (`regular_fd`)
READ_FLAGS = os.O_RDONLY | FILE_FLAGS | getattr(os, "O_NONBLOCK", 0)


def regular_fd(fd: int) -> bool:
    """Whether `fd` (opened with READ_FLAGS) is a regular file; if so it is made blocking."""
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        return False
    os.set_blocking(fd, True)
    return True


def io_error(where: str, exc: OSError) -> Refused:
    return Refused.one(codes.INSTALL_IO, f"{where}: {exc.strerror or exc}")


def lstat_at(parent: int, name: str, where: str) -> os.stat_result | None:
    """lstat relative to a directory descriptor; None when the name does not exist."""
    try:
        return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise io_error(where, exc) from None


def kind_of(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "regular file"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "special file"


def refuse_link_or_other(parent: int, name: str, info: os.stat_result, where: str,
                         wanted: str = "directory") -> Refused:
    if stat.S_ISLNK(info.st_mode):
        try:
            points = os.readlink(name, dir_fd=parent)
        except OSError:
            points = "?"
        return Refused.one(codes.INSTALL_SYMLINK,
                           f"{where} is a symbolic link (to {points!r}); it is not followed")
    if wanted == "directory":
        return Refused.one(codes.INSTALL_NOT_A_DIRECTORY,
                           f"{where} is a {kind_of(info.st_mode)}, not a directory")
    return Refused.one(codes.INSTALL_HOME, f"{where} is not a {wanted}")


def same(info: os.stat_result, other: os.stat_result) -> bool:
    return (info.st_dev, info.st_ino) == (other.st_dev, other.st_ino)


def open_dir_at(parent: int, name: str, where: str) -> int | None:
    """The directory `name` under `parent`, or None when absent; never through a link."""
    expected = lstat_at(parent, name, where)
    if expected is None:
        return None
    if not stat.S_ISDIR(expected.st_mode):
        raise refuse_link_or_other(parent, name, expected, where)
    try:
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.ELOOP):
            raise Refused.one(codes.INSTALL_RACE,
                              f"{where} was replaced while it was being opened") from None
        raise io_error(where, exc) from None
    if not same(os.fstat(fd), expected):
        os.close(fd)
        raise Refused.one(codes.INSTALL_RACE, f"{where} was replaced while it was being opened")
    return fd


@dataclass(slots=True)
class Link:
    parent: int
    name: str
    fd: int
    where: str


@dataclass(slots=True)
class Chain:
    """Descriptors from the home down; closed together."""

    home: Path
    root: int
    links: list[Link] = field(default_factory=list)
    borrowed: int = 0  # links[:borrowed] belong to the chain this one was forked from

    def fork(self) -> Chain:
        """A chain continuing from this one's deepest directory; closing it closes only the
        directories it opened itself."""
        return Chain(self.home, self.root, list(self.links), len(self.links))

    @property
    def fd(self) -> int:
        return self.links[-1].fd if self.links else self.root

    @property
    def where(self) -> str:
        return self.links[-1].where if self.links else str(self.home)

    def path(self) -> Path:
        return self.home.joinpath(*(link.name for link in self.links))

    def child_where(self, name: str) -> str:
        return f"{self.where}/{name}" if self.links else name

    def descend(self, name: str, *, create: bool = False) -> bool:
        """Open `name` under the deepest directory; False when absent (and not created)."""
        where = self.child_where(name)
        fd = open_dir_at(self.fd, name, where)
        if fd is None and create:
            try:
                os.mkdir(name, 0o755, dir_fd=self.fd)
            except FileExistsError:
                pass  # something appeared since the lstat: the open below judges it
            except OSError as exc:
                raise io_error(where, exc) from None
            fd = open_dir_at(self.fd, name, where)
        if fd is None:
            return False
        self.links.append(Link(self.fd, name, fd, where))
        return True

    def same_device(self, reference: int) -> None:
        """Refuse a directory of the chain on another file system than `reference`'s."""
        device = os.fstat(reference).st_dev
        for link in self.links:
            if os.fstat(link.fd).st_dev != device:
                raise Refused.one(codes.INSTALL_CROSS_DEVICE,
                                  f"{link.where} is on another file system than native-plugins")

    def recheck(self) -> None:
        """Every name of the chain still leads to the directory that was opened."""
        for link in self.links:
            info = lstat_at(link.parent, link.name, link.where)
            if info is None or not same(info, os.fstat(link.fd)):
                raise Refused.one(codes.INSTALL_RACE,
                                  f"{link.where} was replaced after it was checked")

    def close(self) -> None:
        while len(self.links) > self.borrowed:
            os.close(self.links.pop().fd)

    def __enter__(self) -> Chain:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def fsync_fd(fd: int) -> None:
    os.fsync(fd)


def remove_tree_at(parent: int, name: str) -> None:
    """Remove `name` (a directory tree or a file) under `parent` without following links.

    Iterative, one descriptor per level: a tree of any depth (a foreign one, in a version
    being uninstalled) is removed without recursion and without path-length limits."""
    info = lstat_at(parent, name, name)
    if info is None:
        return
    if not stat.S_ISDIR(info.st_mode):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=parent)
        return
    stack = [(parent, name, os.open(name, DIR_FLAGS, dir_fd=parent))]
    try:
        while stack:
            above, current, fd = stack[-1]
            deeper = None
            with os.scandir(fd) as entries:
                children = [(entry.name, entry.is_dir(follow_symlinks=False))
                            for entry in entries]
            for child, is_dir in children:
                if is_dir:
                    deeper = child
                    break
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(child, dir_fd=fd)
            if deeper is not None:
                stack.append((fd, deeper, os.open(deeper, DIR_FLAGS, dir_fd=fd)))
                continue
            stack.pop()
            os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.rmdir(current, dir_fd=above)
    finally:
        for _above, _current, fd in stack:
            os.close(fd)


def remove_debris(parent: int, prefixes: tuple[str, ...], where: str) -> list[str]:
    """Remove what killed runs left under `parent` (names starting with one of `prefixes`)."""
    removed = []
    try:
        with os.scandir(parent) as entries:
            names = sorted(entry.name for entry in entries if entry.name.startswith(prefixes))
        for name in names:
            remove_tree_at(parent, name)
            removed.append(name)
    except OSError as exc:
        raise io_error(where, exc) from None
    return removed
