"""A client's check: the store's index entry for an archive is a leaf of a checkpoint signed
by the log's key (and cosigned by enough of the named witnesses), proven from the tiles, all
offline against a local copy of the store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.strictjson import read_json
from horon_bundle.tlog.checkpoint import Checkpoint
from horon_bundle.tlog.log import find_leaf, included
from horon_bundle.tlog.monitor import read_checkpoint
from horon_bundle.tlog.note import Verifier, signed_by
from horon_bundle.tlog.store import LOG_DIRECTORY, directory_reader, read_entry, store_entries
from horon_bundle.tlog.tiles import TileReader


@dataclass(frozen=True, slots=True, kw_only=True)
class WitnessPolicy:
    witnesses: tuple[Verifier, ...]
    required: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Inclusion:
    checkpoint: Checkpoint
    reader: TileReader  # the tiles of `checkpoint` (for a consistency proof to a remembered one)
    index: int
    place: str
    archive_sha256: str
    cosigned_by: tuple[str, ...]


def check_witnesses(checkpoint: Checkpoint, policy: WitnessPolicy | None) -> tuple[str, ...]:
    if policy is None:
        return ()
    cosigned = tuple(w.name for w in policy.witnesses if signed_by(checkpoint.note, w) is True)
    if len(cosigned) < policy.required:
        raise Refused.one(codes.LOG_WITNESS, f"the checkpoint of {checkpoint.size} leaves is "
                                             f"cosigned by {len(cosigned)} of the named "
                                             f"witnesses ({', '.join(cosigned) or 'none'}), "
                                             f"{policy.required} required")
    return cosigned


def _entries_for(root: Path, sha256: str) -> list[tuple[str, bytes]]:
    """Every index entry of the store naming the archive (a store may hold the same archive
    under two names; one of them in the log is enough)."""
    found = []
    for place in store_entries(root):
        if place.startswith("yanks/"):
            continue
        data = read_entry(root, place)
        if data is None:
            continue
        try:
            document = read_json(data, source=place)
        except Refused:
            continue
        archive = document.get("archive") if isinstance(document, dict) else None
        if isinstance(archive, dict) and archive.get("sha256") == sha256:
            found.append((place, data))
    if not found:
        raise Refused.one(codes.LOG_NOT_INCLUDED, f"{root}: no index entry of the store "
                                                  f"names archive sha256 {sha256}")
    return found


def check_inclusion(root: Path, verifier: Verifier, sha256: str,
                    witnesses: WitnessPolicy | None = None) -> Inclusion:
    """Where the store's entry for the archive of `sha256` is in the log, proven."""
    checkpoint = read_checkpoint(root, verifier)
    cosigned = check_witnesses(checkpoint, witnesses)
    entries = _entries_for(root, sha256)
    reader = TileReader(directory_reader(root / LOG_DIRECTORY), checkpoint.size)
    for place, entry in entries:
        index = find_leaf(reader, entry)
        if index is not None and included(reader, checkpoint, entry, index):
            return Inclusion(checkpoint=checkpoint, reader=reader, index=index, place=place,
                             archive_sha256=sha256, cosigned_by=cosigned)
    raise Refused.one(codes.LOG_NOT_INCLUDED, f"{entries[0][0]}: the store's entry for sha256 "
                                              f"{sha256} is not in the log's checkpoint of "
                                              f"{checkpoint.size} leaves")
