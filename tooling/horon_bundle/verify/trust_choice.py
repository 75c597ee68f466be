"""Which Sigstore trust root a verification anchors in (`--trust-root`, `--staging`, or the
production root), as the command line names it: apart from `verify.trust`, which loads the
root, so that a verify naming no signer never builds the loaded root's class (start-up)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PRODUCTION, STAGING, PINNED = "production", "staging", "file"


@dataclass(frozen=True, slots=True)
class TrustChoice:
    """production (default), staging, or a pinned trusted_root.json file."""

    kind: str = PRODUCTION
    path: Path | None = None

    @property
    def label(self) -> str:
        if self.kind == PINNED:
            return f"pinned trust root {self.path}"
        return f"Sigstore {self.kind} root shipped with sigstore"
