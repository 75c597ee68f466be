"""Streaming one validated archive entry: inflated through its CRC, bounded by its size."""

from __future__ import annotations

import zlib

from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Refused
from horon_bundle.core.hashing import CHUNK
from horon_bundle.core.inputs import read_at
from horon_bundle.verify.archive_entries import DEFLATED, ArchiveEntry


class ArchiveStream:
    """Streams one entry: inflated through its CRC, never more bytes than declared, and the
    compressed stream must end exactly at the entry's compressed size."""

    def __init__(self, fd: int, label: str, entry: ArchiveEntry) -> None:
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
        if self._done:
            return b""
        chunk = self._next_chunk(size if size > 0 else CHUNK)
        self._left -= len(chunk)
        if self._left < 0:
            raise self._refuse(codes.ARCHIVE_LIMIT, "more bytes than declared")
        if chunk:
            self._crc = zlib.crc32(chunk, self._crc)
            return chunk
        self._done = True
        if self._left:
            raise self._refuse(codes.ARCHIVE_FORMAT, f"{self._entry.size - self._left} bytes, "
                                                     f"declared {self._entry.size}")
        if self._inflate is not None and not self._inflate.eof:
            raise self._refuse(codes.ARCHIVE_FORMAT, "the deflate stream is truncated")
        if self._crc != self._entry.crc:
            raise self._refuse(codes.ARCHIVE_FORMAT, f"bad CRC-32 {self._crc:08x}, declared "
                                                     f"{self._entry.crc:08x}")
        return b""

    def close(self) -> None:
        self._done = True

    def __enter__(self) -> ArchiveStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
