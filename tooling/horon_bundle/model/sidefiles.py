"""The files the toolchain writes beside an archive, outside its content address.

    <archive>.sha256                   `sha256sum` line for the archive
    <archive>.build.json               this run's non-deterministic facts (horon.build-run.v1)
    <archive>.sigstore.json            Sigstore bundle signing the archive's digest
    <archive>.provenance.sigstore.json DSSE envelope signing the bundle's provenance statement
"""

from __future__ import annotations

import base64
import binascii
from pathlib import Path

DIGEST_SUFFIX = ".sha256"
BUILD_RECORD_SUFFIX = ".build.json"
SIGNATURE_SUFFIX = ".sigstore.json"
PROVENANCE_SIGNATURE_SUFFIX = ".provenance.sigstore.json"
BUILD_RECORD_FORMAT = "horon.build-run.v1"


def beside(artifact: Path, suffix: str) -> Path:
    """`<artifact><suffix>` in the artifact's directory."""
    return artifact.with_name(artifact.name + suffix)


def signed_digest(document: object) -> str | None:
    """The SHA-256 (hex) a message-signature Sigstore bundle says it signs; None for another
    kind (a DSSE envelope) or a digest in another algorithm. Malformed: an empty string."""
    signature = document.get("messageSignature") if isinstance(document, dict) else None
    if signature is None:
        return None
    digest = signature.get("messageDigest") if isinstance(signature, dict) else None
    if not isinstance(digest, dict) or digest.get("algorithm") != "SHA2_256":
        return None if isinstance(digest, dict) else ""
    raw = _base64(digest.get("digest"))
    return raw.hex() if raw is not None and len(raw) == 32 else ""


def signed_payload(document: object) -> bytes | None:
    """The payload a DSSE Sigstore bundle signs (for ours, the provenance statement's bytes);
    None for another kind or a malformed envelope."""
    envelope = document.get("dsseEnvelope") if isinstance(document, dict) else None
    return _base64(envelope.get("payload")) if isinstance(envelope, dict) else None


def _base64(value: object) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True) if isinstance(value, str) else None
    except binascii.Error:
        return None
