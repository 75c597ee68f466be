"""One file into staging, hashed as it lands: one read of the source, the digest of the copy.

Where the source can hand the kernel its bytes as they lie (a file of a walked directory, a
stored archive entry: `kernel_span`), `copy_file_range` copies them, as `cp` does, and the
copy is hashed a chunk behind from the page cache on the worker thread (`core.background`),
so the digest is that of the bytes staged. Otherwise (a deflated entry, another system, a
kernel or file system that refuses) each chunk is read once, hashed and written. The caller
compares the digest with the one the verify of the source found: what was copied is proved
there, and nothing is fsynced here (staging syncs its file system once, `install.staging`).
"""

from __future__ import annotations

import errno
import hashlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from horon_bundle.core.background import worker
from horon_bundle.core.hashing import CHUNK, Digest
from horon_bundle.core.streams import ByteStream

if TYPE_CHECKING:
    from concurrent.futures import Future

COPY_CHUNK = 8 << 20
_FALLBACK = (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM)


def copy_into(stream: ByteStream, out: int) -> Digest:
    """Copy `stream` into the empty file open for reading and writing at `out`; the digest
    of the bytes written."""
    span_of: Callable[[], tuple[int, int, int] | None] | None = getattr(
        stream, "kernel_span", None)
    span = span_of() if span_of is not None else None
    if span is not None and hasattr(os, "copy_file_range"):
        digest = _kernel_copy(*span, out)
        if digest is not None:
            return digest
    return _user_copy(stream, out)


def _hash_range(out: int, hasher: hashlib._Hash, start: int, end: int,
                view: memoryview) -> None:
    while start < end:
        got = os.preadv(out, [view[:min(len(view), end - start)]], start)
        if not got:
            raise OSError(errno.EIO, "the staged copy is shorter than what was copied")
        hasher.update(view[:got])
        start += got


def _kernel_copy(source: int, offset: int, length: int, out: int) -> Digest | None:
    """None when the kernel refuses at the first chunk (the caller copies in user space)."""
    hasher = hashlib.sha256()
    view = memoryview(bytearray(COPY_CHUNK))
    behind: Future[None] | None = None
    copied = 0
    try:
        while copied < length:
            try:
                got = os.copy_file_range(source, out, min(COPY_CHUNK, length - copied),
                                         offset + copied, copied)
            except OSError as exc:
                if copied == 0 and exc.errno in _FALLBACK:
                    return None
                raise
            if not got:
                break  # the source is shorter than judged: the digest will differ
            if behind is not None:
                behind.result()
            behind = worker().submit(_hash_range, out, hasher, copied, copied + got, view)
            copied += got
    finally:
        if behind is not None:
            behind.result()
    os.lseek(out, copied, os.SEEK_SET)
    return Digest(hasher.hexdigest(), copied)


def _user_copy(stream: ByteStream, out: int) -> Digest:
    hasher = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        hasher.update(chunk)
        view = memoryview(chunk)
        while view:
            view = view[os.write(out, view):]
        size += len(chunk)
    return Digest(hasher.hexdigest(), size)
