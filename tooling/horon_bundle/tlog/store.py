"""The log of a horon `file://` store: where it lives, how its files are read, which index
entry each leaf records, and every entry the store holds.

    STORE/log/checkpoint, STORE/log/tile/…, STORE/log/leaves/…   (tlog.log)

A leaf is the exact bytes of one entry the store wrote, each naming where it lives:

    horon.store-entry.v1          index/<id>/<version>/<target>.json
    horon.store-harness-entry.v1  harness/index/<name>/<version>.json
    horon.yank.v1                 yanks/<id>/<version>/<target>.json
"""

from __future__ import annotations

import urllib.parse
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.inputs import read_input
from horon_bundle.core.paths import path_problem
from horon_bundle.core.strictjson import read_json
from horon_bundle.tlog.note import Verifier, parse_verifier
from horon_bundle.tlog.tiles import MAX_ENTRY_BYTES, TILE_WIDTH, FileReader

LOG_DIRECTORY = "log"
MAX_KEY_TEXT_BYTES = 4096  # a file holding a verifier key (`--key`, `--log-key`, `--witness`)
MAX_LOG_FILE_BYTES = TILE_WIDTH * (2 + MAX_ENTRY_BYTES)  # the largest entry bundle
# the store's entry trees: (directory, depth of the .json files below it)
ENTRY_TREES = (("index", 3), ("harness/index", 2), ("yanks", 3))
_PLACES = {"horon.store-entry.v1": ("index", ("id", "version", "target")),
           "horon.store-harness-entry.v1": ("harness/index", ("name", "version")),
           "horon.yank.v1": ("yanks", ("id", "version", "target"))}


def directory_reader(root: Path) -> FileReader:
    """Reads `root/<path>` (a regular file, never through a link), None when absent."""
    def read(path: str) -> bytes | None:
        if any(path_problem(part) for part in path.split("/")):
            raise Refused.one(codes.LOG_TILE, f"{path[:80]!r}: not a path inside the log")
        try:
            return read_input(root / path, limit=MAX_LOG_FILE_BYTES, what="log file",
                              missing_ok=True, follow_symlinks=False)
        except Refused as exc:
            raise Refused(exc.findings) from None
    return read


def entry_place(leaf: bytes) -> str | None:
    """The store path (relative, POSIX) of the entry `leaf` records; None when the leaf is
    not an entry of a kind the store writes."""
    try:
        document = read_json(leaf, source="leaf")
    except Refused:
        return None
    if not isinstance(document, dict):
        return None
    place = _PLACES.get(str(document.get("format")))
    if place is None:
        return None
    directory, fields = place
    parts = [document.get(name) for name in fields]
    if not all(isinstance(p, str) and p and "/" not in p and path_problem(p) is None
               for p in parts):
        return None
    *dirs, last = (str(p) for p in parts)
    return "/".join([directory, *dirs, f"{last}.json"])


def store_entries(root: Path) -> list[str]:
    """Every entry file of the store (relative POSIX paths, sorted by bytes)."""
    found: list[str] = []
    for directory, depth in ENTRY_TREES:
        level = [root / directory]
        for _ in range(depth - 1):
            level = [child for parent in level for child in _children(parent) if child.is_dir()
                     and not child.is_symlink()]
        for parent in level:
            found.extend(child.relative_to(root).as_posix() for child in _children(parent)
                         if child.name.endswith(".json"))
    return sorted(found, key=lambda p: p.encode())


def _children(directory: Path) -> list[Path]:
    try:
        return sorted(directory.iterdir())
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise Refused.one(codes.LOG_LEAF, f"{directory}: {exc.strerror}") from None


def read_entry(root: Path, place: str) -> bytes | None:
    return read_input(root / place, limit=MAX_LOG_FILE_BYTES, what="store entry",
                      missing_ok=True, follow_symlinks=False)


def store_root(value: str, what: str) -> Path:
    """A store named as a directory or a `file://` URL (`log verify STORE`, `--log`)."""
    if "://" not in value:
        return Path(value)
    scheme, _, rest = value.partition("://")
    if scheme != "file" or not rest.startswith("/") or any(c in rest for c in "?#"):
        raise Refused.one(codes.LOG_UNSUPPORTED, f"{what} {value[:120]!r}: only a store "
                                                 "directory or a file:///abs/dir URL is read")
    return Path(urllib.parse.unquote(rest))


def load_verifier(value: str, what: str) -> Verifier:
    """A verifier key given as its text (`<name>+<hash>+<key>`) or as a file holding it."""
    path = Path(value)
    if value.count("+") < 2 or path.is_file():
        data = read_input(path, limit=MAX_KEY_TEXT_BYTES, what=what)
        assert data is not None
        value = data.decode("utf-8", "replace")
    return parse_verifier(value.strip(), f"{what} {value.strip()[:80]!r}")
