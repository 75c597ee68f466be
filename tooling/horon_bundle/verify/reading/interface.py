"""A bundle as a set of regular files, whether it is a directory or a validated archive.

`verify` works on this one interface, so a directory and its archive get the same checks and
an archive is verified by streaming its entries, with nothing extracted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.core.streams import ByteStream


@dataclass(frozen=True, slots=True)
class BundleFile:
    path: str
    size: int
    executable: bool | None  # None: the file system keeps no POSIX mode bits (Windows)


class BundleSource(ABC):
    """Regular files of a bundle (relative POSIX path -> file) and a way to stream each."""

    label: str
    files: dict[str, BundleFile]
    layout_findings: Findings

    @abstractmethod
    def open(self, path: str, *, resumable: bool = False) -> ByteStream:
        """Stream one of `files`; Refused (never OSError) when it cannot be read as judged.

        `resumable`: this stream reads the file from its start, and later streams of it may
        seek (a directory's file always can; an archive entry keeps resume points)."""

    def known_digest(self, path: str) -> Digest | None:
        """The digest of `path` already computed by whoever wrote it (`verify.reading.staged`:
        build's own staging), or None: the file is hashed by streaming it."""
        return None

    def read_small(self, path: str, limit: int) -> bytes:
        """Read a metadata file whole, refusing it past `limit` bytes before reading it."""
        size = self.files[path].size
        if size > limit:
            raise Refused.one(codes.JSON_TOO_LARGE, f"{path}: {size} bytes, limit {limit}")
        stream = self.open(path)
        try:
            chunks = []
            total = 0
            while chunk := stream.read(1 << 16):
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise Refused.one(codes.JSON_TOO_LARGE, f"{path}: over {limit} bytes")
            return b"".join(chunks)
        finally:
            stream.close()

    def close(self) -> None:  # noqa: B027 - sources without resources need nothing
        pass

    def __enter__(self) -> BundleSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
