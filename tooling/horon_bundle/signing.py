"""`horon-bundle sign`: keyless Sigstore signatures for archives and artifact records.

One seam, `Signer` (a small ABC): `SigstoreSigner` signs with an OIDC identity found in the
environment, nothing interactive — the ambient CI credential (GitHub Actions with
`id-token: write`, GitLab, Buildkite, CircleCI, GCP) or `SIGSTORE_IDENTITY_TOKEN`. With no
identity the run stops at once with `signing.no-identity` (exit 3), before any network access
and before anything is written; there is never a browser prompt.

Every input is checked first (an archive must verify; a record must be one `compile`
wrote), everything is signed in memory, then each `<file>.sigstore.json` is written
atomically. For an archive, the bundle's provenance statement is also signed as a DSSE
envelope: `<archive>.provenance.sigstore.json`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle import codes
from horon_bundle.bundle_source import open_bundle
from horon_bundle.errors import Finding, Refused
from horon_bundle.fsutil import write_atomic
from horon_bundle.hashing import Digest, hash_bytes, hash_file
from horon_bundle.provenance import MAX_PROVENANCE_BYTES
from horon_bundle.record import load_record
from horon_bundle.reporter import Reporter, SilentReporter
from horon_bundle.signature_check import (
    SignatureVerifier,
    provenance_signature_path,
    signature_path,
    verify_file,
)
from horon_bundle.signer_identity import signer_identity
from horon_bundle.sigstore_trust import PINNED, PRODUCTION, STAGING, TrustChoice, load_trust
from horon_bundle.verify import verify_path

NETWORK_DEADLINE = 120.0  # seconds for one Sigstore exchange (trust root, Fulcio, Rekor)

TOKEN_VARIABLE = "SIGSTORE_IDENTITY_TOKEN"  # noqa: S105 - the variable's name, not a secret
KIND_ARCHIVE, KIND_RECORD = "archive", "record"


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


@dataclass(frozen=True, slots=True, kw_only=True)
class SignInput:
    """A file ready to sign: what it is, its digest, and (archives) its provenance bytes."""

    path: Path
    kind: str
    digest: Digest
    statement: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Signed:
    path: Path
    kind: str
    sha256: str
    signature: Path
    statement_signature: Path | None


def prepare(paths: list[Path]) -> list[SignInput]:
    """Check every input before signing any: archives verify, records parse strictly."""
    inputs: list[SignInput] = []
    problems: list[Finding] = []
    for path in paths:
        try:
            inputs.append(_prepare_one(path))
        except Refused as exc:
            problems.extend(exc.findings)
    if problems:
        raise Refused(problems)
    return inputs


def _prepare_one(path: Path) -> SignInput:
    if not path.is_file() or path.is_symlink():
        raise Refused.one(codes.INPUT_UNREADABLE, f"{path}: not a regular file")
    if path.suffix == ".zip":
        refusal = Finding(codes.SIGNING_INPUT,
                          f"{path.name}: the archive does not verify; not signing it")
        try:
            report = verify_path(path)
        except Refused as exc:
            raise Refused([refusal, *exc.findings]) from None
        if not report.ok:
            raise Refused([refusal, *report.findings])
        assert report.manifest is not None
        asset = report.manifest.asset("provenance")
        assert asset is not None
        with open_bundle(path) as source:
            statement = source.read_small(asset.file.path, MAX_PROVENANCE_BYTES)
        if hash_bytes(statement).sha256 != asset.file.sha256:
            raise Refused.one(codes.SIGNING_INPUT, f"{path.name}: changed while it was read")
        return SignInput(path=path, kind=KIND_ARCHIVE, digest=hash_file(path),
                         statement=statement)
    try:
        _, digest = load_record(path)
    except Refused as exc:
        raise Refused([Finding(codes.SIGNING_INPUT,
                               f"{path.name}: neither a .zip bundle archive nor an artifact "
                               "record"), *exc.findings]) from None
    return SignInput(path=path, kind=KIND_RECORD, digest=digest)


def sign_files(inputs: list[SignInput], signer: Signer,
               reporter: Reporter | None = None) -> list[Signed]:
    """Sign everything in memory first, then write each signature atomically."""
    reporter = reporter or SilentReporter()
    made: list[tuple[SignInput, bytes, bytes | None]] = []
    for item in inputs:
        reporter.step(f"signing {item.path.name} ({item.kind}, sha256 {item.digest.sha256})")
        bundle = signer.sign_digest(item.digest)
        statement = signer.sign_statement(item.statement) if item.statement else None
        made.append((item, bundle, statement))
    results = []
    for item, bundle, statement in made:
        if hash_file(item.path) != item.digest:
            raise Refused.one(codes.SIGNING_INPUT,
                              f"{item.path}: changed while it was being signed")
        target = signature_path(item.path)
        write_atomic(target, bundle)
        statement_target = None
        if statement is not None:
            statement_target = provenance_signature_path(item.path)
            write_atomic(statement_target, statement)
        results.append(Signed(path=item.path, kind=item.kind, sha256=item.digest.sha256,
                              signature=target, statement_signature=statement_target))
    return results


def verify_for_publish(archive: Path, signature: Path, policy: Any) -> list[Finding]:
    """The entry `publish` calls (publish/signature.py): findings, empty when `signature`
    validly signs `archive` for the signer its policy names (offline, pinned root)."""
    identity = signer_identity(identity=getattr(policy, "identity", None),
                               issuer=getattr(policy, "issuer", None),
                               github_repository=getattr(policy, "github_repository", None),
                               github_workflow=getattr(policy, "github_workflow", None),
                               github_ref=getattr(policy, "github_ref", None),
                               where="publish signature policy")
    if identity is None:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          "publish requires signatures but names no signer")
    pinned = getattr(policy, "trust_root", None)
    trust = (TrustChoice(PINNED, Path(pinned)) if pinned is not None
             else TrustChoice(STAGING if getattr(policy, "staging", False) else PRODUCTION))
    verifier = SignatureVerifier(trust=load_trust(trust), identity=identity)
    return verify_file(archive, verifier, required=True, signature=signature).findings
