"""A log as files under one directory: appending entries (tiles, entry bundles, leaf hints,
then the checkpoint), finding a leaf, proving inclusion and consistency from its tiles.

    checkpoint                  the signed tree head (written last, replaced whole)
    tile/…                      C2SP tlog-tiles hash tiles and entry bundles
    leaves/<xx>/<sha256>        a hint: the index of the leaf whose bytes hash to <sha256>
                                (checked against the entry bundle before it is believed)

The caller writes `Appended.writes` (any order, each replaced whole) and then the checkpoint:
a run killed before the checkpoint leaves the old one valid, since every file it names is
unchanged (tiles of a size are only ever rewritten with the same bytes).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.tlog.checkpoint import Checkpoint, signed_checkpoint
from horon_bundle.tlog.merkle import (
    consistency_proof,
    consistent,
    inclusion_proof,
    leaf_hash,
    root_from_inclusion,
    tree_hash,
)
from horon_bundle.tlog.note import Signer
from horon_bundle.tlog.tiles import (
    MAX_ENTRY_BYTES,
    TILE_WIDTH,
    FileReader,
    TileReader,
    append_tiles,
    overlay,
)

CHECKPOINT = "checkpoint"
MAX_HINT_BYTES = 32


def hint_path(entry: bytes) -> str:
    digest = hashlib.sha256(entry).hexdigest()
    return f"leaves/{digest[:2]}/{digest}"


@dataclass(frozen=True, slots=True)
class Appended:
    writes: dict[str, bytes]  # tiles, entry bundles and leaf hints
    checkpoint: Checkpoint
    first_index: int
    reads: int


def append(read: FileReader, current: Checkpoint | None, entries: list[bytes],
           signer: Signer) -> Appended:
    """The files that append `entries` to the log whose checkpoint is `current`, and the new
    checkpoint. The current tree is first recomputed from its tiles (O(log n) reads) and must
    give the current root: a log is never extended from damaged tiles."""
    size = current.size if current is not None else 0
    for entry in entries:
        if len(entry) > MAX_ENTRY_BYTES:
            raise Refused.one(codes.LOG_TILE, f"an entry of {len(entry)} bytes cannot be "
                                              f"logged (at most {MAX_ENTRY_BYTES})")
    reader = TileReader(read, size)
    if current is not None and tree_hash(size, reader.node) != current.root:
        raise Refused.one(codes.LOG_ROOT, f"the log's tiles do not give the root of its "
                                          f"checkpoint ({size} leaves); nothing was appended")
    writes = append_tiles(reader, entries)
    new_size = size + len(entries)
    after = TileReader(overlay(read, writes), new_size, cache=dict(reader.cache))
    root = tree_hash(new_size, after.node)
    for number, entry in enumerate(entries, size):
        writes[hint_path(entry)] = f"{number}\n".encode()
    return Appended(writes=writes, checkpoint=signed_checkpoint(signer.name, new_size, root,
                                                                signer),
                    first_index=size, reads=reader.reads + after.reads)


def find_leaf(reader: TileReader, entry: bytes) -> int | None:
    """The index of `entry` in the tree `reader` reads, by its hint, checked against the
    entry bundle; None when it is not there."""
    data = reader.read(hint_path(entry))
    if data is None or len(data) > MAX_HINT_BYTES:
        return None
    text = data.decode("ascii", "replace").strip()
    if not text.isdigit() or int(text) >= reader.size:
        return None
    index = int(text)
    held = reader.entries(index // TILE_WIDTH)
    return index if held[index % TILE_WIDTH] == entry else None


def included(reader: TileReader, checkpoint: Checkpoint, entry: bytes, index: int) -> bool:
    """Whether `entry` at `index` is in the tree of `checkpoint`: its inclusion proof, read
    from the tiles, leads to the checkpoint's root."""
    proof = inclusion_proof(index, checkpoint.size, reader.node)
    return root_from_inclusion(leaf_hash(entry), index, checkpoint.size, proof) == checkpoint.root


def extends(reader: TileReader, old: Checkpoint, new: Checkpoint) -> bool:
    """Whether `new` (the tree `reader` reads) extends `old`: a consistency proof from the
    tiles."""
    if old.size > new.size:
        return False
    proof = consistency_proof(old.size, new.size, reader.node)
    return consistent(old.size, new.size, old.root, new.root, proof)
