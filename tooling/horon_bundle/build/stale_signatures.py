"""Signatures an earlier build left beside an archive this build replaced.

`sign` writes `<archive>.sigstore.json` (over the archive's digest) and
`<archive>.provenance.sigstore.json` (a DSSE envelope over the provenance statement). A
rebuild under the same name that gives other bytes leaves both behind, and they no longer
sign what is there: build removes each one that names other bytes, and says so. A
deterministic rebuild (the same bytes) keeps them, since they still sign it. A side file
that cannot be read as a Sigstore bundle is left as it is: publish refuses it, naming it.
"""

from __future__ import annotations

from pathlib import Path

from horon_bundle.core.errors import Refused
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.sidefiles import (
    PROVENANCE_SIGNATURE_SUFFIX,
    SIGNATURE_SUFFIX,
    beside,
    signed_digest,
    signed_payload,
)

MAX_SIGNATURE_BYTES = 4 << 20  # as publish reads them


def _document(path: Path) -> object | None:
    try:
        data = read_input(path, limit=MAX_SIGNATURE_BYTES, what="signature", missing_ok=True,
                          follow_symlinks=False)
        return None if data is None else read_json(data, source=path.name,
                                                   max_bytes=MAX_SIGNATURE_BYTES)
    except Refused:
        return None


def _remove(path: Path, what: str) -> str:
    path.unlink(missing_ok=True)
    return f"removed {path.name}: it signed an earlier build's {what}; sign the new archive " \
        "again"


def discard_stale_signatures(archive: Path, sha256: str, provenance: bytes) -> tuple[str, ...]:
    """Remove the signatures beside `archive` that sign other bytes than its `sha256` and its
    `provenance` statement; a note for each one removed."""
    notes: list[str] = []
    message = _document(beside(archive, SIGNATURE_SUFFIX))
    if signed_digest(message) not in (None, "", sha256):
        notes.append(_remove(beside(archive, SIGNATURE_SUFFIX), "archive"))
    envelope = _document(beside(archive, PROVENANCE_SIGNATURE_SUFFIX))
    if (payload := signed_payload(envelope)) is not None and payload != provenance:
        notes.append(_remove(beside(archive, PROVENANCE_SIGNATURE_SUFFIX), "provenance"))
    return tuple(notes)
