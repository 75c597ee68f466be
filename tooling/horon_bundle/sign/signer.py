"""Keyless Sigstore signing: the one `Signer` seam and its Sigstore implementation.

One seam, `Signer` (a small ABC): `SigstoreSigner` signs with an OIDC identity found in the
environment, nothing interactive — the ambient CI credential (GitHub Actions with
`id-token: write`, GitLab, Buildkite, CircleCI, GCP) or `SIGSTORE_IDENTITY_TOKEN`. With no
identity the run stops at once with `signing.no-identity` (exit 3), before any network access
and before anything is written; there is never a browser prompt. sigstore is imported only
when a signature is made.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest

NETWORK_DEADLINE = 120.0  # seconds for one Sigstore exchange (trust root, Fulcio, Rekor)

TOKEN_VARIABLE = "SIGSTORE_IDENTITY_TOKEN"  # noqa: S105 - the variable's name, not a secret


class Signer(ABC):
    """Signs digests and in-toto statements; returns Sigstore bundle JSON."""

    @property
    @abstractmethod
    def identity(self) -> str:
        """Who signs (the certificate's identity), for the user's information."""

    @abstractmethod
    def sign_digest(self, digest: Digest) -> bytes: ...

    @abstractmethod
    def sign_statement(self, statement: bytes) -> bytes: ...

    def close(self) -> None:  # noqa: B027 - signers without a session need nothing
        """Release whatever the signer holds (a signing session)."""


class SigstoreSigner(Signer):
    """Keyless signing with an OIDC identity token (Fulcio certificate, Rekor entry)."""

    def __init__(self, token: Any, *, staging: bool) -> None:
        self._token = token
        self._staging = staging
        self._signer: Any = None
        self._session = contextlib.ExitStack()

    @property
    def identity(self) -> str:
        return f"{self._token.identity} (issuer {self._token.issuer})"

    def _active(self) -> Any:
        if self._signer is None:
            from sigstore.models import ClientTrustConfig  # noqa: PLC0415 - heavy
            from sigstore.sign import SigningContext  # noqa: PLC0415 - heavy

            try:
                config = (ClientTrustConfig.staging() if self._staging
                          else ClientTrustConfig.production())
                with network_deadline():
                    context = SigningContext.from_trust_config(config)
                    self._signer = self._session.enter_context(context.signer(self._token))
            except Exception as exc:  # noqa: BLE001 - network, TUF, HTTP: all one environment failure
                raise _failed(exc) from None
        return self._signer

    def sign_digest(self, digest: Digest) -> bytes:
        from sigstore.hashes import Hashed  # noqa: PLC0415 - heavy
        from sigstore_models.common.v1 import HashAlgorithm  # noqa: PLC0415 - heavy

        hashed = Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(digest.sha256))
        signer = self._active()
        try:
            with network_deadline():
                bundle = signer.sign_artifact(hashed)
        except Exception as exc:  # noqa: BLE001 - Fulcio/Rekor/TSA failures are environmental
            raise _failed(exc) from None
        return _bundle_bytes(bundle)

    def sign_statement(self, statement: bytes) -> bytes:
        from sigstore import dsse  # noqa: PLC0415 - heavy

        signer = self._active()
        try:
            with network_deadline():
                bundle = signer.sign_dsse(dsse.Statement(statement))
        except Exception as exc:  # noqa: BLE001 - idem
            raise _failed(exc) from None
        return _bundle_bytes(bundle)

    def close(self) -> None:
        self._session.close()


class NetworkDeadlineError(Exception):
    """Raised into a Sigstore request that did not finish in time."""


@contextlib.contextmanager
def network_deadline(seconds: float = NETWORK_DEADLINE) -> Iterator[None]:
    """A wall-clock deadline around one Sigstore exchange.

    sigstore 4.5 posts to Fulcio and Rekor without a timeout, so a server that accepts the
    connection and never answers would block a CI job for ever. On POSIX, in the main thread,
    an interval timer raises into the call; elsewhere the call runs without one (documented).
    """
    main = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not main:
        yield
        return

    def expired(_signum: int, _frame: object) -> None:
        raise NetworkDeadlineError(f"no answer from Sigstore within {seconds:.0f} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _bundle_bytes(bundle: Any) -> bytes:
    text: str = bundle.to_json()
    return text.encode("utf-8")


def _failed(exc: BaseException) -> Refused:
    text = str(exc).strip().splitlines()
    return Refused.one(codes.SIGNING_FAILED,
                       f"Sigstore signing failed: {type(exc).__name__}: "
                       f"{text[0][:300] if text else ''}")


def ambient_signer(*, staging: bool = False) -> SigstoreSigner:
    """The identity from the environment, or `signing.no-identity` at once (no network)."""
    from sigstore.oidc import IdentityError, IdentityToken, detect_credential  # noqa: PLC0415 - heavy

    raw = os.environ.get(TOKEN_VARIABLE) or None
    origin = TOKEN_VARIABLE
    if raw is None:
        origin = "the ambient CI credential"
        try:
            raw = detect_credential()
        except IdentityError as exc:
            raise Refused.one(codes.SIGNING_NO_IDENTITY,
                              f"the CI has an identity but did not issue it: {_one_line(exc)}",
                              "In GitHub Actions grant the signing job `permissions: id-token: "
                              "write`.") from None
    if not raw:
        ci = "GitHub Actions" if os.environ.get("GITHUB_ACTIONS") else None
        where = f"in {ci}" if ci else "outside CI"
        raise Refused.one(codes.SIGNING_NO_IDENTITY,
                          f"no OIDC identity for keyless signing {where}: no ambient "
                          f"credential and {TOKEN_VARIABLE} is unset")
    try:
        token = IdentityToken(raw)
    except (IdentityError, ValueError) as exc:
        raise Refused.one(codes.SIGNING_NO_IDENTITY,
                          f"the identity token from {origin} is not usable: "
                          f"{_one_line(exc)}") from None
    return SigstoreSigner(token, staging=staging)


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0][:300] if lines else type(exc).__name__
