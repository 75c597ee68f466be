"""Streaming SHA-256: every file is read once in fixed-size chunks, so memory stays flat."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Digest:
    sha256: str
    size: int


def hash_stream(stream: BinaryIO, observe: Callable[[bytes], None] | None = None) -> Digest:
    """Hash `stream` to its end; `observe` sees every chunk (e.g. to keep a window of it)."""
    hasher = hashlib.sha256()
    size = 0
    while chunk := stream.read(CHUNK):
        hasher.update(chunk)
        size += len(chunk)
        if observe is not None:
            observe(chunk)
    return Digest(hasher.hexdigest(), size)


def hash_file(path: Path) -> Digest:
    with path.open("rb") as stream:
        return hash_stream(stream)


def hash_bytes(data: bytes) -> Digest:
    return Digest(hashlib.sha256(data).hexdigest(), len(data))


def copy_and_hash(source: Path, destination: Path, *, mode: int = 0o644) -> Digest:
    """Copy `source` to a new file `destination` and hash the bytes on the way (one read)."""
    hasher = hashlib.sha256()
    size = 0
    with source.open("rb") as reader, destination.open("xb") as writer:
        while chunk := reader.read(CHUNK):
            hasher.update(chunk)
            writer.write(chunk)
            size += len(chunk)
    destination.chmod(mode)
    return Digest(hasher.hexdigest(), size)
