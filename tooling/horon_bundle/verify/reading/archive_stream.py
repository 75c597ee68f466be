"""Streaming one validated archive entry: inflated through its CRC, bounded by its size.

An entry streamed from its start can keep *resume points* (`ResumeIndex`): copies of the
inflater's state every so often, so a later stream of the same entry can `seek` to an offset
by inflating from the nearest point before it instead of from the entry's first byte. This is
how the verifier reads a library's static section after hashing it: the section is found
from the windows kept while hashing, and what lies outside them costs a bounded re-inflation,
never a second pass over the whole library. At most `ResumeIndex.MAX_POINTS` points of about
40 KiB each (zlib's 32 KiB window and its state) are kept, so memory stays flat at any size.

Both cores: a stream read from its start through an entry of more than `READ_AHEAD_FROM`
bytes produces its next chunk (read, inflate, CRC-32, the archive's digest of the
compressed bytes) on a worker thread while the caller hashes the chunk it was given; zlib,
hashlib and `pread` release the GIL on such buffers. The work and its order are the same as
on one thread — one chunk at a time, in sequence — so a refusal surfaces at the very read
that would have raised it.
"""

from __future__ import annotations

import bisect
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from horon_bundle.core import codes
from horon_bundle.core.background import worker
from horon_bundle.core.errors import Code, Refused
from horon_bundle.core.hashing import CHUNK
from horon_bundle.core.inputs import read_at
from horon_bundle.verify.reading.archive_entries import DEFLATED, ArchiveEntry
from horon_bundle.verify.reading.archive_hasher import ArchiveHasher

if TYPE_CHECKING:
    from concurrent.futures import Future

READ_AHEAD_FROM = 4 * CHUNK


@dataclass(frozen=True, slots=True)
class ResumePoint:
    produced: int  # bytes of the entry inflated before this point
    offset: int  # archive offset of the next compressed byte the inflater takes
    inflate: Any  # zlib's decompress object, copied at that point (never used, only copied)


@dataclass(slots=True)
class ResumeIndex:
    """Resume points of one entry, evenly spaced: when there are too many, every other one
    is dropped and the spacing doubles (at most MAX_POINTS, spaced at most size / 32)."""

    MAX_POINTS = 64
    every: int = 1 << 20
    points: list[ResumePoint] = field(default_factory=list)
    _next: int = 1 << 20

    def offer(self, produced: int, offset: int, inflate: Any) -> None:
        if produced < self._next:
            return
        self.points.append(ResumePoint(produced, offset, inflate.copy()))
        if len(self.points) > self.MAX_POINTS:
            self.points = self.points[1::2]
            self.every *= 2
        self._next = produced + self.every

    def before(self, position: int) -> ResumePoint | None:
        """The last point at or before `position`, if any."""
        found = bisect.bisect_right([p.produced for p in self.points], position)
        return self.points[found - 1] if found else None


class ArchiveStream:
    """Streams one entry: inflated through its CRC, never more bytes than declared, and the
    compressed stream must end exactly at the entry's compressed size.

    `hasher` (if any) is shown every compressed byte read, at its offset (the archive's digest
    from the bytes judged); `index` is filled with resume points when this stream reads the
    entry from its start, and used by `seek` otherwise."""

    def __init__(self, fd: int, label: str, entry: ArchiveEntry, *,
                 hasher: ArchiveHasher | None = None, index: ResumeIndex | None = None) -> None:
        self._fd = fd
        self._entry = entry
        self._label = f"{label}: entry {entry.name!r}"
        self._offset = entry.data_offset
        self._compressed_left = entry.compressed_size
        self._left = entry.size
        self._crc = 0
        self._inflate = zlib.decompressobj(-zlib.MAX_WBITS) if entry.method == DEFLATED else None
        self._pending = b""
        self._done = False
        self._hasher = hasher
        self._index = index
        self._partial = False  # sought: a part of the entry, so no CRC to check at its end
        self._started = False
        self._ahead: Future[bytes] | None = None  # the next chunk, produced on the worker
        self._rest = b""  # what a read-ahead chunk held beyond a smaller read's size

    def _refuse(self, code: Code, message: str) -> Refused:
        self._done = True
        return Refused.one(code, f"{self._label}: {message}")

    def _compressed(self, limit: int = CHUNK) -> bytes:
        if self._pending:
            data, self._pending = self._pending, b""
            return data
        if self._compressed_left <= 0:
            return b""
        try:
            data = read_at(self._fd, min(limit, self._compressed_left), self._offset)
        except OSError as exc:
            raise self._refuse(codes.ARCHIVE_FORMAT, exc.strerror or str(exc)) from None
        if not data:
            raise self._refuse(codes.ARCHIVE_FORMAT, "truncated entry data")
        if self._hasher is not None:
            self._hasher.saw(self._offset, data)
        self._offset += len(data)
        self._compressed_left -= len(data)
        return data

    def _next_chunk(self, size: int) -> bytes:
        want = max(1, min(size, CHUNK))
        inflate = self._inflate
        if inflate is None:
            return self._compressed(want)
        while True:
            data = self._compressed()
            if not data and inflate.eof:
                return b""
            try:  # also with no input left: drain what zlib still holds
                chunk = inflate.decompress(data, min(want, self._left + 1))
            except zlib.error as exc:
                raise self._refuse(codes.ARCHIVE_FORMAT,
                                   f"damaged deflate stream ({exc})") from None
            self._pending = inflate.unconsumed_tail
            if inflate.eof and (inflate.unused_data or self._pending or self._compressed_left):
                raise self._refuse(codes.ARCHIVE_AMBIGUOUS, "bytes after the end of the deflate "
                                                            "stream, inside the entry")
            if chunk or not data:
                return chunk

    def read(self, size: int = CHUNK) -> bytes:
        size = size if size > 0 else CHUNK
        if self._rest:
            chunk, self._rest = self._rest[:size], self._rest[size:]
            return chunk
        if self._ahead is not None:
            ahead, self._ahead = self._ahead, None
            chunk = ahead.result()  # a refusal raised on the worker is raised here
        else:
            chunk = self._produce(size)
        if chunk and not self._partial and self._entry.size > READ_AHEAD_FROM:
            self._ahead = worker().submit(self._produce, CHUNK)
        if len(chunk) > size:
            chunk, self._rest = chunk[:size], chunk[size:]
        return chunk

    def _produce(self, size: int) -> bytes:
        """The next chunk of the entry, checked (on the worker when reading ahead)."""
        if self._done:
            return b""
        self._started = True
        chunk = self._next_chunk(size if size > 0 else CHUNK)
        self._left -= len(chunk)
        if self._left < 0:
            raise self._refuse(codes.ARCHIVE_LIMIT, "more bytes than declared")
        if chunk:
            self._crc = zlib.crc32(chunk, self._crc)
            if self._index is not None and not self._partial and self._inflate is not None:
                self._index.offer(self._entry.size - self._left,
                                  self._offset - len(self._pending), self._inflate)
            return chunk
        self._done = True
        if self._left:
            raise self._refuse(codes.ARCHIVE_FORMAT, f"{self._entry.size - self._left} bytes, "
                                                     f"declared {self._entry.size}")
        if self._inflate is not None and not self._inflate.eof:
            raise self._refuse(codes.ARCHIVE_FORMAT, "the deflate stream is truncated")
        if self._crc != self._entry.crc and not self._partial:
            raise self._refuse(codes.ARCHIVE_FORMAT, f"bad CRC-32 {self._crc:08x}, declared "
                                                     f"{self._entry.crc:08x}")
        return b""

    def kernel_span(self) -> tuple[int, int, int] | None:
        """(descriptor, offset, length) of a stored entry's bytes in the archive, for a copy
        that needs no inflating (its digest is checked afterwards, which also proves the CRC
        the verify checked); None for a deflated entry or once reading has begun."""
        if self._inflate is not None or self._started:
            return None
        return (self._fd, self._entry.data_offset, self._entry.size)

    def seekable(self) -> bool:
        return True

    def seek(self, position: int) -> None:
        """Move a fresh stream to `position` of the entry: directly for a stored entry, else
        by inflating forward from the nearest resume point (or the start). What follows is
        a part of the entry: its sizes are still enforced, its CRC (of the whole) is not."""
        if self._started or not 0 <= position <= self._entry.size:
            raise ValueError(f"{self._label}: cannot seek to {position}")
        self._started = self._partial = True
        entry = self._entry
        skip = position
        if self._inflate is None:
            self._offset += position
            self._compressed_left -= position
            self._left -= position
            skip = 0
        elif self._index is not None and (point := self._index.before(position)) is not None:
            self._inflate = point.inflate.copy()
            self._offset = point.offset
            self._compressed_left = entry.data_offset + entry.compressed_size - point.offset
            self._left = entry.size - point.produced
            skip = position - point.produced
        while skip > 0:
            dropped = self._produce(min(skip, CHUNK))
            if not dropped:
                break
            skip -= len(dropped)

    def close(self) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None and not ahead.cancel():
            ahead.exception()  # the worker must be done with the descriptor and the hasher
        self._done = True

    def __enter__(self) -> ArchiveStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
