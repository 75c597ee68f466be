"""The archive's own SHA-256, from the very bytes its entries were judged from: one read.

A signature (and a publication) covers the archive file; verify judges its entries. Instead
of reading the file a second time to hash it, the hasher hashes the bytes the entry streams
read, in file order: the local headers and data descriptors as the reader validated them,
each entry's compressed bytes as they were inflated, then the central directory and end
record as validated. The reader proved that these pieces tile the file from offset 0 to its
end with no gap (`verify.reading.archive_reader`), so their hash is the file's.

Streams may read out of file order (verify reads plugin.json first): a piece that lies ahead
of what is hashed so far is held until the hash reaches it, within `HELD_LIMIT` bytes (the
metadata files, a few KiB each in practice); a piece beyond that budget is dropped, and
whatever the streams did not supply is read through the same descriptor when the digest is
asked for (`reread` counts those bytes: 0 when verify read every entry).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable

from horon_bundle.core.hashing import CHUNK, Digest
from horon_bundle.core.inputs import read_at

HELD_LIMIT = 8 << 20


class ArchiveHasher:
    def __init__(self, fd: int, size: int, framing: Iterable[tuple[int, bytes]]) -> None:
        """`framing`: (offset, bytes) of everything that is not entry data, as validated."""
        self._fd = fd
        self._size = size
        self._framing = {offset: data for offset, data in framing if data}
        self._hasher = hashlib.sha256()
        self._cursor = 0
        self._held: dict[int, bytes] = {}
        self._held_bytes = 0
        self.reread = 0
        self._lock = threading.Lock()  # streams read ahead on a worker thread
        self._advance()  # the first local header

    def saw(self, offset: int, data: bytes) -> None:
        """A stream read `data` at `offset` of the archive."""
        with self._lock:
            self._saw(offset, data)

    def _saw(self, offset: int, data: bytes) -> None:
        end = offset + len(data)
        if end <= self._cursor or not data:
            return  # hashed already (a second stream over the same entry)
        if offset > self._cursor:
            if offset not in self._held and self._held_bytes + len(data) <= HELD_LIMIT:
                self._held[offset] = data
                self._held_bytes += len(data)
            return
        self._feed(memoryview(data)[self._cursor - offset:])
        self._advance()

    def _feed(self, data: bytes | memoryview) -> None:
        self._hasher.update(data)
        self._cursor += len(data)

    def _advance(self) -> None:
        """Feed whatever continues exactly where the hash stands (a held piece that would
        start elsewhere is never cut to fit: it stays unused, and the digest re-reads)."""
        while True:
            piece = self._framing.pop(self._cursor, None)
            if piece is None:
                piece = self._held.pop(self._cursor, None)
                if piece is None:
                    return
                self._held_bytes -= len(piece)
            self._feed(piece)

    def digest(self) -> Digest:
        """The archive's digest; bytes no stream supplied are read now, in order."""
        with self._lock:
            return self._digest()

    def _digest(self) -> Digest:
        self._advance()
        while self._cursor < self._size:
            chunk = read_at(self._fd, min(CHUNK, self._size - self._cursor), self._cursor)
            if not chunk:
                break
            self.reread += len(chunk)
            self._feed(chunk)
            self._advance()
        return Digest(self._hasher.hexdigest(), self._cursor)
