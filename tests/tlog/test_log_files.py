"""The log as files: a leaf hint is believed only when the entry bundle agrees, a damaged
log is never extended, an entry too large for a bundle is refused."""

from __future__ import annotations

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.tlog.checkpoint import Checkpoint
from horon_bundle.tlog.log import append, find_leaf, hint_path
from horon_bundle.tlog.note import DASH, generate, parse_note
from horon_bundle.tlog.tiles import MAX_ENTRY_BYTES, TileReader, tile_path

SIGNER = generate("example.com/log")


def _log(entries: list[bytes]) -> tuple[dict[str, bytes], Checkpoint]:
    files: dict[str, bytes] = {}
    grown = append(files.get, None, entries, SIGNER)
    files.update(grown.writes)
    return files, grown.checkpoint


def test_a_hint_is_believed_only_when_the_bundle_holds_the_entry_there() -> None:
    files, _ = _log([b"a", b"b"])
    reader = TileReader(files.get, 2)
    assert find_leaf(reader, b"b") == 1
    files[hint_path(b"x")] = b"1\n"  # a killed run's hint, its leaf never checkpointed
    files[hint_path(b"y")] = b"7\n"  # beyond the tree
    files[hint_path(b"z")] = b"not a number"
    for entry in (b"x", b"y", b"z", b"never logged"):
        assert find_leaf(TileReader(files.get, 2), entry) is None


def test_a_log_whose_tiles_disagree_with_its_checkpoint_is_never_extended() -> None:
    files, checkpoint = _log([b"a", b"b", b"c"])
    path = tile_path(0, 0, 3)
    files[path] = bytes(32) + files[path][32:]
    with pytest.raises(Refused) as caught:
        append(files.get, checkpoint, [b"d"], SIGNER)
    assert caught.value.codes() == ["log.root"]


def test_an_entry_longer_than_a_bundle_allows_is_refused() -> None:
    empty: dict[str, bytes] = {}
    with pytest.raises(Refused) as caught:
        append(empty.get, None, [b"x" * (MAX_ENTRY_BYTES + 1)], SIGNER)
    assert caught.value.codes() == ["log.tile"]
    _log([b"x" * MAX_ENTRY_BYTES])


def test_a_missing_or_short_tile_is_refused() -> None:
    files, _ = _log([b"a", b"b", b"c"])
    short = dict(files)
    short[tile_path(0, 0, 3)] = short[tile_path(0, 0, 3)][:-1]
    for broken in (short, {k: v for k, v in files.items() if not k.startswith("tile/0/")}):
        with pytest.raises(Refused) as caught:
            TileReader(broken.get, 3).node(0, 2)
        assert caught.value.codes() == ["log.tile"]


def test_a_note_with_too_many_signature_lines_is_refused() -> None:
    line = f"{DASH}log AAAAAAA=\n"
    assert parse_note(b"body\n\n" + (line * 100).encode(), "n")
    with pytest.raises(Refused, match="101 signature lines"):
        parse_note(b"body\n\n" + (line * 101).encode(), "n")
