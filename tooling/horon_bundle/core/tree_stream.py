"""A file of a walked tree, opened once and streamed through that descriptor (`core.tree`).

It refuses more bytes than the size the file was judged with: a file that grows while it is
read is refused at the first byte past that size, never read to its (unbounded) end.
"""

from __future__ import annotations

import os

from horon_bundle.core.errors import Code, Refused
from horon_bundle.core.hashing import CHUNK

_READV = hasattr(os, "readv")


class TreeStream:
    """A regular file opened once: streamed (or sought) through its descriptor, refusing
    more bytes than the size it was judged with (`changed`, the tree's code for that)."""

    def __init__(self, fd: int, size: int, label: str, changed: Code) -> None:
        self._fd = fd
        self._size = size
        self._label = label
        self._changed = changed
        self._position = 0

    def read(self, size: int = CHUNK) -> bytes:
        try:
            data = os.read(self._fd, size if 0 < size <= CHUNK else CHUNK)
        except OSError as exc:
            raise Refused.one(self._changed,
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
            raise Refused.one(self._changed,
                              f"{self._label}: {exc.strerror or exc} while it was read") from None
        self._advance(got)
        return got

    def _advance(self, count: int) -> None:
        self._position += count
        if self._position > self._size:
            raise Refused.one(self._changed, f"{self._label}: grew while it was read")

    def kernel_span(self) -> tuple[int, int, int] | None:
        """(descriptor, offset, length) the kernel may copy from directly, the whole file as
        judged (a copy whose digest is checked afterwards: what it copies is proved then);
        None once reading has begun."""
        return None if self._position else (self._fd, 0, self._size)

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int) -> None:
        self._position = os.lseek(self._fd, offset, os.SEEK_SET)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> TreeStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
