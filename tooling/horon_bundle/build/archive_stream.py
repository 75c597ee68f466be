"""The native bundle's archive written in one pass, hashed as it is written.

The bytes are those of `build.archive.write_archive` (zipfile) for the same bundle, entry for
entry (`tests/build/test_archive_stream.py` compares them); what differs is how they are
made. zipfile writes each local header with a zero CRC and size, then seeks back to rewrite
it once the data is through, so its archive can only be hashed by reading it back. Here each
header is written once, before its data, from what staging learnt while it wrote the file
(its size and CRC-32, `Digest.crc32`): the archive streams out front to back through one
SHA-256, and no byte of it is read again.

The file is still read to write its entry (a stored entry streams from it; a deflated one is
deflated, as zipfile does, into a spool that holds at most SPOOL_IN_MEMORY bytes in memory
before it spills to an unnamed temporary file beside the archive), and the CRC-32 of what
was read is taken on the way: a file that is not the bytes staging wrote (resized, rewritten
between the bundle's self-check and its archive) is refused, the partial archive removed.
A file of at most one store-rule sample is read once, for the rule and the entry alike.

An archive that would need ZIP64 (an entry near 2 GiB, or more than `MAX_ARCHIVE_BYTES` in
all, which verify refuses) is refused rather than written.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import struct
import tempfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, BinaryIO

from horon_bundle.build.archive import COMPRESS_LEVEL, store_decision, zip_date_time
from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import write_failed
from horon_bundle.core.hashing import CHUNK, Digest
from horon_bundle.core.inputs import open_regular
from horon_bundle.verify import limits

SPOOL_IN_MEMORY = 16 << 20  # deflated bytes of one entry kept in memory before spilling

# PKWARE APPNOTE 4.3.7 (local header), 4.3.12 (central directory), 4.3.16 (end record), as
# zipfile packs them
_LOCAL = struct.Struct("<4s2B4HL2L2H")
_CENTRAL = struct.Struct("<4s4B4HL2L5H2L")
_END = struct.Struct("<4s4H2LH")
_VERSION = 20  # zipfile's DEFAULT_VERSION: made by and needed to extract (no ZIP64)
_UNIX = 3
_UTF8_NAME = 0x800
_STORED, _DEFLATED = 0, 8
_ZIP64_AT = (1 << 31) - 1  # zipfile's ZIP64_LIMIT: past it (or an entry past ~1/1.05 of it)
# zipfile writes ZIP64 records; past 65,535 entries too, which the staged bundle's self-check
# has refused before (`verify.limits.MAX_ENTRIES`)


@dataclass(frozen=True, slots=True)
class _Record:
    name: bytes
    flags: int
    method: int
    crc: int
    packed: int
    size: int
    mode: int
    offset: int


class _HashedOutput:
    """The archive's file, every byte hashed as it is written."""

    def __init__(self, handle: BinaryIO, label: str) -> None:
        self._handle = handle
        self._hasher = hashlib.sha256()
        self._label = label
        self.offset = 0

    def write(self, data: bytes | memoryview) -> None:
        largest = min(limits.MAX_ARCHIVE_BYTES, _ZIP64_AT)  # past either, zipfile's records
        if self.offset + len(data) > largest:               # would differ (ZIP64)
            raise Refused.one(codes.ARCHIVE_LIMIT,
                              f"{self._label}: over {largest} bytes, the largest archive "
                              "verify reads (it would need ZIP64)")
        self._hasher.update(data)
        self._handle.write(data)
        self.offset += len(data)

    def digest(self) -> Digest:
        return Digest(self._hasher.hexdigest(), self.offset)


def write_streamed_archive(bundle: Path, files: Iterable[tuple[str, bool]],
                           written: Mapping[str, Digest], destination: Path,
                           *, epoch: int) -> Digest:
    """Zip the bundle's `files` (relative path, executable) into `destination` atomically,
    each from the size and CRC-32 `written` holds for it; the archive's digest, taken while
    writing it."""
    dos_time, dos_date = _dos(epoch)
    ordered = sorted(files, key=lambda item: item[0].encode("utf-8"))
    temp = destination.with_name(f".{destination.name}.partial")
    temp.unlink(missing_ok=True)
    try:
        try:
            with temp.open("xb") as handle:
                out = _HashedOutput(handle, destination.name)
                records = []
                for name, executable in ordered:
                    records.append(_entry(out, name, written[name], bundle=bundle,
                                          executable=executable, when=(dos_time, dos_date),
                                          spill=temp.parent))
                    checkpoint("build.archive")
                _central_directory(out, records, (dos_time, dos_date))
        except OSError as exc:
            raise write_failed(temp, exc) from None
        digest = out.digest()
        temp.replace(destination)
    finally:
        temp.unlink(missing_ok=True)
    return digest


def _dos(epoch: int) -> tuple[int, int]:
    year, month, day, hour, minute, second = zip_date_time(epoch)
    return hour << 11 | minute << 5 | second // 2, (year - 1980) << 9 | month << 5 | day


def _entry(out: _HashedOutput, name: str, expected: Digest, *, bundle: Path, executable: bool,
           when: tuple[int, int], spill: Path) -> _Record:
    path = bundle / name
    if expected.crc32 is None:
        raise ValueError(f"{name}: staged without a CRC-32")
    if expected.size * 1.05 > _ZIP64_AT:  # zipfile's rule for a ZIP64 local header
        raise Refused.one(codes.ARCHIVE_LIMIT, f"{path}: {expected.size} bytes would need a "
                                               "ZIP64 entry")
    try:
        fd, info = open_regular(path, what="bundle file", follow_symlinks=False)
    except FileNotFoundError:
        raise _changed(path, "removed") from None
    with os.fdopen(fd, "rb") as reader:
        if info.st_size != expected.size:
            raise _changed(path, f"{info.st_size} bytes, staged {expected.size}")
        stored, whole, packed = store_decision(fd, expected.size)
        encoded, flags = _name(name)
        mode = (stat.S_IFREG | (0o755 if executable else 0o644)) << 16
        record = _Record(name=encoded, flags=flags, method=_STORED if stored else _DEFLATED,
                         crc=expected.crc32, packed=expected.size, size=expected.size,
                         mode=mode, offset=out.offset)
        if whole is not None and packed is not None:  # read whole already: judged first
            crc, size = zlib.crc32(whole), len(whole)
            if not stored:
                record = _with_packed(record, len(packed))
            if crc == expected.crc32 and size == expected.size:
                out.write(_local(record, when))
                out.write(whole if stored else packed)
        elif stored:
            out.write(_local(record, when))
            crc, size = _stream_stored(reader, out)
        else:
            with tempfile.SpooledTemporaryFile(max_size=SPOOL_IN_MEMORY, mode="w+b",
                                             dir=str(spill)) as spool:
                crc, size = _deflate_into(reader, spool)
                record = _with_packed(record, spool.tell())
                if crc == expected.crc32 and size == expected.size:
                    out.write(_local(record, when))
                    spool.seek(0)
                    while chunk := spool.read(CHUNK):
                        out.write(chunk)
    if crc != expected.crc32 or size != expected.size:
        raise _changed(path, "its bytes are not those staged (CRC-32 or size)")
    return record


def _with_packed(record: _Record, packed: int) -> _Record:
    return _Record(name=record.name, flags=record.flags, method=record.method, crc=record.crc,
                   packed=packed, size=record.size, mode=record.mode, offset=record.offset)


def _changed(path: Path, why: str) -> Refused:
    return Refused.one(codes.BUILD_NONDETERMINISTIC,
                       f"{path}: changed after the bundle was staged ({why})",
                       "Something wrote into the output directory during the build; build "
                       "again with nothing else writing there.")


def _name(name: str) -> tuple[bytes, int]:
    """The name's bytes and flags as zipfile encodes them: ASCII, else UTF-8 flagged."""
    try:
        return name.encode("ascii"), 0
    except UnicodeEncodeError:
        return name.encode("utf-8"), _UTF8_NAME


def _local(record: _Record, when: tuple[int, int]) -> bytes:
    dos_time, dos_date = when
    return _LOCAL.pack(b"PK\x03\x04", _VERSION, 0, record.flags, record.method, dos_time,
                       dos_date, record.crc, record.packed, record.size, len(record.name),
                       0) + record.name


def _stream_stored(reader: io.BufferedReader, out: _HashedOutput) -> tuple[int, int]:
    crc = size = 0
    view = memoryview(bytearray(CHUNK))
    while got := reader.readinto(view):
        chunk = view[:got]
        crc = zlib.crc32(chunk, crc)
        out.write(chunk)
        size += got
    return crc, size


def _deflate_into(reader: io.BufferedReader, spool: IO[bytes]) -> tuple[int, int]:
    """Deflate as zipfile does (one `compress` per CHUNK read, one `flush`): the same bytes."""
    deflate = zlib.compressobj(COMPRESS_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    crc = size = 0
    while chunk := reader.read(CHUNK):
        crc = zlib.crc32(chunk, crc)
        size += len(chunk)
        spool.write(deflate.compress(chunk))
    spool.write(deflate.flush())
    return crc, size


def _central_directory(out: _HashedOutput, records: list[_Record],
                       when: tuple[int, int]) -> None:
    dos_time, dos_date = when
    start = out.offset
    for record in records:
        out.write(_CENTRAL.pack(b"PK\x01\x02", _VERSION, _UNIX, _VERSION, 0, record.flags,
                                record.method, dos_time, dos_date, record.crc, record.packed,
                                record.size, len(record.name), 0, 0, 0, 0, record.mode,
                                record.offset) + record.name)
    size = out.offset - start
    out.write(_END.pack(b"PK\x05\x06", 0, 0, len(records), len(records), size, start, 0))
