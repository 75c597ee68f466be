"""Reading an untrusted bundle archive: one parser, every record compared, nothing extracted.

The archive is opened once (`core.inputs`); every byte is read from that descriptor with
`pread`, so renaming another file over the path changes nothing. The reader is its own: it
never asks CPython's zipfile what an entry is, because zipfile silently truncates a name at a
NUL (`LICENSE\\0.evil` becomes `LICENSE`), trusts the central directory's sizes over the local
header's, lets the last duplicate win and rewrites `../x`. Instead, before any entry is read:

1. the end record is read first and judged alone: it must end the file (no comment, nothing
   after it), be the only one, describe a single-disk archive whose two entry counts agree,
   and place the central directory right before it; its counts and sizes are checked against
   the limits *before* a single central-directory record is parsed. Which limits: a native
   bundle's (`limits.MAX_ENTRIES`) when it counts that many entries or fewer; above, up to a
   harness zip's (`limits.HARNESS_MAX_ARCHIVE_ENTRIES`, as many as a zip without ZIP64 can
   count) in a directory of at most as many records, and then the records parsed must name a
   harness bundle (`limits.harness_shaped`), else it is refused as the native limit refused it
   before parsing (without parsing when the directory's bytes do not even hold the root files'
   names): a native bundle never has the larger limits;
2. every central-directory record is parsed from its raw bytes: version, flags (encryption
   refused), method (stored or deflate), no extra field (ZIP64 is not part of the format),
   no comment, disk 0, the raw name (NUL, non-UTF-8 or unflagged non-ASCII bytes refused);
   the records must fill the directory exactly;
3. every local header is compared field by field with its central record (version, flags,
   method, time, CRC, both sizes, name bytes, no extra field), as is the data descriptor
   when one follows the data; entries must tile the file from offset 0 to the central
   directory with no gap, overlap or prepended data;
4. names, types, modes, duplicates, collisions and limits are judged as for a directory: the
   depth and the entries unpacked of the directory this bundle unpacks into, a harness
   bundle's (`limits.harness_bundle_tree`) or a native one's (`limits.bundle_tree`).

Entries are then inflated only when asked for (`ArchiveStream`), through their CRC, with the
declared size enforced while streaming and the deflate stream required to end exactly at
the entry's compressed size.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.core.inputs import open_regular
from horon_bundle.verify import limits
from horon_bundle.verify.reading.archive_end import over_native_entries, pread, read_end_record
from horon_bundle.verify.reading.archive_entries import (
    DEFLATED,
    STORED,
    ArchiveEntry,
    judge_entries,
)
from horon_bundle.verify.reading.archive_hasher import ArchiveHasher
from horon_bundle.verify.reading.archive_stream import ArchiveStream, ResumeIndex

_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL_SIGNATURE = b"PK\x01\x02"
_LOCAL_SIGNATURE = b"PK\x03\x04"
_DESCRIPTOR_SIGNATURE = b"PK\x07\x08"
_ZIP64_EXTRA = 0x0001
_ENCRYPTED = 0x0001
_DESCRIPTOR = 0x0008
_STRONG_ENCRYPTION = 0x0040
_UTF8 = 0x0800
_DEFLATE_OPTIONS = 0x0006
_MAX_VERSION_NEEDED = 20  # deflate; ZIP64 (45), bzip2 (46), LZMA (63) and AES need more


class ArchiveReader:
    """A validated archive: its file entries by name, read through one descriptor."""

    def __init__(self, fd: int, label: str, entries: dict[str, ArchiveEntry], *, size: int,
                 trailer: tuple[tuple[int, bytes], ...] = ()) -> None:
        self.fd = fd
        self.label = label
        self.entries = entries
        self.size = size
        self._trailer = trailer  # (offset, bytes) of the central directory, of the end record
        self._hasher: ArchiveHasher | None = None
        self._index: tuple[str, ResumeIndex] | None = None

    def open(self, name: str, *, resumable: bool = False) -> ArchiveStream:
        """Stream one entry. `resumable`: keep resume points while it streams, so that later
        streams of this entry can seek cheaply (one entry at a time: memory stays flat)."""
        if resumable:
            self._index = (name, ResumeIndex())
        index = self._index[1] if self._index is not None and self._index[0] == name else None
        return ArchiveStream(self.fd, self.label, self.entries[name], hasher=self._hasher,
                             index=index)

    def start_digest(self) -> None:
        """Hash the archive from the bytes its entry streams read from now on (`digest`)."""
        framing = [(e.header_offset, e.local_header) for e in self.entries.values()]
        framing += [(e.data_offset + e.compressed_size, e.descriptor)
                    for e in self.entries.values() if e.descriptor]
        self._hasher = ArchiveHasher(self.fd, self.size, [*framing, *self._trailer])

    def digest(self) -> Digest:
        """The SHA-256 of the archive file itself, read through the descriptor that was
        validated (what a signature over the archive must cover): from the bytes the entry
        streams read since `start_digest`, and whatever they did not read, read now."""
        hasher = self._hasher or ArchiveHasher(self.fd, self.size, ())
        return hasher.digest()

    @property
    def reread(self) -> int:
        """Bytes `digest` had to read itself (0: every byte hashed was a byte judged)."""
        return self._hasher.reread if self._hasher is not None else self.size

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def validate_archive(path: Path) -> ArchiveReader:
    """Open and fully validate an archive; raises Refused with every problem found."""
    label = path.name
    try:
        fd, info = open_regular(path, what="archive", follow_symlinks=False)
    except FileNotFoundError:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: no such file") from None
    try:
        entries, trailer = _validate(fd, info.st_size, label)
    except BaseException:
        os.close(fd)
        raise
    return ArchiveReader(fd, label, entries, size=info.st_size, trailer=trailer)


def _validate(fd: int, size: int, label: str,
              ) -> tuple[dict[str, ArchiveEntry], tuple[tuple[int, bytes], ...]]:
    """The file entries by name, and (offset, bytes) of the directory and of the end record."""
    findings = Findings()
    try:
        count, cd_size, cd_offset, end_record = read_end_record(fd, size, label)
        directory = pread(fd, cd_size, cd_offset)
        if count > limits.MAX_ENTRIES and not all(  # no record can name a harness bundle's
                name.encode() in directory for name in limits.HARNESS_ROOT_FILES):
            raise Refused.one(codes.ARCHIVE_LIMIT, over_native_entries(label, count))
        central = _central_directory(directory, count, label, findings)
        harness = limits.harness_shaped({e.name for e in central if not e.is_directory})
        if count > limits.MAX_ENTRIES and not harness:
            raise Refused.one(codes.ARCHIVE_LIMIT, over_native_entries(label, count))
        findings.raise_if_any()
        located = _local_headers(fd, central, cd_offset, label, findings)
        del central  # the located entries replace them
        findings.raise_if_any()
        unpacked = limits.harness_bundle_tree() if harness else limits.bundle_tree()
        entries = judge_entries(located, size, label, findings, unpacked=unpacked)
    except OSError as exc:
        raise Refused.one(codes.ARCHIVE_FORMAT, f"{label}: {exc.strerror or exc}") from None
    findings.raise_if_any()
    return entries, ((cd_offset, directory), (cd_offset + cd_size, end_record))


def _decode_name(raw: bytes, flags: int) -> str | None:
    """The entry name from its raw bytes, or None when readers could disagree on it."""
    if b"\0" in raw:
        return None
    try:
        return raw.decode("utf-8" if flags & _UTF8 else "ascii")
    except UnicodeDecodeError:
        return None


def _central_directory(data: bytes, count: int, label: str,
                       findings: Findings) -> list[ArchiveEntry]:
    """Exactly `count` records filling `data`; every field judged from its bytes."""
    entries: list[ArchiveEntry] = []
    position = 0
    for index in range(count):
        where = f"{label}: central directory record {index}"
        if position + _CENTRAL.size > len(data):
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: past the end of the directory "
                                                  f"(the end record counts {count})")
            return entries
        (signature, _made_by, needed, flags, method, time, date, crc, csize, usize, name_len,
         extra_len, comment_len, disk, _internal, external,
         offset) = _CENTRAL.unpack_from(data, position)
        if signature != _CENTRAL_SIGNATURE:
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: no record signature at offset "
                                                  f"{position} of the directory")
            return entries
        start = position + _CENTRAL.size
        raw = data[start:start + name_len]
        extra = data[start + name_len:start + name_len + extra_len]
        position = start + name_len + extra_len + comment_len
        if position > len(data):
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: runs past the end of the directory")
            return entries
        name = _decode_name(raw, flags)
        shown = raw[:80]
        if name is None:
            findings.add(codes.ARCHIVE_UNSAFE_NAME,
                         f"{where}: name {shown!r} holds a NUL byte or bytes that are not "
                         f"{'UTF-8' if flags & _UTF8 else 'ASCII (no UTF-8 flag)'}")
            continue
        where = f"{label}: entry {name!r}"
        if name_len > limits.MAX_NAME_BYTES:
            findings.add(codes.ARCHIVE_LIMIT, f"{where}: name longer than "
                                              f"{limits.MAX_NAME_BYTES} bytes")
            continue
        problems = _record_problems(needed, flags, method, extra, comment_len=comment_len,
                                    disk=disk)
        if method == STORED and csize != usize:
            problems.append(f"a stored entry of {usize} bytes with {csize} compressed bytes")
        for problem in problems:
            findings.add(codes.ARCHIVE_FORMAT, f"{where}: {problem}")
        entries.append(ArchiveEntry(
            name=name, raw_name=raw, size=usize, compressed_size=csize, method=method,
            flags=flags, crc=crc, time=time, date=date, version_needed=needed,
            mode=external >> 16, header_offset=offset))
    if position != len(data):
        findings.add(codes.ARCHIVE_AMBIGUOUS,
                     f"{label}: the central directory holds {len(data) - position} bytes "
                     f"beyond the {count} records its end record counts")
    return entries


def _record_problems(needed: int, flags: int, method: int, extra: bytes, *, comment_len: int,
                     disk: int) -> list[str]:
    problems = []
    if flags & (_ENCRYPTED | _STRONG_ENCRYPTION):
        problems.append("encrypted")
    unknown = flags & ~(_ENCRYPTED | _STRONG_ENCRYPTION | _DESCRIPTOR | _UTF8 | _DEFLATE_OPTIONS)
    if unknown:
        problems.append(f"general-purpose flags {unknown:#06x} are not part of the format")
    if method not in (STORED, DEFLATED):
        problems.append(f"compression method {method} not supported (stored or deflate)")
    elif method == STORED and flags & _DEFLATE_OPTIONS:
        problems.append("deflate option flags on a stored entry")
    if needed > _MAX_VERSION_NEEDED:
        problems.append(f"needs zip version {needed / 10:.1f} (at most 2.0: stored or deflate)")
    if extra:
        ids, at = [], 0
        while at + 4 <= len(extra):  # header id, data size, data (APPNOTE 4.5.1)
            ids.append(int.from_bytes(extra[at:at + 2], "little"))
            at += 4 + int.from_bytes(extra[at + 2:at + 4], "little")
        if _ZIP64_EXTRA in ids:
            problems.append("a ZIP64 extra field (bundle entries are below 2 GiB and never "
                            "need one)")
        else:
            problems.append(f"an extra field ({len(extra)} bytes): the format has none")
    if comment_len:
        problems.append("an entry comment: the format has none")
    if disk:
        problems.append(f"starts on disk {disk} (multi-disk archives are refused)")
    return problems


def _local_headers(fd: int, central: list[ArchiveEntry], cd_offset: int, label: str,
                   findings: Findings) -> list[ArchiveEntry]:
    """Each local header (and data descriptor) agrees with its record; entries tile the file
    from offset 0 to the central directory."""
    located: list[ArchiveEntry] = []
    position = 0
    for entry in sorted(central, key=lambda e: e.header_offset):
        where = f"{label}: entry {entry.name!r}"
        if entry.header_offset != position:
            what = "prepended data" if position == 0 else "a gap or overlap"
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: {what} at offset {position}")
            return located
        header = pread(fd, _LOCAL.size + len(entry.raw_name), entry.header_offset)
        if len(header) < _LOCAL.size:
            findings.add(codes.ARCHIVE_FORMAT, f"{where}: truncated local header")
            return located
        (signature, needed, flags, method, time, date, crc, csize, usize, name_len,
         extra_len) = _LOCAL.unpack_from(header)
        if signature != _LOCAL_SIGNATURE:
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: no local header at its offset")
            return located
        data_offset = entry.header_offset + _LOCAL.size + name_len + extra_len
        end = data_offset + entry.compressed_size
        local = {"version needed": needed, "flags": flags, "method": method,
                 "time": time, "date": date, "name length": name_len,
                 "extra field length": extra_len}
        central_values = {"version needed": entry.version_needed, "flags": entry.flags,
                          "method": entry.method, "time": entry.time, "date": entry.date,
                          "name length": len(entry.raw_name), "extra field length": 0}
        sizes = {"CRC-32": crc, "compressed size": csize, "uncompressed size": usize}
        expected_sizes = {"CRC-32": entry.crc, "compressed size": entry.compressed_size,
                          "uncompressed size": entry.size}
        disagreements = [f"{field} {local[field]} != {central_values[field]}"
                         for field in local if local[field] != central_values[field]]
        # with a data descriptor the local header may carry zeros instead of the values
        if not (entry.flags & _DESCRIPTOR and not any(sizes.values())):
            disagreements += [f"{field} {sizes[field]} != {expected_sizes[field]}"
                              for field in sizes if sizes[field] != expected_sizes[field]]
        raw_descriptor = b""
        if entry.flags & _DESCRIPTOR:
            raw_descriptor, values = _data_descriptor(fd, end)
            end += len(raw_descriptor)
            described = dict(zip(expected_sizes, values, strict=True))
            disagreements += [f"data descriptor {field} {described[field]} != "
                              f"{expected_sizes[field]}" for field in described
                              if described[field] != expected_sizes[field]]
        if header[_LOCAL.size:_LOCAL.size + name_len] != entry.raw_name:
            disagreements.append(f"local header names {header[_LOCAL.size:][:80]!r}")
        if disagreements:
            findings.add(codes.ARCHIVE_AMBIGUOUS, f"{where}: local header and central directory "
                                                  f"disagree: {'; '.join(disagreements)}")
            return located
        located.append(_with_data_offset(entry, data_offset, header[:_LOCAL.size + name_len],
                                         raw_descriptor if entry.flags & _DESCRIPTOR else b""))
        position = end
    if position != cd_offset:
        findings.add(codes.ARCHIVE_AMBIGUOUS, f"{label}: {cd_offset - position} bytes between "
                                              "the last entry and the central directory")
    return located


def _data_descriptor(fd: int, offset: int) -> tuple[bytes, tuple[int, int, int]]:
    """The data descriptor at `offset` (signature optional): (its bytes, crc/sizes)."""
    raw = pread(fd, 16, offset)
    if raw[:4] == _DESCRIPTOR_SIGNATURE:
        raw = raw[:16]
        body = raw[4:]
    else:
        raw = raw[:12]
        body = raw
    if len(body) < 12:
        return raw, (-1, -1, -1)
    values = struct.unpack("<III", body[:12])
    return raw, (values[0], values[1], values[2])


def _with_data_offset(entry: ArchiveEntry, data_offset: int, local_header: bytes,
                      descriptor: bytes) -> ArchiveEntry:
    return ArchiveEntry(
        name=entry.name, raw_name=entry.raw_name, size=entry.size,
        compressed_size=entry.compressed_size, method=entry.method, flags=entry.flags,
        crc=entry.crc, time=entry.time, date=entry.date, version_needed=entry.version_needed,
        mode=entry.mode, header_offset=entry.header_offset, data_offset=data_offset,
        local_header=local_header, descriptor=descriptor)


