"""Reading an untrusted bundle archive: validate every entry before reading any of them.

Never `extractall`: CPython's zipfile silently rewrites `../x` and `/x` and lets the last
duplicate win. Here the central directory, the local headers and the end record are checked
first (names, types, duplicates, overlaps, prepended or trailing data, limits); only then are
entries streamed, through zipfile's CRC check, with their declared sizes enforced.
"""

from __future__ import annotations

import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.hashing import CHUNK

MAX_ENTRIES = 10_000
MAX_NAME_BYTES = 512
MAX_TOTAL_BYTES = 8 << 30
MAX_RATIO = 1000
_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"
_EOCD_SIGNATURE = b"PK\x05\x06"
_ENCRYPTED = 0x1
# What zipfile and zlib raise for a damaged archive (measured by fuzzing a real one: a corrupt
# deflate stream surfaces as zlib.error, an odd version field as NotImplementedError).
_STREAM_ERRORS = (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError,
                  NotImplementedError)


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    name: str
    size: int
    mode: int
    info: zipfile.ZipInfo


def validate_archive(path: Path) -> tuple[zipfile.ZipFile, dict[str, ArchiveEntry]]:
    """Open and fully validate an archive; raises Refused with every problem found."""
    findings = Findings()
    label = path.name
    try:
        archive = zipfile.ZipFile(path)
    except _STREAM_ERRORS as exc:
        raise Refused.one(codes.ARCHIVE_FORMAT, f"{label}: not a readable zip ({exc})") from None
    try:
        entries = _check_entries(archive, label, findings)
        if not findings:
            _check_structure(archive, path, label, findings)
    except (*_STREAM_ERRORS, struct.error) as exc:
        findings.add(codes.ARCHIVE_FORMAT, f"{label}: {exc}")
    if findings:
        archive.close()
        raise Refused(findings)
    return archive, entries


def _check_entries(archive: zipfile.ZipFile, label: str, findings: Findings,
                   ) -> dict[str, ArchiveEntry]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        findings.add(codes.ARCHIVE_LIMIT, f"{label}: {len(infos)} entries, limit {MAX_ENTRIES}")
        return {}
    entries: dict[str, ArchiveEntry] = {}
    directories: set[str] = set()
    total = 0
    for info in infos:
        name = info.filename
        where = f"{label}: entry {name!r}"
        if len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
            findings.add(codes.ARCHIVE_LIMIT, f"{where}: name longer than {MAX_NAME_BYTES} bytes")
            continue
        if info.flag_bits & _ENCRYPTED:
            findings.add(codes.ARCHIVE_FORMAT, f"{where}: encrypted")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            findings.add(codes.ARCHIVE_FORMAT,
                         f"{where}: compression method {info.compress_type} not supported")
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            findings.add(codes.ARCHIVE_LINK, f"{where}: symbolic link")
            continue
        bare = name[:-1] if name.endswith("/") else name
        if _name_refused(bare, where, findings):
            continue
        if name.endswith("/"):
            directories.add(bare)
            continue
        if mode and not stat.S_ISREG(mode):
            findings.add(codes.LAYOUT_FILE_TYPE, f"{where}: not a regular file (mode {mode:o})")
            continue
        if mode & (stat.S_ISUID | stat.S_ISGID | stat.S_IWOTH):
            findings.add(codes.LAYOUT_MODE, f"{where}: mode {stat.S_IMODE(mode):o}")
        if name in entries:
            findings.add(codes.ARCHIVE_DUPLICATE, f"{where}: appears twice")
            continue
        total += info.file_size
        if info.file_size > 1 << 20 and info.file_size > MAX_RATIO * max(info.compress_size, 1):
            findings.add(codes.ARCHIVE_LIMIT, f"{where}: compression ratio over {MAX_RATIO}")
        entries[name] = ArchiveEntry(name, info.file_size, mode, info)
    if total > MAX_TOTAL_BYTES:
        findings.add(codes.ARCHIVE_LIMIT, f"{label}: {total} bytes uncompressed, limit "
                     f"{MAX_TOTAL_BYTES}")
    for first, second in paths.collisions(list(entries)):
        findings.add(codes.ARCHIVE_DUPLICATE, f"{label}: entries {first!r} and {second!r} collide")
    for directory in sorted(directories):
        if directory in entries or paths.fold(directory) in {paths.fold(n) for n in entries}:
            findings.add(codes.ARCHIVE_CONFLICT,
                         f"{label}: {directory!r} is both a file and a directory")
    return entries


def _name_refused(name: str, where: str, findings: Findings) -> bool:
    problem = paths.path_problem(name)
    if problem is None:
        return False
    if name.startswith("/") or problem == "drive letter in path":
        findings.add(codes.ARCHIVE_ABSOLUTE, f"{where}: {problem}")
    elif problem in ("'..' component", "'.' component"):
        findings.add(codes.ARCHIVE_TRAVERSAL, f"{where}: {problem}")
    else:
        findings.add(codes.ARCHIVE_UNSAFE_NAME, f"{where}: {problem}")
    return True


def _check_structure(archive: zipfile.ZipFile, path: Path, label: str,
                     findings: Findings) -> None:
    """Local headers agree with the central directory; nothing before, between or after."""
    size = path.stat().st_size
    with path.open("rb") as stream:
        tail_start = max(0, size - (1 << 16) - 22)
        stream.seek(tail_start)
        tail = stream.read()
        if tail.count(_EOCD_SIGNATURE) != 1:
            findings.add(codes.ARCHIVE_AMBIGUOUS,
                         f"{label}: {tail.count(_EOCD_SIGNATURE)} end-of-central-directory records")
            return
        eocd = tail.index(_EOCD_SIGNATURE)
        comment_length = struct.unpack("<H", tail[eocd + 20:eocd + 22])[0]
        if tail_start + eocd + 22 + comment_length != size:
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{label}: data after the end record")
            return
        position = 0
        for info in sorted(archive.infolist(), key=lambda i: i.header_offset):
            where = f"{label}: entry {info.filename!r}"
            if info.header_offset != position:
                what = "prepended data" if position == 0 else "a gap or overlap"
                findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: {what} at offset {position}")
                return
            stream.seek(info.header_offset)
            header = stream.read(_LOCAL_HEADER.size)
            if len(header) != _LOCAL_HEADER.size:
                findings.add(codes.ARCHIVE_FORMAT, f"{where}: truncated local header")
                return
            fields = _LOCAL_HEADER.unpack(header)
            if fields[0] != _LOCAL_SIGNATURE:
                findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: no local header at its offset")
                return
            name_length, extra_length = fields[9], fields[10]
            raw_name = stream.read(name_length)
            expected = info.orig_filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437")
            if raw_name != expected:
                findings.add(codes.ARCHIVE_AMBIGUOUS,
                             f"{where}: local header names {raw_name[:80]!r}")
                return
            position = (info.header_offset + _LOCAL_HEADER.size + name_length + extra_length
                        + info.compress_size)
            if info.flag_bits & 0x08:
                stream.seek(position)
                descriptor = stream.read(4)
                position += 16 if descriptor == b"PK\x07\x08" else 12
        if position != archive.start_dir:
            findings.add(codes.ARCHIVE_AMBIGUOUS,
                         f"{label}: {archive.start_dir - position} bytes between the last "
                         "entry and the central directory")


class LimitedEntry:
    """Streams one entry, refusing more bytes than its declared size."""

    def __init__(self, archive: zipfile.ZipFile, entry: ArchiveEntry, label: str) -> None:
        self._label = f"{label}: entry {entry.name!r}"
        try:
            self._stream: BinaryIO = archive.open(entry.info)  # type: ignore[assignment]
        except _STREAM_ERRORS as exc:
            raise Refused.one(codes.ARCHIVE_FORMAT, f"{self._label}: {exc}") from None
        self._left = entry.size

    def read(self, size: int = CHUNK) -> bytes:
        try:
            chunk = self._stream.read(size if size >= 0 else CHUNK)
        except _STREAM_ERRORS as exc:
            raise Refused.one(codes.ARCHIVE_FORMAT, f"{self._label}: {exc}") from None
        self._left -= len(chunk)
        if self._left < 0:
            raise Refused.one(codes.ARCHIVE_LIMIT, f"{self._label}: more bytes than declared")
        return chunk

    def close(self) -> None:
        self._stream.close()

    def __enter__(self) -> LimitedEntry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
