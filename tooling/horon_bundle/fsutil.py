"""File-system helpers: atomic writes and no-replace directory renames."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

_RENAME_NOREPLACE = 1
_AT_FDCWD = -100


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temp file in the same directory, fsync, rename."""
    handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        Path(temp).chmod(mode)
        Path(temp).replace(path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(temp).unlink()
        raise


def write_new(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Create `path` (it must not exist) with `data`."""
    with path.open("xb") as stream:
        stream.write(data)
    path.chmod(mode)


def fsync_directory(path: Path) -> None:
    if sys.platform == "win32":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _renameat2_noreplace(source: Path, destination: Path) -> bool:
    """Linux renameat2(RENAME_NOREPLACE); False when the call is unavailable."""
    libc_name = ctypes.util.find_library("c")
    if not sys.platform.startswith("linux") or libc_name is None:
        return False
    libc = ctypes.CDLL(libc_name, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(destination),
                       _RENAME_NOREPLACE)
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL):
        return False
    raise OSError(err, os.strerror(err), str(destination))


def rename_no_replace(source: Path, destination: Path) -> None:
    """Rename a directory onto a name that must not exist (not even as an empty directory).

    Plain rename(2) silently replaces an empty directory; renameat2 refuses it atomically.
    Where renameat2 is missing the check-then-rename fallback is documented as racy.
    """
    if _renameat2_noreplace(source, destination):
        return
    if destination.exists() or destination.is_symlink():
        raise FileExistsError(errno.EEXIST, "destination exists", str(destination))
    source.rename(destination)


def remove_tree(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(path)


@contextlib.contextmanager
def staging_directory(parent: Path, prefix: str) -> Iterator[Path]:
    """A fresh directory inside `parent`, removed on exit unless it was renamed away."""
    parent.mkdir(parents=True, exist_ok=True)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    path.chmod(0o755)  # mkdtemp makes 0700; the renamed result is an ordinary directory
    try:
        yield path
    finally:
        remove_tree(path)
