"""Verifying `<file>.sigstore.json` offline: named checks, one refusal code per failure.

The verdict is always `sigstore`'s `Verifier.verify_artifact` run with the full signer
identity as its policy, against a pinned root (`verify.trust`). When it refuses, the
report says why, with its own code: the certificate does not chain to the pinned root
(`signature.trust-root`); the certificate names another signer (`signature.identity`) or
issuer (`signature.issuer`) — judged by the same requirement objects on the bundle's
certificate; otherwise the bundle or the file does not verify (`signature.invalid`). When the
identity is wrong, a second run with the identity already judged tells whether the signature
is also broken; that run only ever adds a refusal, it never accepts anything.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest, hash_bytes, hash_file
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.checks import FAIL, PASS, SKIP, Check
from horon_bundle.model.sidefiles import PROVENANCE_SIGNATURE_SUFFIX, SIGNATURE_SUFFIX, beside
from horon_bundle.model.signer_identity import CertifiedSource, SignerIdentity
from horon_bundle.verify.trust import LoadedTrust

if TYPE_CHECKING:
    from sigstore.models import Bundle

MAX_SIGNATURE_BYTES = 1 << 20
IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"

# What malformed bundles make sigstore, pydantic, base64 and cryptography raise besides
# sigstore's own errors (ValueError covers pydantic's ValidationError and binascii.Error).
_MALFORMED = (ValueError, TypeError, KeyError, IndexError, AttributeError)


def signature_path(artifact: Path) -> Path:
    return beside(artifact, SIGNATURE_SUFFIX)


def provenance_signature_path(archive: Path) -> Path:
    return beside(archive, PROVENANCE_SIGNATURE_SUFFIX)


@dataclass(frozen=True, slots=True, kw_only=True)
class SignatureVerifier:
    """A pinned root and the signer every signature must come from."""

    trust: LoadedTrust
    identity: SignerIdentity


@dataclass(slots=True)
class SignatureResult:
    checks: list[Check]
    verified: bool
    certified: CertifiedSource | None = None
    artifact_digest: Digest | None = None

    @property
    def findings(self) -> list[Finding]:
        return [f for check in self.checks for f in check.findings]


def _check(name: str, findings: list[Finding], note: str = "") -> Check:
    return Check(name, FAIL if findings else PASS, findings, note)


def _finding(code: Any, message: str) -> list[Finding]:
    return [Finding(code, message)]


def load_bundle(path: Path) -> Bundle:
    """Read a Sigstore bundle strictly (size, encoding, duplicate keys) and parse it."""
    from cryptography.x509 import InvalidVersion  # noqa: PLC0415 - heavy
    from sigstore.errors import Error as SigstoreError  # noqa: PLC0415 - heavy
    from sigstore.models import Bundle  # noqa: PLC0415 - heavy

    data = read_input(path, limit=MAX_SIGNATURE_BYTES, what="signature")
    assert data is not None
    read_json(data, source=path.name, max_bytes=MAX_SIGNATURE_BYTES, max_depth=32)
    try:
        return Bundle.from_json(data)
    except (SigstoreError, InvalidVersion, *_MALFORMED) as exc:  # InvalidVersion: no ValueError
        raise Refused.one(codes.SIGNATURE_INVALID,
                          f"{path.name}: not a Sigstore bundle: {_line(exc)}") from None


def verify_file(artifact: Path, verifier: SignatureVerifier, *, required: bool,
                signature: Path | None = None, digest: Digest | None = None) -> SignatureResult:
    """Check `artifact` against `signature` (default `<artifact>.sigstore.json`); `digest` is
    the artifact's, when the caller already hashed the bytes it judged (else it is hashed)."""
    signature = signature or signature_path(artifact)
    if not os.path.lexists(signature):  # anything there is read (and refused unless regular)
        if required:
            return SignatureResult([_check("signature.present", _finding(
                codes.SIGNATURE_MISSING, f"{signature.name}: no signature next to "
                                         f"{artifact.name}"))], verified=False)
        return SignatureResult([Check("signature.present", SKIP, [],
                                      f"{signature.name} absent (not required)")],
                               verified=False)
    checks = [_check("signature.present", [], signature.name)]
    try:
        bundle = load_bundle(signature)
    except Refused as exc:
        checks.append(_check("signature.valid", list(exc.findings)))
        return SignatureResult(checks + _skipped_identity("the signature is malformed"),
                               verified=False)
    try:
        if digest is None:
            digest = hash_file(artifact, what="archive", follow_symlinks=False)
    except OSError as exc:
        raise Refused.one(codes.INPUT_UNREADABLE, f"{artifact}: {exc.strerror}") from None
    outcome = _verify_artifact(bundle, digest, verifier)
    checks += outcome
    verified = all(check.status == PASS for check in checks)
    certified = CertifiedSource.of(bundle.signing_certificate) if verified else None
    return SignatureResult(checks, verified=verified, certified=certified,
                           artifact_digest=digest)


def _hashed(digest: Digest) -> Any:
    from sigstore.hashes import Hashed  # noqa: PLC0415 - heavy
    from sigstore_models.common.v1 import HashAlgorithm  # noqa: PLC0415 - heavy

    return Hashed(algorithm=HashAlgorithm.SHA2_256, digest=bytes.fromhex(digest.sha256))


def _verify_artifact(bundle: Bundle, digest: Digest,
                     verifier: SignatureVerifier) -> list[Check]:
    from sigstore.errors import CertValidationError, VerificationError  # noqa: PLC0415 - heavy

    identity = verifier.identity
    trust = verifier.trust
    try:
        trust.verifier.verify_artifact(_hashed(digest), bundle,
                                       identity.as_sigstore_policy())
    except CertValidationError as exc:
        return [_check("signature.valid", _finding(
            codes.SIGNATURE_TRUST_ROOT,
            f"the signing certificate does not chain to the {trust.choice.label}: "
            f"{_line(exc)}")), *_skipped_identity("the certificate is not anchored in the root")]
    except (VerificationError, *_MALFORMED) as exc:
        return _attribute(bundle, digest, verifier, exc)
    note = f"{trust.description}; signer: {identity.describe()}"
    return [_check("signature.valid", [], note), *_identity_checks(bundle, identity)]


def _attribute(bundle: Bundle, digest: Digest, verifier: SignatureVerifier,
               error: Exception) -> list[Check]:
    """Sigstore refused: name the reason with its own code."""
    from sigstore.errors import VerificationError  # noqa: PLC0415 - heavy

    identity_checks = _identity_checks(bundle, verifier.identity)
    if all(check.status == PASS for check in identity_checks):
        return [_check("signature.valid", _finding(
            codes.SIGNATURE_INVALID, f"the signature does not verify: {_line(error)}")),
                *identity_checks]
    try:
        verifier.trust.verifier.verify_artifact(_hashed(digest), bundle,
                                                _JudgedSeparately())
    except (VerificationError, *_MALFORMED) as exc:
        valid = _check("signature.valid", _finding(
            codes.SIGNATURE_INVALID, f"the signature does not verify: {_line(exc)}"))
    else:
        valid = _check("signature.valid", [], "signature and log entry verify; the signer "
                                              "does not match")
    return [valid, *identity_checks]


class _JudgedSeparately:
    """Policy for the diagnostic run only: the identity was already judged (and refused)."""

    def verify(self, cert: object) -> None:
        return None


def _identity_checks(bundle: Bundle, identity: SignerIdentity) -> list[Check]:
    certificate = bundle.signing_certificate
    problems = identity.problems(certificate)
    issuer = [Finding(r.code, f"signing certificate: {p}") for r, p in problems
              if r.code is codes.SIGNATURE_ISSUER]
    names = [Finding(r.code, f"signing certificate: {p}") for r, p in problems
             if r.code is not codes.SIGNATURE_ISSUER]
    wanted_issuer = [r.describe() for r in identity.requirements
                     if r.code is codes.SIGNATURE_ISSUER]
    wanted_names = [r.describe() for r in identity.requirements
                    if r.code is not codes.SIGNATURE_ISSUER]
    return [_check("signature.identity", names, ", ".join(wanted_names)),
            _check("signature.issuer", issuer, ", ".join(wanted_issuer))]


def _skipped_identity(why: str) -> list[Check]:
    return [Check("signature.identity", SKIP, [], why), Check("signature.issuer", SKIP, [], why)]


def verified_statement_payload(signature: Path,
                               verifier: SignatureVerifier) -> bytes | list[Finding]:
    """The in-toto statement a DSSE Sigstore bundle signs, once the signature, log entry and
    signer are verified offline; else the findings saying why not."""
    from sigstore.errors import CertValidationError, VerificationError  # noqa: PLC0415 - heavy

    try:
        bundle = load_bundle(signature)
    except Refused as exc:
        return list(exc.findings)
    try:
        payload_type, payload = verifier.trust.verifier.verify_dsse(
            bundle, verifier.identity.as_sigstore_policy())
    except CertValidationError as exc:
        return _finding(codes.SIGNATURE_TRUST_ROOT,
                        f"{signature.name}: the certificate does not chain to the "
                        f"{verifier.trust.choice.label}: {_line(exc)}")
    except (VerificationError, *_MALFORMED) as exc:
        problems = verifier.identity.problems(bundle.signing_certificate)
        if problems:
            requirement, problem = problems[0]
            return _finding(requirement.code, f"{signature.name}: {problem}")
        return _finding(codes.SIGNATURE_INVALID,
                        f"{signature.name}: does not verify: {_line(exc)}")
    if payload_type != IN_TOTO_PAYLOAD_TYPE:
        return _finding(codes.SIGNATURE_INVALID,
                        f"{signature.name}: payload type {payload_type!r}")
    data: bytes = payload
    return data


def verify_statement(signature: Path, statement_sha256: str,
                     verifier: SignatureVerifier) -> Check:
    """`<archive>.provenance.sigstore.json`: a DSSE envelope over the bundle's provenance."""
    name = "signature.provenance"
    payload = verified_statement_payload(signature, verifier)
    if isinstance(payload, list):
        return _check(name, payload)
    signed = hash_bytes(payload).sha256
    if signed != statement_sha256:
        return _check(name, _finding(codes.SIGNATURE_INVALID,
                                     f"{signature.name}: signs a statement with sha256 {signed}, "
                                     f"the bundle's provenance.json is {statement_sha256}"))
    return _check(name, [], "DSSE envelope over provenance.json")


def require_signature(artifact: Path, verifier: SignatureVerifier) -> Digest:
    """Refuse unless `artifact` carries a valid signature from the signer; its digest."""
    result = verify_file(artifact, verifier, required=True)
    if result.findings:
        raise Refused(result.findings)
    assert result.artifact_digest is not None
    return result.artifact_digest


def _line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0]
    return line if len(line) <= 300 else line[:297] + "..."
