"""Which Sigstore trust root a verification anchors in: pinned, offline, never a user cache.

`sigstore`'s own offline mode reads `trusted_root.json` from the user's TUF cache
(`$XDG_CACHE_HOME/sigstore-python/…`) without checking it, so anything that can write
there decides what verifies. We never go through that cache: the production and staging
roots are read from the package data `sigstore` ships (the same files it seeds its cache
with), and `--trust-root FILE` pins an explicit one. Each choice is reported with the
SHA-256 of the root's bytes, so a report says exactly what it trusted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import read_json
from horon_bundle.verify.trust_choice import PINNED, PRODUCTION, STAGING, TrustChoice

if TYPE_CHECKING:
    from sigstore.models import TrustedRoot
    from sigstore.verify import Verifier

PRODUCTION_TUF_URL = "https://tuf-repo-cdn.sigstore.dev"
STAGING_TUF_URL = "https://tuf-repo-cdn.sigstage.dev"
TRUSTED_ROOT_NAME = "trusted_root.json"
MAX_TRUST_ROOT_BYTES = 4 << 20
__all__ = ["MAX_TRUST_ROOT_BYTES", "PINNED", "PRODUCTION", "PRODUCTION_TUF_URL", "STAGING",
           "STAGING_TUF_URL", "TRUSTED_ROOT_NAME", "LoadedTrust", "TrustChoice", "load_trust"]


@dataclass(frozen=True, slots=True)
class LoadedTrust:
    choice: TrustChoice
    sha256: str
    verifier: Verifier

    @property
    def description(self) -> str:
        return f"{self.choice.label} (sha256 {self.sha256})"


def _shipped_root(url: str) -> tuple[bytes, Path]:
    """The trusted_root.json `sigstore` ships for `url` (its package data, not a cache)."""
    import importlib.resources  # noqa: PLC0415 - only when a signature is checked (start-up)

    resource = importlib.resources.files("sigstore._store").joinpath(
        quote(url, safe="")).joinpath(TRUSTED_ROOT_NAME)
    with importlib.resources.as_file(resource) as path:
        return path.read_bytes(), path


def load_trust(choice: TrustChoice) -> LoadedTrust:
    """Build an offline verifier anchored in exactly the chosen root."""
    from cryptography.x509 import InvalidVersion  # noqa: PLC0415 - heavy
    from sigstore.errors import Error as SigstoreError  # noqa: PLC0415 - heavy
    from sigstore.models import TrustedRoot  # noqa: PLC0415 - heavy
    from sigstore.verify import Verifier  # noqa: PLC0415 - heavy
    from sigstore_models.trustroot import v1 as trustroot_v1  # noqa: PLC0415 - heavy

    if choice.kind == PINNED:
        assert choice.path is not None
        path = choice.path
        data = read_input(path, limit=MAX_TRUST_ROOT_BYTES, what="--trust-root")
        assert data is not None
        read_json(data, source=str(path), max_bytes=MAX_TRUST_ROOT_BYTES, max_depth=16)
    else:
        url = PRODUCTION_TUF_URL if choice.kind == PRODUCTION else STAGING_TUF_URL
        data, path = _shipped_root(url)
    try:  # from the bytes read and judged above: the file is never read a second time
        root: TrustedRoot = TrustedRoot(trustroot_v1.TrustedRoot.from_json(data))
        root.get_fulcio_certs()
        verifier = Verifier(trusted_root=root)
    except (SigstoreError, ValueError, TypeError, KeyError, InvalidVersion) as exc:
        raise Refused.one(codes.SIGNATURE_TRUST_ROOT_FILE,
                          f"{path}: not a usable Sigstore trusted root: "
                          f"{_first_line(str(exc))}") from None
    return LoadedTrust(choice=choice, sha256=hash_bytes(data).sha256, verifier=verifier)


def _first_line(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "unknown error"
    return line if len(line) <= 300 else line[:297] + "..."
