"""Go's reference code reads logs with full tiles and tiles above level 0: the appends of
`tlog.log` written to a directory (as the store writes them, leaf hints aside), checked by
note.Open, tlog.TreeHash, tlog.ReadTileData for every tile and CheckRecord for every leaf."""

from __future__ import annotations

from pathlib import Path

import pytest

from horon_bundle.tlog.checkpoint import Checkpoint
from horon_bundle.tlog.log import CHECKPOINT, append
from horon_bundle.tlog.note import generate
from horon_bundle.tlog.store import directory_reader
from tests.tlog_support import GoChecker


def _write(root: Path, chunks: list[int]) -> tuple[str, list[bytes]]:
    signer = generate("example.com/big")
    read = directory_reader(root)
    checkpoint: Checkpoint | None = None
    entries: list[bytes] = []
    for chunk in chunks:
        new = [b"entry %d\n" % (len(entries) + n) for n in range(chunk)]
        grown = append(read, checkpoint, new, signer)
        for path, data in grown.writes.items():
            if not path.startswith("leaves/"):
                (root / path).parent.mkdir(parents=True, exist_ok=True)
                (root / path).write_bytes(data)
        checkpoint = grown.checkpoint
        (root / CHECKPOINT).write_bytes(checkpoint.text)
        entries += new
    return signer.verifier.text, entries


@pytest.mark.slow
@pytest.mark.parametrize("chunks", [[100, 300, 200], [256 * 256, 1]])
def test_go_reads_full_and_upper_level_tiles(tmp_path: Path, go_checker: GoChecker,
                                             chunks: list[int]) -> None:
    verifier, entries = _write(tmp_path, chunks)
    verdict = go_checker.check(tmp_path, verifier)
    assert verdict.ok, verdict.error
    assert verdict.size == len(entries) and verdict.leaves == entries
    assert (tmp_path / "tile" / "1" / "000").exists() == (len(entries) > 65535)
