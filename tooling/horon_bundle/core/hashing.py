"""Streaming SHA-256: every file is read once in fixed-size chunks, so memory stays flat."""

from __future__ import annotations

import hashlib
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Protocol

from horon_bundle.core.background import worker
from horon_bundle.core.inputs import open_regular, opened_input

if TYPE_CHECKING:
    from concurrent.futures import Future

CHUNK = 1 << 20
READ_AHEAD_AFTER = 4  # chunks read before reading ahead (small files never start a thread)


@dataclass(frozen=True, slots=True)
class Digest:
    sha256: str
    size: int
    # the CRC-32 taken with the SHA-256 where a zip entry will be written from these bytes
    # (build: the header is written once, before the data); not part of a digest's identity
    crc32: int | None = field(default=None, compare=False)


def hash_stream(stream: BinaryIO,
                observe: Callable[[bytes | memoryview], None] | None = None) -> Digest:
    """Hash `stream` to its end; `observe` sees every chunk (e.g. to keep a window of it).

    A stream that can `readinto` is read into one reused buffer (no 1 MiB allocation, and
    its page faults, per chunk); `observe` then sees a view of that buffer, valid only until
    it returns: it must copy what it keeps."""
    readinto = getattr(stream, "readinto", None)
    if readinto is not None:
        return _hash_into(readinto, observe)
    hasher = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        hasher.update(chunk)
        size += len(chunk)
        if observe is not None:
            observe(chunk)
    return Digest(hasher.hexdigest(), size)


def _hash_into(readinto: Callable[[memoryview], int | None],
               observe: Callable[[bytes | memoryview], None] | None) -> Digest:
    """Past its first READ_AHEAD_AFTER chunks a stream is read a chunk ahead on the worker
    thread (`core.background`) into a second buffer while this one hashes the current one:
    reading and hashing overlap on two cores, the chunks and their order unchanged."""
    hasher = hashlib.sha256()
    size = 0
    views = [memoryview(bytearray(CHUNK))]
    view = views[0]
    got = readinto(view)
    ahead: Future[int | None] | None = None
    try:
        while got:
            chunk = view[:got]
            if size >= READ_AHEAD_AFTER * CHUNK:
                if len(views) == 1:
                    views.append(memoryview(bytearray(CHUNK)))
                following = views[1] if view is views[0] else views[0]
                ahead = worker().submit(readinto, following)
            hasher.update(chunk)
            size += got
            if observe is not None:
                observe(chunk)
            if ahead is not None:
                taken, ahead = ahead, None
                got = taken.result()
                view = following
            else:
                got = readinto(view)
    finally:
        if ahead is not None:  # the caller closes the stream: the worker must be done with it
            ahead.exception()
    return Digest(hasher.hexdigest(), size)


def hash_file(path: Path, *, what: str = "file", follow_symlinks: bool = True) -> Digest:
    """Hash the regular file at `path` from one descriptor (opened without blocking, judged
    with fstat: a FIFO or device is refused, never read; see `core.inputs`)."""
    with opened_input(path, what=what, follow_symlinks=follow_symlinks) as (fd, _info), \
            os.fdopen(os.dup(fd), "rb") as stream:
        return hash_stream(stream)


def hash_bytes(data: bytes, *, crc: bool = False) -> Digest:
    return Digest(hashlib.sha256(data).hexdigest(), len(data),
                  zlib.crc32(data) if crc else None)


def copy_and_hash(source: Path, destination: Path, *, mode: int = 0o644,
                  crc: bool = False) -> Digest:
    """Copy `source` to a new file `destination` and hash the bytes on the way (one read);
    `crc`: take their CRC-32 too (`Digest.crc32`)."""
    fd, _info = open_regular(source, what="file")
    with os.fdopen(fd, "rb") as reader:
        return copy_stream_and_hash(reader, destination, mode=mode, crc=crc)


class _ReadsInto(Protocol):
    def readinto(self, buffer: memoryview, /) -> int | None: ...


def copy_stream_and_hash(reader: _ReadsInto, destination: Path, *,
                         mode: int = 0o644, crc: bool = False) -> Digest:
    """Copy what `reader` gives to a new file `destination`, hashing it on the way."""
    hasher = hashlib.sha256()
    size = 0
    check = 0
    view = memoryview(bytearray(CHUNK))  # one buffer for the whole copy
    with destination.open("xb") as writer:
        while got := reader.readinto(view):
            chunk = view[:got]
            hasher.update(chunk)
            if crc:
                check = zlib.crc32(chunk, check)
            writer.write(chunk)
            size += got
    destination.chmod(mode)
    return Digest(hasher.hexdigest(), size, check if crc else None)
