"""The seam between publish and Sigstore verification (`verify.signature`).

Publish asks one question per archive: does `<archive>.sigstore.json` validly sign it, for
the expected signer, against the pinned root? The verifier is built lazily by the CLI only
after the gate opened (a closed gate reads nothing), and sigstore is imported only then
(`verify.signature` imports it inside the functions that verify).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from horon_bundle.core.errors import Finding
from horon_bundle.verify.signature import SignatureVerifier, verify_file

VerifierFactory = Callable[[], SignatureVerifier]


def signature_findings(archive: Path, signature: Path,
                       verifier: SignatureVerifier) -> list[Finding]:
    """Every problem with the signature (missing, malformed, wrong signer, not verifying)."""
    return verify_file(archive, verifier, required=True, signature=signature).findings
