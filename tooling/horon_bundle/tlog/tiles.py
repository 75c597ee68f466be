"""C2SP tlog-tiles: tile paths, reading hashes and entries from tiles, and the tiles an append
writes.

    tile/<L>/<N>[.p/<W>]        hashes: level L holds tree level 8L, 256 per full tile
    tile/entries/<N>[.p/<W>]    entry bundles: big-endian uint16 length + entry, 256 per bundle

`<N>` is written in 3-digit groups, all but the last prefixed with `x` (1234067 →
`x001/x234/067`); `.p/<W>` names a partial tile of W (1 … 255) hashes or entries.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.tlog.merkle import HASH_SIZE, leaf_hash, node_hash

TILE_HEIGHT = 8
TILE_WIDTH = 1 << TILE_HEIGHT
MAX_ENTRY_BYTES = 0xFFFF  # an entry bundle's uint16 length prefix
ENTRIES = "entries"

# reads a path under the log directory: its bytes, or None when absent
FileReader = Callable[[str], bytes | None]


def index_path(number: int) -> str:
    text = f"{number % 1000:03d}"
    while number >= 1000:
        number //= 1000
        text = f"x{number % 1000:03d}/{text}"
    return text


def tile_path(level: int | str, number: int, width: int = TILE_WIDTH) -> str:
    suffix = "" if width == TILE_WIDTH else f".p/{width}"
    return f"tile/{level}/{index_path(number)}{suffix}"


def tile_width(level: int, number: int, size: int) -> int:
    """The width of tile `number` at `level` in a tree of `size` leaves (0: not there)."""
    count = size >> (TILE_HEIGHT * level)  # complete nodes at tree level 8 * level
    return max(0, min(TILE_WIDTH, count - number * TILE_WIDTH))


def subtree(hashes: list[bytes]) -> bytes:
    """The hash over a power-of-two run of sibling hashes."""
    while len(hashes) > 1:
        hashes = [node_hash(hashes[i], hashes[i + 1]) for i in range(0, len(hashes), 2)]
    return hashes[0]


def split_hashes(data: bytes, path: str, width: int) -> list[bytes]:
    if len(data) != width * HASH_SIZE:
        raise Refused.one(codes.LOG_TILE, f"{path}: {len(data)} bytes, a tile of {width} "
                                          f"hashes has {width * HASH_SIZE}")
    return [data[i:i + HASH_SIZE] for i in range(0, len(data), HASH_SIZE)]


def split_entries(data: bytes, path: str, width: int) -> list[bytes]:
    entries: list[bytes] = []
    offset = 0
    while offset < len(data):
        if offset + 2 > len(data):
            raise Refused.one(codes.LOG_TILE, f"{path}: a length prefix is cut off")
        length = int.from_bytes(data[offset:offset + 2], "big")
        offset += 2
        if offset + length > len(data):
            raise Refused.one(codes.LOG_TILE, f"{path}: entry {len(entries)} is cut off")
        entries.append(data[offset:offset + length])
        offset += length
    if len(entries) != width:
        raise Refused.one(codes.LOG_TILE, f"{path}: {len(entries)} entries, the bundle has "
                                          f"{width}")
    return entries


def join_entries(entries: list[bytes]) -> bytes:
    return b"".join(len(e).to_bytes(2, "big") + e for e in entries)


@dataclass(slots=True)
class TileReader:
    """Reads the tiles of one tree size (each at most once) and answers node hashes."""

    read: FileReader
    size: int
    cache: dict[str, list[bytes]] = field(default_factory=dict)
    reads: int = 0

    def _load(self, path: str) -> bytes:
        self.reads += 1
        data = self.read(path)
        if data is None:
            raise Refused.one(codes.LOG_TILE, f"{path}: missing (the checkpoint of "
                                              f"{self.size} leaves needs it)")
        return data

    def tile(self, level: int, number: int) -> list[bytes]:
        width = tile_width(level, number, self.size)
        path = tile_path(level, number, width)
        if path not in self.cache:
            self.cache[path] = split_hashes(self._load(path), path, width) if width else []
        return self.cache[path]

    def entries(self, number: int) -> list[bytes]:
        width = tile_width(0, number, self.size)
        path = tile_path(ENTRIES, number, width)
        if path not in self.cache:
            self.cache[path] = split_entries(self._load(path), path, width) if width else []
        return self.cache[path]

    def node(self, level: int, index: int) -> bytes:
        tile_level, height = divmod(level, TILE_HEIGHT)
        start = index << height
        hashes = self.tile(tile_level, start >> TILE_HEIGHT)
        offset = start % TILE_WIDTH
        run = hashes[offset:offset + (1 << height)]
        if len(run) != 1 << height:
            raise Refused.one(codes.LOG_TILE, f"node ({level}, {index}) is not in a tree of "
                                              f"{self.size} leaves")
        return subtree(run)


def append_tiles(reader: TileReader, entries: list[bytes]) -> dict[str, bytes]:
    """The tiles and entry bundles that change when `entries` are appended to the tree
    `reader` reads: every tile that gains hashes, under its new (full or partial) name."""
    old = reader.size
    writes: dict[str, bytes] = {}
    first = old // TILE_WIDTH
    bundle = reader.entries(first) if old % TILE_WIDTH else []
    _spread(ENTRIES, first, bundle, entries, writes=writes, encode=join_entries)
    new_hashes = [leaf_hash(e) for e in entries]
    level, count = 0, old
    while new_hashes:
        first = count // TILE_WIDTH
        held = reader.tile(level, first) if count % TILE_WIDTH else []
        completed = _spread(level, first, held, new_hashes, writes=writes, encode=b"".join)
        new_hashes = [subtree(tile) for tile in completed]
        level, count = level + 1, count // TILE_WIDTH
    return writes


def _spread(level: int | str, first: int, held: list[bytes], added: list[bytes], *,
            writes: dict[str, bytes], encode: Callable[[list[bytes]], bytes]) -> list[list[bytes]]:
    """Write tiles from `first` on holding `held + added`; return the tiles made full."""
    items = held + added
    completed = []
    for start in range(0, len(items), TILE_WIDTH):
        tile = items[start:start + TILE_WIDTH]
        writes[tile_path(level, first + start // TILE_WIDTH, len(tile))] = encode(tile)
        if len(tile) == TILE_WIDTH:
            completed.append(tile)
    return completed


def overlay(read: FileReader, writes: dict[str, bytes]) -> FileReader:
    """A reader that sees `writes` over what `read` finds."""
    def reader(path: str) -> bytes | None:
        return writes[path] if path in writes else read(path)
    return reader
