"""The largest checkpoint of each log a host has seen, kept in its agent home:

    <home>/log-checkpoints/<sha256 of the verifier key>    the checkpoint's signed note

A checkpoint smaller than the one kept is a rollback (`log.rollback`), one that does not
extend it a split view or a rewritten log (`log.inconsistent`); both name the two sizes. A
larger, consistent one replaces it (under an exclusive lock, atomically)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.files import exclusive_use, write_atomic
from horon_bundle.core.inputs import read_input
from horon_bundle.tlog.checkpoint import MAX_CHECKPOINT_BYTES, Checkpoint, open_checkpoint
from horon_bundle.tlog.inclusion import Inclusion
from horon_bundle.tlog.log import extends
from horon_bundle.tlog.note import Verifier

MEMORY_DIR = "log-checkpoints"
LOCK_NAME = ".lock"


def _path(home: Path, verifier: Verifier) -> Path:
    return home / MEMORY_DIR / hashlib.sha256(verifier.text.encode()).hexdigest()


def remembered(home: Path, verifier: Verifier) -> Checkpoint | None:
    path = _path(home, verifier)
    data = read_input(path, limit=MAX_CHECKPOINT_BYTES, what="remembered checkpoint",
                      missing_ok=True, follow_symlinks=False)
    return None if data is None else open_checkpoint(data, verifier, str(path))


def check_against(home: Path, verifier: Verifier, proof: Inclusion) -> Checkpoint | None:
    """Refuse `proof`'s checkpoint if it is smaller than, or does not extend, the one kept."""
    kept = remembered(home, verifier)
    new = proof.checkpoint
    if kept is None:
        return None
    if new.size < kept.size:
        raise Refused.one(codes.LOG_ROLLBACK, f"the log {new.origin} shows a checkpoint of "
                                              f"{new.size} leaves; this host has seen "
                                              f"{kept.size} (a rollback or a split view)")
    if not extends(proof.reader, kept, new):
        raise Refused.one(codes.LOG_INCONSISTENT, f"the log {new.origin}'s checkpoint of "
                                                  f"{new.size} leaves does not extend the one "
                                                  f"of {kept.size} this host has seen")
    return kept


def remember(home: Path, verifier: Verifier, proof: Inclusion) -> None:
    """Keep `proof`'s checkpoint when it is larger than the one kept (checked again under
    the lock: a concurrent run may have kept a larger one)."""
    directory = home / MEMORY_DIR
    with exclusive_use(directory, LOCK_NAME):
        kept = check_against(home, verifier, proof)
        if kept is None or proof.checkpoint.size > kept.size:
            write_atomic(_path(home, verifier), proof.checkpoint.text, mode=0o600)
