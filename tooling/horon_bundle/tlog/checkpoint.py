"""C2SP tlog-checkpoint: a signed note whose body is the origin, the tree size and the
base64 root hash, each on its own line (extension lines may follow)."""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.tlog.merkle import HASH_SIZE
from horon_bundle.tlog.note import Note, Signer, Verifier, parse_note, sign_note, signed_by

MAX_CHECKPOINT_BYTES = 1 << 16
MAX_TREE_SIZE = (1 << 63) - 1


@dataclass(frozen=True, slots=True)
class Checkpoint:
    origin: str
    size: int
    root: bytes
    note: Note

    @property
    def body(self) -> bytes:
        return self.note.body

    @property
    def text(self) -> bytes:
        return self.note.text

    @property
    def root_base64(self) -> str:
        return base64.b64encode(self.root).decode()


def body_of(origin: str, size: int, root: bytes) -> bytes:
    return f"{origin}\n{size}\n{base64.b64encode(root).decode()}\n".encode()


def signed_checkpoint(origin: str, size: int, root: bytes, signer: Signer) -> Checkpoint:
    body = body_of(origin, size, root)
    return Checkpoint(origin, size, root, Note(body, (sign_note(body, signer),)))


def parse_checkpoint(data: bytes, what: str) -> Checkpoint:
    if len(data) > MAX_CHECKPOINT_BYTES:
        raise Refused.one(codes.LOG_CHECKPOINT, f"{what}: {len(data)} bytes, more than "
                                                f"{MAX_CHECKPOINT_BYTES}")
    note = parse_note(data, what)
    lines = note.body.decode().split("\n")[:-1]
    if len(lines) < 3:
        raise Refused.one(codes.LOG_CHECKPOINT, f"{what}: the body has {len(lines)} lines, "
                                                "a checkpoint has at least 3")
    origin, size_text, root_text = lines[:3]
    if not origin or not size_text.isascii() or not size_text.isdigit() \
            or (size_text.startswith("0") and size_text != "0") or len(size_text) > 19 \
            or int(size_text) > MAX_TREE_SIZE:
        raise Refused.one(codes.LOG_CHECKPOINT, f"{what}: origin {origin[:60]!r} or size "
                                                f"{size_text[:30]!r} is malformed")
    try:
        root = base64.b64decode(root_text, validate=True)
    except (binascii.Error, ValueError):
        root = b""
    if len(root) != HASH_SIZE:
        raise Refused.one(codes.LOG_CHECKPOINT, f"{what}: the root {root_text[:60]!r} is not "
                                                "a base64 SHA-256 hash")
    return Checkpoint(origin, int(size_text), root, note)


def open_checkpoint(data: bytes, verifier: Verifier, what: str) -> Checkpoint:
    """The checkpoint, once its signature by `verifier` holds and its origin is the key's
    name."""
    checkpoint = parse_checkpoint(data, what)
    verdict = signed_by(checkpoint.note, verifier)
    if verdict is not True:
        problem = "has no signature" if verdict is None else "has a signature that does not verify"
        raise Refused.one(codes.LOG_SIGNATURE, f"{what}: {problem} by {verifier.name} "
                                               f"({verifier.id:08x})")
    if checkpoint.origin != verifier.name:
        raise Refused.one(codes.LOG_SIGNATURE, f"{what}: origin {checkpoint.origin[:80]!r} is "
                                               f"not the key's name {verifier.name!r}")
    return checkpoint
