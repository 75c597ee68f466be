"""The transparency log's rows: file reads and writes (counted, not timed) of one append to
a log of 1,000 → 1,000,000 leaves, and of one inclusion check; the log is kept in memory
behind the same `FileReader` the store's directory reader implements."""

from __future__ import annotations

from horon_bundle.tlog.checkpoint import Checkpoint
from horon_bundle.tlog.log import append, find_leaf, included
from horon_bundle.tlog.note import generate
from horon_bundle.tlog.tiles import TileReader

SIZES = (1_000, 10_000, 100_000, 1_000_000)
MAX_APPEND_IO = 12  # reads + writes of one append at 1M leaves: a few per tile level
MAX_CHECK_READS = 8  # an inclusion check: hint, entry bundle, a few tiles


class CountingFiles:
    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.reads = 0

    def read(self, path: str) -> bytes | None:
        self.reads += 1
        return self.files.get(path)


def _entry(number: int) -> bytes:
    return b'{"format": "horon.store-entry.v1", "n": %d}\n' % number


def measure() -> list[tuple[str, str, str, bool]]:
    signer = generate("bench.example/log")
    files = CountingFiles()
    checkpoint: Checkpoint | None = None
    appends: list[tuple[int, int, int]] = []  # size, reads, writes
    checks: list[tuple[int, int]] = []
    size = 0
    for target in SIZES:
        grown = append(files.read, checkpoint, [_entry(n) for n in range(size, target - 1)],
                       signer)
        files.files.update(grown.writes)
        checkpoint, size = grown.checkpoint, target - 1
        files.reads = 0
        one = append(files.read, checkpoint, [_entry(size)], signer)
        appends.append((target, files.reads, len(one.writes) + 1))  # + the checkpoint
        files.files.update(one.writes)
        checkpoint, size = one.checkpoint, target
        files.reads = 0
        reader = TileReader(files.read, size)
        probe = _entry(size // 3)
        index = find_leaf(reader, probe)
        assert index is not None and included(reader, checkpoint, probe, index)
        checks.append((size, files.reads))
    worst_append = max(r + w for _, r, w in appends)
    worst_check = max(r for _, r in checks)
    return [
        ("log: one append to 1k → 10k → 100k → 1M leaves, file reads + writes",
         " → ".join(f"{r} + {w}" for _, r, w in appends),
         f"O(log n): ≤ {MAX_APPEND_IO} at 1M", worst_append <= MAX_APPEND_IO),
        ("log: one inclusion check at 1k → 10k → 100k → 1M leaves, file reads",
         " → ".join(str(r) for _, r in checks) + " (hint, entry bundle, tiles)",
         f"a few tile reads: ≤ {MAX_CHECK_READS}", worst_check <= MAX_CHECK_READS),
    ]


if __name__ == "__main__":
    for row in measure():
        print(row)
