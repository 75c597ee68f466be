"""A request body read from a file: never held whole, sent by the kernel where it can be.

`oci_client` uploads an archive as one body; `oci_ahead` sends it into a session while it
is verified. Both stream it from its file through this class.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

UPLOAD_CHUNK = 1 << 20  # bytes read from the file at a time: flat memory (docs/benchmarks.md)
KERNEL_PIECE = 1 << 20  # bytes sendfile(2) sends between two deadline checks


class FileBody:
    """A request body read from a file in `UPLOAD_CHUNK` pieces, never whole.

    It has a length, so the request carries `Content-Length` (no chunked transfer encoding);
    it can be iterated again, so a request answered by 401 is sent again from the start.
    Exactly the checked size is sent: the registry recomputes the digest of those bytes and
    refuses a difference (`DIGEST_INVALID`), so a file changed since it was checked is
    stored under no name; a file that became shorter is refused mid-request (the registry
    sees a truncated body and stores nothing) instead of leaving it waiting for bytes."""

    def __init__(self, path: Path, size: int, where: str) -> None:
        self.path = path
        self.size = size
        self.where = where

    def __len__(self) -> int:
        return self.size

    def _check(self) -> None:
        """Called before each piece is sent (a subclass may stop the upload)."""

    def send_by_kernel(self, sock: socket.socket, before_each: Callable[[], None]) -> None:
        """Send the whole body on a plain connection with sendfile(2), from the page cache
        (no copy through this process: what `curl` costs), `KERNEL_PIECE` at a time, each
        piece after `before_each` (which arms the deadline). The same refusals as iterating:
        a file that became shorter is refused mid-request."""
        try:
            stream = self.path.open("rb", buffering=0)
        except OSError as exc:
            raise Refused.one(codes.INPUT_UNREADABLE, f"{self.path}: {exc.strerror}") from None
        with stream:
            sent = 0
            while sent < self.size:
                before_each()
                self._check()
                try:
                    got = sock.sendfile(stream, sent, min(KERNEL_PIECE, self.size - sent))
                except OSError as exc:
                    if isinstance(exc, (TimeoutError, ConnectionError)):
                        raise
                    raise Refused.one(codes.INPUT_UNREADABLE,
                                      f"{self.path}: {exc.strerror}") from None
                if not got:
                    raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.where}: the file became "
                                      "shorter since it was checked; nothing was published")
                sent += got

    def __iter__(self) -> Iterator[bytes]:
        remaining = self.size
        try:
            stream = self.path.open("rb", buffering=0)
        except OSError as exc:
            raise Refused.one(codes.INPUT_UNREADABLE, f"{self.path}: {exc.strerror}") from None
        with stream:
            while remaining:
                try:
                    chunk = stream.read(min(UPLOAD_CHUNK, remaining))
                except OSError as exc:
                    raise Refused.one(codes.INPUT_UNREADABLE,
                                      f"{self.path}: {exc.strerror}") from None
                if not chunk:
                    raise Refused.one(codes.PUBLISH_INTEGRITY, f"{self.where}: the file became "
                                      "shorter since it was checked; nothing was published")
                remaining -= len(chunk)
                self._check()
                yield chunk
