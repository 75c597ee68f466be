"""The end record of an untrusted archive, read first and judged alone (`archive_reader`).

It must end the file (no comment, nothing after it), be the only one, describe a single-disk
archive whose two entry counts agree, not be ZIP64's (no ZIP64 sentinel, no ZIP64 locator), and
place the central directory right before it. Its entry count and directory size are judged
against the limits here, before one record is parsed: a native bundle's limits when it counts
`limits.MAX_ENTRIES` entries or fewer; above, a harness zip's (`limits.HARNESS_MAX_ARCHIVE_ENTRIES`
entries, a directory of at most `limits.MAX_RECORD_BYTES` a record), which the reader keeps only
for records that name a harness bundle. Reading it costs one read of at most 64 KiB + 22 bytes.
"""

from __future__ import annotations

import struct

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.inputs import read_at
from horon_bundle.verify import limits

_EOCD = struct.Struct("<4sHHHHIIH")
_EOCD_SIGNATURE = b"PK\x05\x06"
_ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
_TAIL = (1 << 16) + _EOCD.size


def pread(fd: int, length: int, offset: int) -> bytes:
    """`length` bytes at `offset` of `fd` (fewer at the end of the file), read in full."""
    parts = []
    while length > 0:
        part = read_at(fd, length, offset)
        if not part:
            break
        parts.append(part)
        length -= len(part)
        offset += len(part)
    return b"".join(parts)


def over_native_entries(label: str, count: int) -> str:
    """The refusal of more entries than a native bundle's (before parsing, or after, when the
    records do not name a harness bundle: the same words either way)."""
    return f"{label}: {count} entries, limit {limits.MAX_ENTRIES}"


def read_end_record(fd: int, size: int, label: str) -> tuple[int, int, int, bytes]:
    """(entry count, central directory size, its offset, the record's bytes) from the one
    end record."""
    if size < _EOCD.size:
        raise Refused.one(codes.ARCHIVE_FORMAT, f"{label}: not a zip ({size} bytes)")
    if size > limits.MAX_ARCHIVE_BYTES:
        raise Refused.one(codes.ARCHIVE_LIMIT, f"{label}: {size} bytes, limit "
                                               f"{limits.MAX_ARCHIVE_BYTES}")
    tail_start = max(0, size - _TAIL)
    tail = pread(fd, size - tail_start, tail_start)
    found = tail.count(_EOCD_SIGNATURE)
    if found == 0:
        raise Refused.one(codes.ARCHIVE_FORMAT, f"{label}: not a zip (no end record)")
    if found > 1:
        raise Refused.one(codes.ARCHIVE_AMBIGUOUS, f"{label}: {found} end-of-central-directory "
                                                   "records")
    if tail.rindex(_EOCD_SIGNATURE) != len(tail) - _EOCD.size:
        raise Refused.one(codes.ARCHIVE_AMBIGUOUS, f"{label}: data or a comment after the end "
                                                   "record")
    (_sig, disk, cd_disk, on_disk, total, cd_size, cd_offset,
     comment) = _EOCD.unpack(tail[-_EOCD.size:])
    if comment:
        raise Refused.one(codes.ARCHIVE_AMBIGUOUS, f"{label}: the end record claims a "
                                                   f"{comment}-byte comment that is not there")
    if 0xFFFF in (disk, cd_disk, on_disk, total) or 0xFFFFFFFF in (cd_size, cd_offset) or \
            tail[-_EOCD.size - 20:-_EOCD.size].startswith(_ZIP64_LOCATOR_SIGNATURE):
        raise Refused.one(codes.ARCHIVE_FORMAT, f"{label}: ZIP64 end records (bundle archives "
                                                "are below 2 GiB and 65,535 entries and never "
                                                "need ZIP64)")
    if disk != 0 or cd_disk != 0:
        raise Refused.one(codes.ARCHIVE_FORMAT, f"{label}: a multi-disk archive (disk {disk}, "
                                                f"central directory on disk {cd_disk})")
    if on_disk != total:
        raise Refused.one(codes.ARCHIVE_AMBIGUOUS, f"{label}: the end record counts {on_disk} "
                                                   f"entries on this disk but {total} in all")
    _judge_counts(total, cd_size, label)
    if cd_offset + cd_size != size - _EOCD.size:
        raise Refused.one(codes.ARCHIVE_AMBIGUOUS,
                          f"{label}: the central directory ({cd_size} bytes at {cd_offset}) "
                          f"does not end where the end record starts ({size - _EOCD.size})")
    return total, cd_size, cd_offset, tail[-_EOCD.size:]


def _judge_counts(total: int, cd_size: int, label: str) -> None:
    """The end record's entry count and directory size against the limits, before a record is
    parsed: a native bundle's, or above its entries a harness zip's (`_validate` then requires
    the records to name a harness bundle), its directory no larger than its records can be."""
    if total <= limits.MAX_ENTRIES:
        if cd_size > limits.MAX_CENTRAL_DIRECTORY_BYTES:
            raise Refused.one(codes.ARCHIVE_LIMIT, f"{label}: a {cd_size}-byte central "
                                                   "directory, limit "
                                                   f"{limits.MAX_CENTRAL_DIRECTORY_BYTES}")
        return
    if total > limits.HARNESS_MAX_ARCHIVE_ENTRIES:
        raise Refused.one(codes.ARCHIVE_LIMIT, f"{label}: {total} entries, limit "
                                               f"{limits.HARNESS_MAX_ARCHIVE_ENTRIES} (a harness "
                                               f"bundle's; {limits.MAX_ENTRIES} a native one's)")
    if cd_size > total * limits.MAX_RECORD_BYTES:
        raise Refused.one(codes.ARCHIVE_LIMIT,
                          f"{label}: a {cd_size}-byte central directory for {total} entries, "
                          f"limit {total * limits.MAX_RECORD_BYTES} ({limits.MAX_RECORD_BYTES} "
                          "bytes a record)")
