"""Hashing a stream reads ahead on the worker thread past its first chunks: the digest, the
chunks an observer sees and their order are those of one thread, and a refusal raised by a
read ahead surfaces at the read that raised it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import CHUNK, READ_AHEAD_AFTER, hash_file, hash_stream
from horon_bundle.core.tree_stream import TreeStream


@pytest.mark.parametrize("size", [0, 5, CHUNK, READ_AHEAD_AFTER * CHUNK,
                                  (READ_AHEAD_AFTER + 3) * CHUNK + 11])
def test_digest_and_observed_chunks_match_a_single_thread(tmp_path: Path, size: int) -> None:
    data = os.urandom(size)
    path = tmp_path / "file"
    path.write_bytes(data)
    seen: list[bytes] = []
    with path.open("rb") as stream:
        digest = hash_stream(stream, lambda chunk: seen.append(bytes(chunk)))
    assert digest.sha256 == hashlib.sha256(data).hexdigest() and digest.size == size
    assert b"".join(seen) == data
    assert all(len(chunk) == CHUNK for chunk in seen[:-1])
    assert hash_file(path) == digest


def test_a_file_that_grows_while_read_ahead_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_bytes(os.urandom((READ_AHEAD_AFTER + 4) * CHUNK))
    fd = os.open(path, os.O_RDONLY)
    stream = TreeStream(fd, (READ_AHEAD_AFTER + 2) * CHUNK, "file", codes.INPUT_UNREADABLE)
    try:
        with pytest.raises(Refused, match="grew while it was read"):
            hash_stream(stream)  # type: ignore[arg-type]
    finally:
        stream.close()
