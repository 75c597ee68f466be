"""A bundle directory, walked and read through directory descriptors, never by path.

The walk is iterative (no recursion, whatever the depth) and bounded: at most
`limits.MAX_ENTRIES` entries, `limits.MAX_DEPTH` levels and `limits.MAX_NAME_BYTES` bytes per
relative path; past a limit it stops with `layout.limit` instead of descending. Every
directory is opened component by component with `O_NOFOLLOW | O_DIRECTORY` relative to its
parent's descriptor, so no path handed to the kernel is longer than one name (no
ENAMETOOLONG) and no symbolic link is ever followed.

Every entry is judged by the same rules as an archive's: regular files only (no symbolic
link, hard link, FIFO, socket or device), no setuid, setgid or world-writable file *or
directory* (the bundle directory itself included), no empty directory.

Each file is opened once for reading (`O_NOFOLLOW | O_NONBLOCK`, so a FIFO swapped in cannot
block), judged again on that descriptor with `fstat` (still a regular file with one link,
the same inode and size the walk saw, modes still safe) and streamed from it: a file
replaced, removed, retyped or grown between the walk and the read is `layout.changed`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import CHUNK
from horon_bundle.core.inputs import file_kind
from horon_bundle.verify import limits
from horon_bundle.verify.reading.interface import BundleFile, BundleSource

# Windows reports synthetic mode bits (0o666 for every writable file, x for .exe/.bat), so
# mode checks on a directory bundle are POSIX-only; archives carry their own Unix modes.
POSIX_MODES = os.name == "posix"
_UNSAFE_MODE = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH
_O_BINARY = getattr(os, "O_BINARY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# descriptor-relative opens and listings (POSIX); elsewhere paths, walked the same way
DIR_FDS = os.open in os.supports_dir_fd and os.scandir in os.supports_fd


def _changed(label: str, path: str, what: str) -> Refused:
    return Refused.one(codes.LAYOUT_CHANGED, f"{label}: {path!r} {what} while it was verified")


class DirectorySource(BundleSource):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.label = root.name
        self.files: dict[str, BundleFile] = {}
        self.layout_findings = Findings()
        self._seen: dict[str, tuple[int, int, int]] = {}  # path -> (st_dev, st_ino, st_size)
        self._root_fd = -1
        if DIR_FDS:
            try:
                self._root_fd = os.open(root, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW)
            except OSError as exc:
                # replaced by a link since open_bundle's lstat: ELOOP, or ENOTDIR where
                # O_DIRECTORY is judged before O_NOFOLLOW (Linux)
                if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR
                                                and root.is_symlink()):
                    raise Refused.one(codes.LAYOUT_SYMLINK,
                                      f"{root}: the bundle path is a symbolic link") from None
                raise Refused.one(codes.INPUT_UNREADABLE,
                                  f"{root}: {exc.strerror or exc}") from None
        try:
            self._judge_mode(os.fstat(self._root_fd) if DIR_FDS else root.stat(), ".",
                             self.layout_findings)
            self._walk()
        except BaseException:
            self.close()
            raise

    # --- walking ----------------------------------------------------------------------------
    def _open_dir(self, parts: list[str], shown: str) -> int:
        """A descriptor of the directory `parts` below the root, no link followed."""
        fd = os.dup(self._root_fd)
        try:
            for part in parts:
                child = os.open(part, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW, dir_fd=fd)
                os.close(fd)
                fd = child
        except FileNotFoundError:
            os.close(fd)
            raise _changed(self.label, shown, "was removed") from None
        except OSError as exc:
            os.close(fd)
            raise _changed(self.label, shown, f"stopped being a directory ({exc.strerror})") \
                from None
        return fd

    def _list(self, prefix: str) -> list[tuple[str, os.stat_result]]:
        """The entries of directory `prefix` ("" or "a/b/"), sorted, with their lstat."""
        if not DIR_FDS:
            with os.scandir(self.root / prefix if prefix else self.root) as scan:
                return sorted(((e.name, e.stat(follow_symlinks=False)) for e in scan),
                              key=lambda item: item[0])
        fd = self._open_dir(prefix.split("/")[:-1] if prefix else [], prefix.rstrip("/"))
        try:
            with os.scandir(fd) as scan:
                return sorted(((e.name, e.stat(follow_symlinks=False)) for e in scan),
                              key=lambda item: item[0])
        finally:
            os.close(fd)

    def _judge_mode(self, info: os.stat_result, relative: str, findings: Findings) -> bool:
        if POSIX_MODES and info.st_mode & _UNSAFE_MODE:
            what = "directory" if stat.S_ISDIR(info.st_mode) else "file"
            findings.add(codes.LAYOUT_MODE, f"{self.label}: {what} {relative!r} has mode "
                                            f"{stat.S_IMODE(info.st_mode):o}")
            return False
        return True

    def _walk(self) -> None:
        findings = self.layout_findings
        stack: list[tuple[str, int]] = [("", 0)]
        count = 0
        while stack:
            prefix, depth = stack.pop()
            try:
                items = self._list(prefix)
            except Refused as exc:
                findings.extend(exc.findings)
                continue
            except OSError as exc:
                findings.add(codes.LAYOUT_CHANGED, f"{self.label}: {prefix!r}: "
                                                   f"{exc.strerror or exc}")
                continue
            if not items and prefix:
                findings.add(codes.LAYOUT_UNDECLARED,
                             f"{self.label}: empty directory {prefix.rstrip('/')!r}")
            subdirectories: list[str] = []
            for name, info in items:
                count += 1
                if count > limits.MAX_ENTRIES:
                    findings.add(codes.LAYOUT_LIMIT, f"{self.label}: more than "
                                                     f"{limits.MAX_ENTRIES} entries")
                    return
                relative = prefix + name
                if len(relative.encode("utf-8", "surrogateescape")) > limits.MAX_NAME_BYTES:
                    findings.add(codes.LAYOUT_LIMIT,
                                 f"{self.label}: {relative[:80]!r}… is longer than "
                                 f"{limits.MAX_NAME_BYTES} bytes")
                    continue
                where = f"{self.label}: {relative!r}"
                mode = info.st_mode
                if stat.S_ISLNK(mode):
                    findings.add(codes.LAYOUT_SYMLINK, f"{where} is a symbolic link")
                elif stat.S_ISDIR(mode):
                    self._judge_mode(info, relative, findings)
                    if depth + 1 > limits.MAX_DEPTH:
                        findings.add(codes.LAYOUT_LIMIT, f"{where} lies deeper than "
                                                         f"{limits.MAX_DEPTH} directories")
                    else:
                        subdirectories.append(relative + "/")
                elif not stat.S_ISREG(mode):
                    findings.add(codes.LAYOUT_FILE_TYPE, f"{where} is {file_kind(mode)}")
                elif info.st_nlink > 1:
                    findings.add(codes.LAYOUT_FILE_TYPE,
                                 f"{where} is a hard link ({info.st_nlink} links)")
                elif self._judge_mode(info, relative, findings):
                    executable = bool(mode & stat.S_IXUSR) if POSIX_MODES else None
                    self.files[relative] = BundleFile(relative, info.st_size, executable)
                    self._seen[relative] = (info.st_dev, info.st_ino, info.st_size)
            stack.extend((sub, depth + 1) for sub in reversed(subdirectories))

    # --- reading ----------------------------------------------------------------------------
    def open(self, path: str, *, resumable: bool = False) -> _FileStream:
        flags = os.O_RDONLY | _O_BINARY | _O_NOFOLLOW | _O_NONBLOCK
        try:
            if DIR_FDS:
                parts = path.split("/")
                parent = self._open_dir(parts[:-1], path)
                try:
                    fd = os.open(parts[-1], flags, dir_fd=parent)
                finally:
                    os.close(parent)
            else:
                fd = os.open(self.root / path, flags)
        except FileNotFoundError:
            raise _changed(self.label, path, "was removed") from None
        except OSError as exc:
            raise _changed(self.label, path, f"could not be opened ({exc.strerror})") from None
        try:
            self._judge_open(fd, path)
        except BaseException:
            os.close(fd)
            raise
        return _FileStream(fd, self._seen[path][2], f"{self.label}: {path!r}")

    def _judge_open(self, fd: int, path: str) -> None:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _changed(self.label, path, f"became {file_kind(info.st_mode)}")
        if info.st_nlink > 1:
            raise _changed(self.label, path, f"became a hard link ({info.st_nlink} links)")
        problems = Findings()
        if not self._judge_mode(info, path, problems):
            raise Refused([Finding(codes.LAYOUT_CHANGED, f"{f.message}: changed while it was "
                                                         "verified") for f in problems])
        if (info.st_dev, info.st_ino, info.st_size) != self._seen[path]:
            raise _changed(self.label, path, "was replaced or resized")

    def close(self) -> None:
        if self._root_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._root_fd)
            self._root_fd = -1


_READV = hasattr(os, "readv")


class _FileStream:
    """A regular file opened once: streamed (or sought) through its descriptor, refusing
    more bytes than the size it was judged with."""

    def __init__(self, fd: int, size: int, label: str) -> None:
        self._fd = fd
        self._size = size
        self._label = label
        self._position = 0

    def read(self, size: int = CHUNK) -> bytes:
        try:
            data = os.read(self._fd, size if 0 < size <= CHUNK else CHUNK)
        except OSError as exc:
            raise Refused.one(codes.LAYOUT_CHANGED,
                              f"{self._label}: {exc.strerror or exc} while it was read") from None
        self._advance(len(data))
        return data

    def readinto(self, buffer: memoryview) -> int:
        """`read` into `buffer` (reused by the caller: no allocation per chunk)."""
        try:
            if _READV:
                got = os.readv(self._fd, [buffer[:CHUNK]])
            else:  # Windows has no readv
                data = os.read(self._fd, min(len(buffer), CHUNK))
                got = len(data)
                buffer[:got] = data
        except OSError as exc:
            raise Refused.one(codes.LAYOUT_CHANGED,
                              f"{self._label}: {exc.strerror or exc} while it was read") from None
        self._advance(got)
        return got

    def _advance(self, count: int) -> None:
        self._position += count
        if self._position > self._size:
            raise Refused.one(codes.LAYOUT_CHANGED, f"{self._label}: grew while it was read")

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int) -> None:
        self._position = os.lseek(self._fd, offset, os.SEEK_SET)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> _FileStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
