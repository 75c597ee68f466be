"""A bundle as a set of regular files, whether it is a directory or a validated archive.

`verify` works on this one interface, so a directory and its archive get the same checks and
an archive is verified by streaming its entries, with nothing extracted.
"""

from __future__ import annotations

import os
import stat
import zipfile
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.verify.archive_reader import ArchiveEntry, LimitedEntry, validate_archive


class ByteStream(Protocol):
    def read(self, size: int = ..., /) -> bytes: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class BundleFile:
    path: str
    size: int
    executable: bool | None  # None: the file system keeps no POSIX mode bits (Windows)


class BundleSource(ABC):
    """Regular files of a bundle (relative POSIX path -> file) and a way to stream each."""

    label: str
    files: dict[str, BundleFile]
    layout_findings: Findings

    @abstractmethod
    def open(self, path: str) -> ByteStream: ...

    def read_small(self, path: str, limit: int) -> bytes:
        """Read a metadata file whole, refusing it past `limit` bytes before reading it."""
        size = self.files[path].size
        if size > limit:
            raise Refused.one(codes.JSON_TOO_LARGE, f"{path}: {size} bytes, limit {limit}")
        stream = self.open(path)
        try:
            chunks = []
            while chunk := stream.read(1 << 16):
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            stream.close()

    def close(self) -> None:  # noqa: B027 - sources without resources need nothing
        pass

    def __enter__(self) -> BundleSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# Windows reports synthetic mode bits (0o666 for every writable file, x for .exe/.bat), so
# mode checks on a directory bundle are POSIX-only; archives carry their own Unix modes.
POSIX_MODES = os.name == "posix"


class DirectorySource(BundleSource):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.label = root.name
        self.files = {}
        self.layout_findings = Findings()
        self._walk(root, "")

    def _walk(self, directory: Path, prefix: str) -> None:
        with os.scandir(directory) as scan:
            items = sorted(scan, key=lambda e: e.name)
        if not items and prefix:
            self.layout_findings.add(codes.LAYOUT_UNDECLARED,
                                     f"{self.label}: empty directory {prefix.rstrip('/')!r}")
        for item in items:
            relative = prefix + item.name
            info = item.stat(follow_symlinks=False)
            where = f"{self.label}: {relative!r}"
            if stat.S_ISLNK(info.st_mode):
                self.layout_findings.add(codes.LAYOUT_SYMLINK, f"{where} is a symbolic link")
            elif stat.S_ISDIR(info.st_mode):
                self._walk(Path(item.path), relative + "/")
            elif not stat.S_ISREG(info.st_mode):
                self.layout_findings.add(codes.LAYOUT_FILE_TYPE,
                                         f"{where} is a FIFO, socket or device")
            elif info.st_nlink > 1:
                self.layout_findings.add(codes.LAYOUT_FILE_TYPE,
                                         f"{where} is a hard link ({info.st_nlink} links)")
            else:
                unsafe = stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH
                if POSIX_MODES and info.st_mode & unsafe:
                    self.layout_findings.add(
                        codes.LAYOUT_MODE, f"{where} has mode {stat.S_IMODE(info.st_mode):o}")
                executable = bool(info.st_mode & stat.S_IXUSR) if POSIX_MODES else None
                self.files[relative] = BundleFile(relative, info.st_size, executable)

    def open(self, path: str) -> ByteStream:
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
        fd = os.open(self.root / path, flags)
        return os.fdopen(fd, "rb")


class ArchiveSource(BundleSource):
    def __init__(self, path: Path) -> None:
        self.label = path.name
        self._archive: zipfile.ZipFile
        self._archive, entries = validate_archive(path)
        self._entries: dict[str, ArchiveEntry] = entries
        self.files = {name: BundleFile(name, e.size, bool(e.mode & stat.S_IXUSR))
                      for name, e in entries.items()}
        self.layout_findings = Findings()

    def open(self, path: str) -> ByteStream:
        return LimitedEntry(self._archive, self._entries[path], self.label)

    def close(self) -> None:
        self._archive.close()


def open_bundle(path: Path) -> BundleSource:
    """A directory bundle or a .zip archive; anything else is refused."""
    if path.is_symlink():
        raise Refused.one(codes.LAYOUT_SYMLINK, f"{path}: the bundle path is a symbolic link")
    if path.is_dir():
        return DirectorySource(path)
    if path.is_file() and path.suffix == ".zip":
        return ArchiveSource(path)
    if not path.exists():
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: no such file or directory")
    raise Refused.one(codes.LAYOUT_NOT_A_BUNDLE, f"{path}: not a directory or .zip archive")
