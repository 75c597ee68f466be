"""File-system helpers: atomic writes, no-replace directory renames, staging directories.

A failed write (a full disk, a read-only file system, a directory without write permission)
is an environment problem, not a defect of the toolchain: every helper here turns the
`OSError` into `output.write-failed` (exit 3) naming the path, after removing what it had
half-written.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

_RENAME_NOREPLACE = 1
_AT_FDCWD = -100


def write_failed(path: Path, exc: OSError) -> Refused:
    """The refusal for a write that the system refused."""
    return Refused.one(codes.OUTPUT_WRITE, f"{path}: {exc.strerror or exc}")


TEMP_SUFFIX = ".horon-tmp"  # every temp file write_atomic makes: recognisable debris


def write_atomic(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Write `data` to `path` through a temp file in the same directory, fsync, rename."""
    try:
        handle, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TEMP_SUFFIX,
                                        dir=path.parent)
    except OSError as exc:
        raise write_failed(path, exc) from None
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        Path(temp).chmod(mode)
        Path(temp).replace(path)
    except OSError as exc:
        with contextlib.suppress(FileNotFoundError):
            Path(temp).unlink()
        raise write_failed(path, exc) from None
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            Path(temp).unlink()
        raise


def write_new(path: Path, data: bytes, *, mode: int = 0o644) -> None:
    """Create `path` (it must not exist) with `data`."""
    try:
        with path.open("xb") as stream:
            stream.write(data)
        path.chmod(mode)
    except OSError as exc:
        raise write_failed(path, exc) from None


def fsync_directory(path: Path) -> None:
    if sys.platform == "win32":
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def renameat2_noreplace(source: str | Path, destination: str | Path, *,
                        source_dir: int = _AT_FDCWD, destination_dir: int = _AT_FDCWD) -> bool:
    """Linux renameat2(RENAME_NOREPLACE) relative to directory descriptors; False when the
    call is unavailable (another OS, an old kernel or file system)."""
    if not sys.platform.startswith("linux"):
        return False
    # The running process's own symbols (libc is always loaded): ctypes.util.find_library
    # would start /sbin/ldconfig, and a rename must not run a program.
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    result = renameat2(source_dir, os.fsencode(source), destination_dir,
                       os.fsencode(destination), _RENAME_NOREPLACE)
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
    if renameat2_noreplace(source, destination):
        return
    if destination.exists() or destination.is_symlink():
        raise FileExistsError(errno.EEXIST, "destination exists", str(destination))
    source.rename(destination)


def remove_tree(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(path)


def remove_stale(parent: Path, prefix: str) -> list[Path]:
    """Remove what killed runs left in `parent` under names starting with `prefix`."""
    removed: list[Path] = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        if entry.name.startswith(prefix) and not entry.is_symlink():
            path = Path(entry.path)
            if entry.is_dir(follow_symlinks=False):
                remove_tree(path)
            else:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
            removed.append(path)
    return removed


class DirectoryLease:
    """A run's claim on a directory it keeps temporary files in: a shared `flock` on the
    directory itself, held until `close()` (or until the process dies: the kernel drops it)."""

    def __init__(self, fd: int | None, removed: list[Path]) -> None:
        self._fd = fd
        self.removed = removed  # what earlier, killed runs had left and this one removed

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def __enter__(self) -> DirectoryLease:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def lease_directory(directory: Path, clean: Callable[[Path], list[Path]]) -> DirectoryLease:
    """Claim `directory` for this run; first `clean` it when no other live run holds it.

    Every run that makes temporary files in `directory` holds a shared lock on it while it
    runs. A run that can take the lock *exclusively* knows that no other live run is there,
    so whatever temporary files it finds were left by killed runs: it removes them (`clean`),
    then keeps the lock shared. A run that cannot is beside a live one and cleans nothing.
    Where `flock` is unavailable (Windows, some network file systems) nothing is cleaned.
    """
    if sys.platform == "win32":
        return DirectoryLease(None, [])
    import fcntl  # noqa: PLC0415 - POSIX only

    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return DirectoryLease(None, [])
    removed: list[Path] = []
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pass  # a live run is here: leave every temporary file alone
        else:
            removed = clean(directory)
        fcntl.flock(fd, fcntl.LOCK_SH)
    except OSError:  # flock refused (ENOLCK, EOPNOTSUPP): claim nothing, clean nothing
        os.close(fd)
        return DirectoryLease(None, removed)
    return DirectoryLease(fd, removed)


@contextlib.contextmanager
def exclusive_use(directory: Path, name: str) -> Iterator[None]:
    """Use `directory` alone for the block: an exclusive `flock` on the file `name` in it
    (created empty, never followed if a link), waiting for any other run holding it. The
    kernel drops the lock when its holder dies, so a killed run never blocks the next one.
    Where `flock` is unavailable (Windows, some network file systems) nothing is held."""
    if sys.platform == "win32":
        yield
        return
    import fcntl  # noqa: PLC0415 - POSIX only

    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd = os.open(directory / name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
    except OSError as exc:
        raise write_failed(directory / name, exc) from None
    try:
        with contextlib.suppress(OSError):  # ENOLCK, EOPNOTSUPP: no lock to be had here
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


@contextlib.contextmanager
def staging_directory(parent: Path, prefix: str) -> Iterator[Path]:
    """A fresh directory inside `parent`, removed on exit unless it was renamed away."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        path = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        path.chmod(0o755)  # mkdtemp makes 0700; the renamed result is an ordinary directory
    except OSError as exc:
        raise write_failed(parent, exc) from None
    try:
        yield path
    finally:
        remove_tree(path)
