"""C2SP signed notes (https://c2sp.org/signed-note) with Ed25519 keys, as Go's
`golang.org/x/mod/sumdb/note` writes and reads them, and C2SP tlog-cosignature/v1.

    signer   PRIVATE+KEY+<name>+<hash>+<base64(0x01 || 32-byte seed)>
    verifier <name>+<hash>+<base64(0x01 || 32-byte public key)>
    witness  <name>+<hash>+<base64(0x04 || 32-byte public key)>   (a cosigner's verifier)

`<hash>` is the key ID as 8 hex digits: the first four bytes of SHA-256(name || "\\n" ||
type byte || public key). A note is its text (UTF-8 lines, each ending in a newline), a blank
line, and signature lines `— <name> <base64(key ID || signature)>`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
import struct
from dataclasses import dataclass

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused

ED25519 = 0x01  # the type byte of a log's Ed25519 key
COSIGNATURE_V1 = 0x04  # the type byte of a tlog-cosignature/v1 Ed25519 key
SIGNER_PREFIX = "PRIVATE+KEY+"
DASH = "\u2014 "  # an em dash and a space open every signature line
MAX_NOTE_SIGNATURES = 100  # Go's note.Open refuses more signature lines
COSIGNATURE_HEADER = b"cosignature/v1\n"


def key_id(name: str, key_type: int, public: bytes) -> int:
    digest = hashlib.sha256(name.encode() + b"\n" + bytes([key_type]) + public).digest()
    return int.from_bytes(digest[:4], "big")


def name_problem(name: str) -> str | None:
    if not name:
        return "the name is empty"
    if "+" in name or any(char.isspace() for char in name):
        return "the name holds a space or `+`"
    if any(not char.isprintable() for char in name):
        return "the name holds a control character"
    return None


@dataclass(frozen=True, slots=True)
class Verifier:
    name: str
    key_type: int
    public: bytes

    @property
    def id(self) -> int:
        return key_id(self.name, self.key_type, self.public)

    @property
    def text(self) -> str:
        encoded = base64.b64encode(bytes([self.key_type]) + self.public).decode()
        return f"{self.name}+{self.id:08x}+{encoded}"

    def verify(self, message: bytes, signature: bytes) -> bool:
        from cryptography.exceptions import InvalidSignature  # noqa: PLC0415 - lazily
        from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
            Ed25519PublicKey,
        )

        try:
            Ed25519PublicKey.from_public_bytes(self.public).verify(signature, message)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True, slots=True)
class Signer:
    name: str
    key_type: int
    seed: bytes

    @property
    def verifier(self) -> Verifier:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
            Ed25519PrivateKey,
        )
        from cryptography.hazmat.primitives.serialization import (  # noqa: PLC0415
            Encoding,
            PublicFormat,
        )

        public = Ed25519PrivateKey.from_private_bytes(self.seed).public_key()
        return Verifier(self.name, self.key_type,
                        public.public_bytes(Encoding.Raw, PublicFormat.Raw))

    @property
    def text(self) -> str:
        encoded = base64.b64encode(bytes([self.key_type]) + self.seed).decode()
        return f"{SIGNER_PREFIX}{self.name}+{self.verifier.id:08x}+{encoded}"

    def sign(self, message: bytes) -> bytes:
        from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
            Ed25519PrivateKey,
        )

        return Ed25519PrivateKey.from_private_bytes(self.seed).sign(message)


def generate(name: str, key_type: int = ED25519) -> Signer:
    problem = name_problem(name)
    if problem:
        raise Refused.one(codes.LOG_KEY, f"key name {name[:80]!r}: {problem}")
    return Signer(name, key_type, os.urandom(32))


def _key_parts(text: str, what: str) -> tuple[str, int, bytes]:
    parts = text.split("+", 2)
    if len(parts) != 3:
        raise Refused.one(codes.LOG_KEY, f"{what}: not <name>+<hash>+<key>")
    name, hash_text, key_text = parts
    problem = name_problem(name)
    if problem:
        raise Refused.one(codes.LOG_KEY, f"{what}: {problem}")
    if len(hash_text) != 8 or any(c not in "0123456789abcdef" for c in hash_text):
        raise Refused.one(codes.LOG_KEY, f"{what}: the hash {hash_text[:20]!r} is not 8 "
                                         "lowercase hex digits")
    try:
        raw = base64.b64decode(key_text, validate=True)
    except (binascii.Error, ValueError):
        raise Refused.one(codes.LOG_KEY, f"{what}: the key is not base64") from None
    if len(raw) != 33 or raw[0] not in (ED25519, COSIGNATURE_V1):
        raise Refused.one(codes.LOG_KEY, f"{what}: not an Ed25519 key (type 0x01, or 0x04 for "
                                         "a witness, and 32 bytes)")
    return name, int(hash_text, 16), raw


def parse_verifier(text: str, what: str = "verifier key") -> Verifier:
    name, hash_value, raw = _key_parts(text.strip(), what)
    verifier = Verifier(name, raw[0], raw[1:])
    if verifier.id != hash_value:
        raise Refused.one(codes.LOG_KEY, f"{what}: the hash {hash_value:08x} is not the key's "
                                         f"({verifier.id:08x})")
    return verifier


def parse_signer(text: str, what: str = "signer key") -> Signer:
    text = text.strip()
    if not text.startswith(SIGNER_PREFIX):
        raise Refused.one(codes.LOG_KEY, f"{what}: does not start with {SIGNER_PREFIX}")
    name, hash_value, raw = _key_parts(text[len(SIGNER_PREFIX):], what)
    signer = Signer(name, raw[0], raw[1:])
    if signer.verifier.id != hash_value:
        raise Refused.one(codes.LOG_KEY, f"{what}: the hash {hash_value:08x} is not the key's")
    return signer


# --- notes -----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class SignatureLine:
    name: str
    key_id: int
    signature: bytes  # after the key ID

    @property
    def text(self) -> str:
        blob = struct.pack(">I", self.key_id) + self.signature
        return f"{DASH}{self.name} {base64.b64encode(blob).decode()}\n"


@dataclass(frozen=True, slots=True)
class Note:
    body: bytes  # the text, each line ending in a newline
    signatures: tuple[SignatureLine, ...]

    @property
    def text(self) -> bytes:
        return self.body + b"\n" + "".join(s.text for s in self.signatures).encode()


def _refuse(what: str, problem: str) -> Refused:
    return Refused.one(codes.LOG_CHECKPOINT, f"{what}: {problem}")


def parse_note(data: bytes, what: str) -> Note:
    """The body and signature lines of a signed note; nothing is verified yet."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _refuse(what, "not UTF-8") from None
    if not text.endswith("\n"):
        raise _refuse(what, "does not end with a newline")
    if any((not char.isprintable() and char != "\n") for char in text):
        raise _refuse(what, "holds a control character")
    split = text.rfind("\n\n")
    if split < 0:
        raise _refuse(what, "no blank line before the signatures")
    body, lines = text[:split + 1], text[split + 2:].splitlines()
    if not lines or len(lines) > MAX_NOTE_SIGNATURES:
        raise _refuse(what, f"{len(lines)} signature lines (1 … {MAX_NOTE_SIGNATURES})")
    signatures = []
    for line in lines:
        if not line.startswith(DASH) or line.count(" ") != 2:
            raise _refuse(what, f"signature line {line[:60]!r} is not '— <name> <base64>'")
        name, encoded = line[len(DASH):].split(" ")
        try:
            blob = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise _refuse(what, f"signature of {name[:60]!r} is not base64") from None
        if name_problem(name) or len(blob) < 5:
            raise _refuse(what, f"signature line of {name[:60]!r} is malformed")
        signatures.append(SignatureLine(name, int.from_bytes(blob[:4], "big"), blob[4:]))
    return Note(body.encode(), tuple(signatures))


def sign_note(body: bytes, signer: Signer) -> SignatureLine:
    return SignatureLine(signer.name, signer.verifier.id, signer.sign(body))


def cosign(body: bytes, witness: Signer, timestamp: int) -> SignatureLine:
    """A tlog-cosignature/v1 line: the witness states it saw `body` as the log's largest
    consistent tree head at `timestamp`."""
    stamp = struct.pack(">Q", timestamp)
    signature = witness.sign(_cosigned_message(body, timestamp))
    return SignatureLine(witness.name, witness.verifier.id, stamp + signature)


def _cosigned_message(body: bytes, timestamp: int) -> bytes:
    return COSIGNATURE_HEADER + f"time {timestamp}\n".encode() + body


def signed_by(note: Note, verifier: Verifier) -> bool | None:
    """True when a signature line of `verifier` (its name and key ID) verifies, False when
    one is there and does not, None when there is none."""
    lines = [s for s in note.signatures if s.name == verifier.name and s.key_id == verifier.id]
    if not lines:
        return None
    for line in lines:
        if verifier.key_type == COSIGNATURE_V1:
            if len(line.signature) != 72:
                return False
            timestamp = int.from_bytes(line.signature[:8], "big")
            if timestamp >= 1 << 63 or not verifier.verify(
                    _cosigned_message(note.body, timestamp), line.signature[8:]):
                return False
        elif not verifier.verify(note.body, line.signature):
            return False
    return True
