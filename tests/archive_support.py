"""Zips of many entries, written fast and byte by byte for tests of the archive reader's limits.

CPython's zipfile spends about 40 µs an entry; these tests write tens of thousands of entries
(up to 65,536, past what a zip without ZIP64 can count), so the records are packed here:
stored entries, one fixed time, Unix regular-file modes, no extra field, the UTF-8 flag only
on a non-ASCII name — what `verify.reading.archive_reader` accepts. `zip64=True` ends the
archive as a writer must past 65,534 entries: a ZIP64 end record and locator, then a plain end
record whose count says 0xFFFF ("see the ZIP64 record").
"""

from __future__ import annotations

import stat
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

HARNESS_ROOT = ("SHA256SUMS", "catalogue.json", "provenance.json")  # limits.HARNESS_ROOT_FILES
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_END = struct.Struct("<4sHHHHIIH")
_ZIP64_END = struct.Struct("<4sQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<4sIQI")
_TIME, _DATE = 0, (0 << 9) | (1 << 5) | 1  # 1980-01-01 00:00
_FILE_MODE, _DIR_MODE = (stat.S_IFREG | 0o644) << 16, (stat.S_IFDIR | 0o755) << 16


def write_zip(path: Path, names: Iterable[str], contents: dict[str, bytes] | None = None, *,
              zip64: bool = False) -> Path:
    """A stored zip of `names` (empty unless `contents` says otherwise; a name ending in '/'
    a directory entry), in that order."""
    contents = contents or {}
    central = bytearray()
    count = 0
    with path.open("wb") as out:
        offset = 0
        for name in names:
            raw = name.encode("utf-8")
            flags = 0 if raw.isascii() else 0x0800
            data = contents.get(name, b"")
            crc = zlib.crc32(data)
            header = _LOCAL.pack(b"PK\x03\x04", 20, flags, 0, _TIME, _DATE, crc, len(data),
                                 len(data), len(raw), 0)
            out.write(header + raw + data)
            central += _CENTRAL.pack(b"PK\x01\x02", (3 << 8) | 20, 20, flags, 0, _TIME, _DATE,
                                     crc, len(data), len(data), len(raw), 0, 0, 0, 0,
                                     _DIR_MODE if name.endswith("/") else _FILE_MODE,
                                     offset) + raw
            offset += len(header) + len(raw) + len(data)
            count += 1
        out.write(central)
        if zip64:
            end64 = offset + len(central)
            out.write(_ZIP64_END.pack(b"PK\x06\x06", 44, (3 << 8) | 45, 45, 0, 0, count, count,
                                      len(central), offset))
            out.write(_ZIP64_LOCATOR.pack(b"PK\x06\x07", 0, end64, 1))
            out.write(_END.pack(b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0))
        else:
            out.write(_END.pack(b"PK\x05\x06", 0, 0, count, count, len(central), offset, 0))
    return path


def long_names(count: int, *, depth: int, length: int, per_directory: int = 100) -> list[str]:
    """`count` distinct names of exactly `length` UTF-8 bytes, each `depth` directories deep:
    a chain of `depth - 1` directories shared by all, then one directory per `per_directory`
    names (so that unpacked they stay few: `depth - 1 + count / per_directory` directories)."""
    chain = "".join(f"p{level:02d}/" for level in range(1, depth))
    names = []
    for index in range(count):
        head = f"{chain}g{index // per_directory:04d}/f{index:05d}-"
        assert len(head) < length, (head, length)
        names.append(head + "x" * (length - len(head)))
    return names
