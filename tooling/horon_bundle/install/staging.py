"""Staging a directory tree next to its final place, and committing it with one rename.

A staging directory `.staging-<random>` is made inside the area that holds the final names
(native-plugins/ for native bundles), so it is on the same file system. It stands for the
*first missing* component of the final name — the id, the version or the target directory —
and holds the components below it, so one rename commits the whole new tree and a kill
before it leaves no empty directory behind anywhere but inside the staging directory, which
the next writer removes. Files are created O_EXCL|O_NOFOLLOW relative to their directory's
descriptor, written (hashed as they land: `install.copy_file`), given a normalised mode (0644,
or 0755 when executable: never setuid, setgid or writable by others); `finish` makes them
durable with one `syncfs(2)` of their file system (an fsync per file where there is no
syncfs), and directories are fsynced after their entries.
Files come in sorted order, so the files of one directory come together: a directory is given
its mode, fsynced and closed as soon as a file outside it comes, and only the directories on the
path to the last file stay open (a harness bundle may hold tens of thousands of directories,
one descriptor each, far past the usual limit of 1,024 a process may hold).

A single file (a harness zip stored under its digest) is staged the same way, inside a staging
directory, and committed with `commit_member`: the file alone is renamed onto its final name;
the emptied staging directory is then removed.

The commit is renameat2(RENAME_NOREPLACE) relative to both directories' descriptors (Linux):
it never replaces anything, not even the empty directory plain rename(2) would silently
replace. Where the kernel or file system lacks it, the destination is checked absent and
renamed under the home's lock (docs/install.md says what that cannot exclude). The
destination's directory and the staging area are fsynced after the rename.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import secrets
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import renameat2_noreplace
from horon_bundle.core.hashing import Digest
from horon_bundle.core.streams import ByteStream
from horon_bundle.install.copies import Located
from horon_bundle.install.copy_file import copy_into
from horon_bundle.install.dirs import (
    DIR_FLAGS,
    FILE_FLAGS,
    io_error,
    lstat_at,
    remove_tree_at,
)
from horon_bundle.install.layout import STAGING_PREFIX

FILE_MODE, EXECUTABLE_MODE, DIR_MODE = 0o644, 0o755, 0o755


def _find_syncfs() -> Callable[[int], int] | None:
    """Linux's syncfs(2) (not in `os`): one call flushes every staged file's data."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        found = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    found.argtypes = [ctypes.c_int]
    return cast("Callable[[int], int]", found)


_SYNCFS = _find_syncfs()


def _sync_file_system(fd: int) -> None:
    if _SYNCFS is not None and _SYNCFS(fd) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


class Staging:
    """A staging directory under `area`; `inner` names the directories made inside it."""

    def __init__(self, area: int, area_where: str, area_path: Path, inner: list[str], *,
                 prefix: str = STAGING_PREFIX) -> None:
        self.area = area
        self.area_where = area_where
        self.area_path = area_path
        self.name = prefix + secrets.token_hex(8)
        self.where = f"{area_where}/{self.name}"
        self._dirs: dict[str, int] = {}   # relative path inside the bundle root -> descriptor
        self._levels: list[tuple[int, str, int]] = []  # (parent, name, fd) from staging down
        self.committed = False
        try:
            os.mkdir(self.name, 0o700, dir_fd=area)
            fd = os.open(self.name, DIR_FLAGS, dir_fd=area)
            self._levels.append((area, self.name, fd))
            for name in inner:
                parent = self._levels[-1][2]
                os.mkdir(name, 0o700, dir_fd=parent)
                self._levels.append((parent, name, os.open(name, DIR_FLAGS, dir_fd=parent)))
        except OSError as exc:
            self.close()
            self.discard()
            raise io_error(self.where, exc) from None
        self._dirs[""] = self._levels[-1][2]

    @property
    def root(self) -> Located:
        """The directory that becomes the bundle (the deepest level)."""
        parent, name, fd = self._levels[-1]
        path = self.area_path.joinpath(*(level[1] for level in self._levels))
        return Located(parent, name, fd, self.where + "".join(
            "/" + level[1] for level in self._levels[1:]), path)

    def _directory(self, relative: str) -> int:
        if relative in self._dirs:
            return self._dirs[relative]
        parent_path, _, name = relative.rpartition("/")
        parent = self._directory(parent_path)
        with contextlib.suppress(FileExistsError):  # made and left before (files out of
            os.mkdir(name, 0o700, dir_fd=parent)     # order): opened again, not through a link
        fd = os.open(name, DIR_FLAGS, dir_fd=parent)
        self._dirs[relative] = fd
        return fd

    def _leave(self, relative: str) -> None:
        """Finish and close every open directory `relative` does not lie in, deepest first:
        no file of it is to come (`finish` does the rest)."""
        for path in sorted(self._dirs, key=len, reverse=True):
            if path and relative != path and not relative.startswith(f"{path}/"):
                fd = self._dirs.pop(path)
                try:
                    os.fchmod(fd, DIR_MODE)
                    os.fsync(fd)
                finally:
                    os.close(fd)

    def add_file(self, relative: str, stream: ByteStream, *, executable: bool,
                 mode: int | None = None) -> Digest:
        """Copy `stream` to `relative` inside the bundle root (raises install.io); `mode`
        (e.g. 0444 for a stored zip) replaces the normalised 0644/0755. The digest of the
        bytes staged (`install.copy_file`); `finish` makes them durable."""
        where = f"{self.root.where}/{relative}"
        parent_path, _, name = relative.rpartition("/")
        try:
            self._leave(parent_path)
            parent = self._directory(parent_path)
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_EXCL | FILE_FLAGS, 0o600,
                         dir_fd=parent)
            try:
                digest = copy_into(stream, fd)
                os.fchmod(fd, mode if mode is not None
                          else EXECUTABLE_MODE if executable else FILE_MODE)
                if _SYNCFS is None:  # no file-system sync here: each file on its own
                    os.fsync(fd)
            finally:
                os.close(fd)
        except OSError as exc:
            raise io_error(where, exc) from None
        return digest

    def finish(self) -> None:
        """Make the staged files durable with one sync of their file system (`syncfs`, where
        there is one: not an fsync per file), then give every directory still open its final
        mode and fsync them, deepest first."""
        try:
            _sync_file_system(self._levels[0][2])
            for fd in self._all_fds():
                os.fchmod(fd, DIR_MODE)
                os.fsync(fd)
        except OSError as exc:
            raise io_error(self.where, exc) from None

    def _all_fds(self) -> Iterator[int]:
        inner = [fd for path, fd in sorted(self._dirs.items(), key=lambda item: -len(item[0]))
                 if path]
        yield from inner
        yield from (fd for _parent, _name, fd in reversed(self._levels))

    def recheck(self) -> None:
        """The staging name still leads to the directory that was filled."""
        info = lstat_at(self.area, self.name, self.where)
        if info is None or (info.st_dev, info.st_ino) != (os.fstat(self._levels[0][2]).st_dev,
                                                          os.fstat(self._levels[0][2]).st_ino):
            raise Refused.one(codes.INSTALL_RACE, f"{self.where} was replaced while staging")

    def commit(self, destination: int, name: str, where: str) -> None:
        """Rename the staging directory onto `name` under `destination`, never replacing."""
        try:
            if not renameat2_noreplace(self.name, name, source_dir=self.area,
                                       destination_dir=destination):
                if lstat_at(destination, name, where) is not None:
                    raise FileExistsError(errno.EEXIST, "exists", where)
                os.rename(self.name, name, src_dir_fd=self.area, dst_dir_fd=destination)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise Refused.one(codes.INSTALL_RACE, f"{where} appeared while this install "
                                                      "held the home's lock") from None
            raise io_error(where, exc) from None
        self.committed = True
        try:
            os.fsync(destination)
            os.fsync(self.area)
        except OSError as exc:
            raise io_error(where, exc) from None

    def member_fd(self, relative: str) -> tuple[int, str]:
        """The directory descriptor holding `relative` and its last name (to verify a staged
        file through its descriptor)."""
        parent_path, _, name = relative.rpartition("/")
        return self._directory(parent_path), name

    def commit_member(self, relative: str, destination: int, name: str, where: str) -> None:
        """Rename the staged file `relative` onto `name` under `destination`, never replacing
        (install.race when the name appeared); the staging directory stays to be discarded."""
        parent, member = self.member_fd(relative)
        try:
            if not renameat2_noreplace(member, name, source_dir=parent,
                                       destination_dir=destination):
                if lstat_at(destination, name, where) is not None:
                    raise FileExistsError(errno.EEXIST, "exists", where)
                os.rename(member, name, src_dir_fd=parent, dst_dir_fd=destination)
        except OSError as exc:
            if exc.errno in (errno.EEXIST, errno.ENOTEMPTY):
                raise Refused.one(codes.INSTALL_RACE, f"{where} appeared while this command "
                                                      "held the home's lock") from None
            raise io_error(where, exc) from None
        try:
            os.fsync(destination)
            os.fsync(parent)
        except OSError as exc:
            raise io_error(where, exc) from None

    def discard(self) -> None:
        """Remove the staging directory unless it was committed (best effort)."""
        if not self.committed:
            with contextlib.suppress(OSError, Refused):  # else the next writer sweeps it
                remove_tree_at(self.area, self.name)

    def close(self) -> None:
        for fd in {*self._dirs.values(), *(level[2] for level in self._levels)}:
            os.close(fd)
        self._dirs.clear()
        self._levels.clear()

    def __enter__(self) -> Staging:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
        self.discard()
