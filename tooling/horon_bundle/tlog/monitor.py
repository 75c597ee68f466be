"""`log verify`: a monitor's whole check of a store's log, from the files alone.

The checkpoint is opened with the log's key; the tree is rebuilt from the entry bundles and
every hash tile compared with the rebuilt one; the root must be the checkpoint's; an earlier
checkpoint (`since`) must be extended by the new one (a consistency proof from the tiles);
every leaf must be byte for byte the store entry it records, and every entry of the store
must be a leaf. Findings are ordered by leaf: the first names the first leaf that differs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.tlog.checkpoint import Checkpoint, open_checkpoint
from horon_bundle.tlog.log import CHECKPOINT, extends
from horon_bundle.tlog.merkle import leaf_hash, tree_hash
from horon_bundle.tlog.note import Verifier
from horon_bundle.tlog.store import (
    LOG_DIRECTORY,
    directory_reader,
    entry_place,
    read_entry,
    store_entries,
)
from horon_bundle.tlog.tiles import TILE_WIDTH, TileReader, append_tiles, tile_path

MAX_FINDINGS = 20  # a rewritten store can differ everywhere: name the first ones


@dataclass(frozen=True, slots=True, kw_only=True)
class MonitorResult:
    checkpoint: Checkpoint
    since: Checkpoint | None
    entries: int  # store entries checked against the leaves


def read_checkpoint(root: Path, verifier: Verifier) -> Checkpoint:
    path = root / LOG_DIRECTORY / CHECKPOINT
    data = directory_reader(root / LOG_DIRECTORY)(CHECKPOINT)
    if data is None:
        raise Refused.one(codes.LOG_CHECKPOINT, f"{path}: no checkpoint (the store has no log, "
                                                "or it was removed)")
    return open_checkpoint(data, verifier, str(path))


def check_since(reader: TileReader, since: Checkpoint, checkpoint: Checkpoint) -> None:
    if since.size > checkpoint.size:
        raise Refused.one(codes.LOG_ROLLBACK, f"the log's checkpoint has {checkpoint.size} "
                                              f"leaves, fewer than the {since.size} seen before")
    if not extends(reader, since, checkpoint):
        raise Refused.one(codes.LOG_INCONSISTENT,
                          f"the checkpoint of {checkpoint.size} leaves does not extend the one "
                          f"of {since.size} seen before (the log was forked or rewritten)")


def monitor(root: Path, verifier: Verifier, since: Checkpoint | None) -> MonitorResult:
    checkpoint = read_checkpoint(root, verifier)
    read = directory_reader(root / LOG_DIRECTORY)
    reader = TileReader(read, checkpoint.size)
    if since is not None:
        check_since(reader, since, checkpoint)
    leaves = [entry for number in range(-(-checkpoint.size // TILE_WIDTH))
              for entry in reader.entries(number)]
    findings = _tree_findings(reader, leaves, checkpoint)
    findings += _leaf_findings(root, leaves)
    if findings:
        raise Refused(findings[:MAX_FINDINGS])
    return MonitorResult(checkpoint=checkpoint, since=since, entries=len(leaves))


def _tree_findings(reader: TileReader, leaves: list[bytes],
                   checkpoint: Checkpoint) -> list[Finding]:
    """Each stored hash tile against the one rebuilt from the entries, then the root."""
    rebuilt = TileReader(lambda _path: None, 0)
    tiles = append_tiles(rebuilt, leaves)
    stored_leaves = [h for n in range(-(-checkpoint.size // TILE_WIDTH)) for h in reader.tile(0, n)]
    for index, (entry, stored) in enumerate(zip(leaves, stored_leaves, strict=True)):
        if leaf_hash(entry) != stored:
            return [Finding(codes.LOG_ROOT, f"leaf {index}: its entry bundle "
                                            f"({tile_path('entries', index // TILE_WIDTH)}…) no "
                                            "longer hashes to the leaf hash of the log's tiles")]
    for path, data in sorted(tiles.items()):
        if path.startswith("tile/entries/"):
            continue
        if reader.read(path) != data:
            return [Finding(codes.LOG_ROOT, f"{path}: differs from the tile rebuilt from the "
                                            "entries")]
    if tree_hash(checkpoint.size, TileReader(tiles.get, checkpoint.size).node) \
            != checkpoint.root:
        return [Finding(codes.LOG_ROOT, f"the {checkpoint.size} entries do not hash to the "
                                        "checkpoint's root")]
    return []


def _leaf_findings(root: Path, leaves: list[bytes]) -> list[Finding]:
    findings: list[Finding] = []
    logged: set[str] = set()
    for index, leaf in enumerate(leaves):
        place = entry_place(leaf)
        if place is None:
            findings.append(Finding(codes.LOG_LEAF, f"leaf {index}: not an entry of the store"))
            continue
        logged.add(place)
        held = read_entry(root, place)
        if held != leaf:
            state = "was removed" if held is None else "was rewritten"
            findings.append(Finding(codes.LOG_LEAF, f"leaf {index}: {place} {state} after it "
                                                    "was logged"))
    for place in store_entries(root):
        if place not in logged:
            findings.append(Finding(codes.LOG_LEAF, f"{place}: an entry of the store that is "
                                                    "not in the log"))
    return findings
