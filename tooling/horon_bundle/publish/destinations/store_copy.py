"""Copying a file into the store, hashing the bytes stored: one read of the source, flat memory.

On Linux the kernel copies (`copy_file_range`: no pass through user space, as `cp` does)
while a second thread hashes the *copy* a chunk behind it, straight from the page cache,
so the digest is that of the bytes the store holds and the hash runs beside the copy, not
after it (docs/benchmarks.md has the measurement). Elsewhere, or where the kernel refuses
(another file system on an old kernel), each chunk is read once, hashed and written.
The caller fsyncs once, at the end.

`copy_judged` is the one-read form for an archive the preflight has just judged and hashed:
the kernel copies it, and no byte is read again, when the source keeps the identity the
preflight saw (`core.file_identity`) before the copy and after it — any write in between
moves its ctime. Otherwise (a system without `copy_file_range`, a refusal, a file changed)
it says so, and the caller takes `copy_and_hash`, whose digest is that of the bytes stored.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import queue
import threading
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.file_identity import FileIdentity, identity_of
from horon_bundle.core.hashing import Digest

COPY_CHUNK = 8 << 20
_FALLBACK = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM)


class _Unsupported(Exception):
    pass


def copy_and_hash(source: Path, handle: int, temp: Path) -> Digest:
    """Copy `source` into the open, empty file `handle` (named `temp`); the digest of the
    bytes written. Read errors are `input.unreadable`; write errors raise `OSError`."""
    try:
        reader = os.open(source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{source}: {exc.strerror}") from None
    try:
        if hasattr(os, "copy_file_range"):
            with contextlib.suppress(_Unsupported):
                return _kernel_copy(reader, handle, temp, source)
            os.ftruncate(handle, 0)
            os.lseek(reader, 0, os.SEEK_SET)
            os.lseek(handle, 0, os.SEEK_SET)
        return _user_copy(reader, handle, source)
    finally:
        os.close(reader)


def copy_judged(source: Path, handle: int, identity: FileIdentity) -> bool:
    """Copy `source` into the open, empty file `handle` by the kernel alone; True when the
    source had `identity` before and after and every byte was copied (the copy then holds
    the bytes judged under that identity). False leaves `handle` empty, at offset 0."""
    if not hasattr(os, "copy_file_range"):
        return False
    try:
        reader = os.open(source, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        if identity_of(os.fstat(reader)) != identity:
            return False
        size, copied = identity[2], 0
        while copied < size:
            got = os.copy_file_range(reader, handle, min(COPY_CHUNK, size - copied), copied,
                                     copied)
            if not got:
                break
            copied += got
        if copied == size and identity_of(os.fstat(reader)) == identity:
            os.lseek(handle, size, os.SEEK_SET)
            return True
    except OSError as exc:
        if exc.errno not in _FALLBACK and exc.errno not in (errno.EIO, errno.EISDIR):
            raise
    finally:
        os.close(reader)
    os.ftruncate(handle, 0)
    os.lseek(handle, 0, os.SEEK_SET)
    return False


def _kernel_copy(reader: int, handle: int, temp: Path, source: Path) -> Digest:
    pending: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    hasher = _TrailingHasher(temp, pending)
    hasher.start()
    offset = 0
    try:
        while True:
            try:
                copied = os.copy_file_range(reader, handle, COPY_CHUNK, offset, offset)
            except OSError as exc:
                if offset == 0 and exc.errno in _FALLBACK:
                    raise _Unsupported from None
                if exc.errno in (errno.EIO, errno.EISDIR):
                    raise Refused.one(codes.INPUT_UNREADABLE,
                                      f"{source}: {exc.strerror}") from None
                raise
            if not copied:
                break
            offset += copied
            pending.put(offset)
    finally:
        pending.put(None)
        hasher.join()
    os.lseek(handle, offset, os.SEEK_SET)
    return hasher.result(offset)


class _TrailingHasher(threading.Thread):
    """Hashes `temp` up to each offset it is given (hashlib and reads release the GIL)."""

    def __init__(self, temp: Path, pending: queue.SimpleQueue[int | None]) -> None:
        super().__init__(name="store-hash", daemon=True)
        self.temp = temp
        self.pending = pending
        self.hasher = hashlib.sha256()
        self.hashed = 0
        self.error: OSError | None = None

    def run(self) -> None:
        buffer = bytearray(COPY_CHUNK)
        view = memoryview(buffer)
        try:
            with self.temp.open("rb", buffering=0) as copy:
                while (upto := self.pending.get()) is not None:
                    while self.hashed < upto:
                        got = copy.readinto(view[:min(COPY_CHUNK, upto - self.hashed)])
                        if not got:
                            break
                        self.hasher.update(view[:got])
                        self.hashed += got
        except OSError as exc:
            self.error = exc
            while self.pending.get() is not None:  # let the copier finish
                pass

    def result(self, size: int) -> Digest:
        if self.error is not None:
            raise self.error
        if self.hashed != size:
            raise OSError(errno.EIO, f"hashed {self.hashed} of {size} bytes copied")
        return Digest(self.hasher.hexdigest(), size)


def _user_copy(reader: int, handle: int, source: Path) -> Digest:
    hasher = hashlib.sha256()
    buffer = bytearray(COPY_CHUNK)
    view = memoryview(buffer)
    size = 0
    stream = open(reader, "rb", buffering=0, closefd=False)  # noqa: SIM115 - fd owned above
    while True:
        try:
            got = stream.readinto(buffer)
        except OSError as exc:
            raise Refused.one(codes.INPUT_UNREADABLE, f"{source}: {exc.strerror}") from None
        if not got:
            break
        hasher.update(view[:got])
        rest = view[:got]
        while rest:
            rest = rest[os.write(handle, rest):]
        size += got
    return Digest(hasher.hexdigest(), size)


def write_all(handle: int, data: bytes) -> None:
    """All of `data` to `handle` (os.write may take less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(handle, view):]


def write_error(path: Path, exc: OSError) -> Refused:
    """A store write's failure as a refusal: not writable (permissions, a read-only file
    system) or unreachable (anything else, a full disk among them)."""
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return Refused.one(codes.PUBLISH_NOT_WRITABLE, f"{path}: {exc.strerror}")
    return Refused.one(codes.PUBLISH_UNREACHABLE, f"{path}: {exc.strerror or exc}")
