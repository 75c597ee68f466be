"""The transparency log of a `file://` store: one leaf per index entry (and yank) a publish
wrote, the exact bytes of that entry (docs/transparency-log.md).

    log/checkpoint        the signed tree head, written last (replaced whole)
    log/tile/…            hash tiles and entry bundles (C2SP tlog-tiles)
    log/leaves/…          leaf hints (the index of a leaf, by the SHA-256 of its bytes)

The log is appended under an exclusive lock (`.tmp/log.lock`): two publishers never extend
the same checkpoint, so the log never forks. Every tile is written (fsynced, renamed) before
the checkpoint that needs it; a run killed at any point leaves the old checkpoint, whose
files are untouched, and the same command run again logs what was committed. An entry
already in the log (the same bytes) adds nothing. The first run with a key logs every entry
the store already held, in path order.
"""

from __future__ import annotations

import stat
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import exclusive_use
from horon_bundle.core.inputs import read_input
from horon_bundle.tlog.checkpoint import Checkpoint, open_checkpoint
from horon_bundle.tlog.log import CHECKPOINT, append, find_leaf
from horon_bundle.tlog.note import Signer, parse_signer
from horon_bundle.tlog.store import LOG_DIRECTORY, directory_reader, read_entry, store_entries
from horon_bundle.tlog.tiles import TileReader

LOG_KEY_VARIABLE = "HORON_PUBLISH_LOG_KEY"
MAX_KEY_FILE_BYTES = 4096
APPENDED, UNCHANGED, NOT_KEPT = "appended", "unchanged", "not-kept"


class Store(Protocol):
    """What the log needs of a `file://` store (`file_store.FileStore`)."""

    root: Path

    def replace_file(self, final: Path, data: bytes, *,
                     before_rename: Callable[[], None] | None = None) -> None: ...


def read_log_key(environ: Mapping[str, str]) -> Signer | None:
    """The signer `HORON_PUBLISH_LOG_KEY` names (a file only its owner may read), if set."""
    value = environ.get(LOG_KEY_VARIABLE, "")
    if not value:
        return None
    path = Path(value)
    what = f"{LOG_KEY_VARIABLE} {path}"
    try:
        data = read_input(path, limit=MAX_KEY_FILE_BYTES, what=LOG_KEY_VARIABLE)
        mode = path.stat().st_mode
    except Refused as exc:
        raise Refused.one(codes.LOG_KEY_FILE, "; ".join(f.message for f in exc.findings)) \
            from None
    except OSError as exc:
        raise Refused.one(codes.LOG_KEY_FILE, f"{what}: {exc.strerror}") from None
    if data is None:
        raise Refused.one(codes.LOG_KEY_FILE, f"{what}: no such file")
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise Refused.one(codes.LOG_KEY_FILE, f"{what}: mode {stat.S_IMODE(mode):04o}, others "
                                              "may read the signer key (chmod 600 it)")
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise Refused.one(codes.LOG_KEY, f"{what}: not a signer key (not ASCII)") from None
    return parse_signer(text, what)


def _current(store: Store, signer: Signer) -> Checkpoint | None:
    path = store.root / LOG_DIRECTORY / CHECKPOINT
    data = directory_reader(store.root / LOG_DIRECTORY)(CHECKPOINT)
    if data is None:
        return None
    return open_checkpoint(data, signer.verifier, str(path))


def log_entries(store: Store, signer: Signer | None,
                places: list[str]) -> dict[str, Any] | None:
    """Append the store entries at `places` (relative paths) that the log lacks; what the log
    became, or None when the store keeps no log and no key is set."""
    log_dir = store.root / LOG_DIRECTORY
    checkpoint_url = "file://" + (log_dir / CHECKPOINT).as_posix()
    if signer is None:
        if not (log_dir / CHECKPOINT).exists():
            return None
        return {"status": NOT_KEPT, "checkpoint": checkpoint_url, "reason":
                f"{LOG_KEY_VARIABLE} is not set: the store's log was left as it was, and "
                "what this run wrote is not in it (publish again with the key to add it)"}
    with exclusive_use(store.root / ".tmp", "log.lock"):
        current = _current(store, signer)
        if current is None:
            places = [*store_entries(store.root), *places]
        read = directory_reader(log_dir)
        reader = TileReader(read, current.size if current is not None else 0)
        new: list[bytes] = []
        added: list[str] = []
        for place in dict.fromkeys(places):
            data = read_entry(store.root, place)
            if data is None or data in new:
                continue
            if current is not None and find_leaf(reader, data) is not None:
                continue
            new.append(data)
            added.append(place)
        if not new:
            size = current.size if current is not None else 0
            return {"status": UNCHANGED, "checkpoint": checkpoint_url, "size": size,
                    "added": []}
        appended = append(read, current, new, signer)
        for path, data in sorted(appended.writes.items()):
            store.replace_file(log_dir / path, data,
                               before_rename=lambda: checkpoint("publish.log-tiles"))
        store.replace_file(log_dir / CHECKPOINT, appended.checkpoint.text,
                           before_rename=lambda: checkpoint("publish.log-checkpoint"))
    return {"status": APPENDED, "checkpoint": checkpoint_url,
            "size": appended.checkpoint.size, "root": appended.checkpoint.root_base64,
            "added": [{"index": appended.first_index + n, "entry": place}
                      for n, place in enumerate(added)]}

