"""The seam between publish and Sigstore verification (`verify.signature`).

Publish asks one question per archive: does `<archive>.sigstore.json` validly sign it, for
the expected signer, against the pinned root? The verifier is built lazily by the CLI only
after the gate opened (a closed gate reads nothing), and sigstore is imported only then.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from horon_bundle.core.errors import Finding

VerifierFactory = Callable[[], Any]  # -> verify.signature.SignatureVerifier


def signature_findings(archive: Path, signature: Path, verifier: Any) -> list[Finding]:
    """Every problem with the signature (missing, malformed, wrong signer, not verifying)."""
    from horon_bundle.verify.signature import verify_file  # noqa: PLC0415 - sigstore is heavy

    return verify_file(archive, verifier, required=True, signature=signature).findings
