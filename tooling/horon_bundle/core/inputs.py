"""Reading a file someone else named: opened once, judged on the open descriptor, bounded.

Every file the command line names (a policy, a trust root, a record, a signature, a bundle
archive) and every side file found beside one is read through `open_input` / `read_input`:

- opened once, with `O_NONBLOCK` so that opening a FIFO (or a device that waits) returns at
  once instead of blocking forever; the flag is cleared again before reading;
- judged with `fstat` on that descriptor, never on the path: only a regular file is read
  (a FIFO, socket, device or directory is `input.not-a-file`), so what is judged is what is
  read, whatever is renamed over the path in between;
- read with a size cap checked first on the fstat size and then while reading (a file that
  grows past its cap is refused, never read to the end): `input.too-large`.

An unreadable or missing path is `input.unreadable` (or `None` with `missing_ok`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

if sys.platform != "win32":
    import fcntl

_BINARY = getattr(os, "O_BINARY", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    return "not a regular file"


def open_regular(path: str | Path, *, what: str, follow_symlinks: bool = True,
                 dir_fd: int | None = None) -> tuple[int, os.stat_result]:
    """Open `path` read-only without blocking and return (fd, fstat) of a regular file.

    Raises FileNotFoundError for a missing path (the caller decides what absence means) and
    Refused for anything else that is not a readable regular file.
    """
    flags = os.O_RDONLY | _BINARY | _NONBLOCK | (0 if follow_symlinks else _NOFOLLOW)
    try:
        fd = os.open(path, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        raise
    except OSError as exc:
        if exc.errno == errno.ELOOP and not follow_symlinks:
            raise Refused.one(codes.INPUT_NOT_A_FILE,
                              f"{what} {path}: a symbolic link") from None
        raise Refused.one(codes.INPUT_UNREADABLE,
                          f"{what} {path}: {exc.strerror or exc}") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise Refused.one(codes.INPUT_NOT_A_FILE,
                          f"{what} {path}: {file_kind(info.st_mode)}, not a regular file")
    if sys.platform != "win32":
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~_NONBLOCK)
    return fd, info


def read_fd(fd: int, *, limit: int, label: str) -> bytes:
    """Read an open regular file to its end, refusing it past `limit` bytes."""
    size = os.fstat(fd).st_size
    if size > limit:
        raise Refused.one(codes.INPUT_TOO_LARGE, f"{label}: {size} bytes, limit {limit}")
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, min(1 << 20, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise Refused.one(codes.INPUT_TOO_LARGE, f"{label}: more than {limit} bytes "
                                                     "(it grew while being read)")
    return b"".join(chunks)


def read_at(fd: int, length: int, offset: int) -> bytes:
    """Up to `length` bytes at `offset` of an open file (`pread`; seek and read where the OS
    has no `pread`, i.e. Windows: the toolchain reads from one thread)."""
    if hasattr(os, "pread"):
        return os.pread(fd, length, offset)
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, length)


def read_input(path: Path, *, limit: int, what: str, missing_ok: bool = False,
               follow_symlinks: bool = True) -> bytes | None:
    """The bytes of the regular file at `path` (at most `limit`); None when it is absent and
    `missing_ok`, else `input.unreadable`. `what` names it in refusals, e.g. `--policy`."""
    try:
        fd, _info = open_regular(path, what=what, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise Refused.one(codes.INPUT_UNREADABLE,
                          f"{what} {path}: no such file or directory") from None
    try:
        return read_fd(fd, limit=limit, label=f"{what} {path}")
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


@contextlib.contextmanager
def opened_input(path: Path, *, what: str,
                 follow_symlinks: bool = True) -> Iterator[tuple[int, os.stat_result]]:
    """`open_regular` as a context manager that closes the descriptor; a missing path is
    `input.unreadable`."""
    try:
        fd, info = open_regular(path, what=what, follow_symlinks=follow_symlinks)
    except FileNotFoundError:
        raise Refused.one(codes.INPUT_UNREADABLE,
                          f"{what} {path}: no such file or directory") from None
    try:
        yield fd, info
    finally:
        os.close(fd)
