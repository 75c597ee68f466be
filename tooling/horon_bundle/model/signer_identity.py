"""Who must have signed: small requirements on a Fulcio signing certificate.

Each requirement checks one thing the certificate says (its SAN, its OIDC issuer, or one of
the Fulcio extensions GitHub Actions identities carry) and belongs to one refusal code:
`signature.issuer` for the issuer, `signature.identity` for everything naming the signer.
A `SignerIdentity` is their conjunction; an empty one is refused, never treated as "anyone".

GitHub shorthands map to Fulcio's extensions (docs/auditing.md has the table):
`--github-repository o/r` → Source Repository URI (1.3.6.1.4.1.57264.1.12) is
`https://github.com/o/r` and the issuer is GitHub's; `--github-workflow PATH` → Build Config
URI (…1.18, the caller workflow) is `https://github.com/o/r/PATH@<ref>`; `--github-ref REF` →
Source Repository Ref (…1.14) is REF.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Refused

if TYPE_CHECKING:
    from cryptography.x509 import Certificate
    from sigstore.verify.policy import VerificationPolicy

GITHUB_ISSUER = "https://token.actions.githubusercontent.com"
GITHUB_SERVER = "https://github.com"
_REPOSITORY = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_BUILD_CONFIG_URI_OID = "1.3.6.1.4.1.57264.1.18"
_SOURCE_REPOSITORY_URI_OID = "1.3.6.1.4.1.57264.1.12"
_SOURCE_REPOSITORY_REF_OID = "1.3.6.1.4.1.57264.1.14"
_SOURCE_REPOSITORY_DIGEST_OID = "1.3.6.1.4.1.57264.1.13"


class CertificateRequirement(ABC):
    """One fact the signing certificate must state."""

    code: Code = codes.SIGNATURE_IDENTITY

    @abstractmethod
    def describe(self) -> str: ...

    @abstractmethod
    def problem(self, certificate: Certificate) -> str | None:
        """None when met, else why not (in one line)."""


class _SigstorePolicy(CertificateRequirement):
    """A requirement delegated to one of `sigstore.verify.policy`'s reviewed checks."""

    def _policy(self) -> object:
        raise NotImplementedError

    def problem(self, certificate: Certificate) -> str | None:
        from cryptography.x509 import ExtensionNotFound  # noqa: PLC0415 - heavy
        from sigstore.errors import VerificationError  # noqa: PLC0415 - heavy

        policy = self._policy()
        try:
            policy.verify(certificate)  # type: ignore[attr-defined]
        except VerificationError as exc:
            return str(exc)
        except (ExtensionNotFound, ValueError) as exc:
            return f"the certificate cannot show {self.describe()}: {exc}"
        return None


@dataclass(frozen=True, slots=True)
class IssuerIs(_SigstorePolicy):
    issuer: str
    code = codes.SIGNATURE_ISSUER

    def describe(self) -> str:
        return f"OIDC issuer {self.issuer}"

    def _policy(self) -> object:
        from sigstore.verify.policy import OIDCIssuer  # noqa: PLC0415 - heavy

        return OIDCIssuer(self.issuer)


@dataclass(frozen=True, slots=True)
class SubjectIs(_SigstorePolicy):
    """The certificate's SAN (e-mail, URI or Sigstore other-name) equals `identity`."""

    identity: str

    def describe(self) -> str:
        return f"identity {self.identity}"

    def _policy(self) -> object:
        from sigstore.verify.policy import Identity  # noqa: PLC0415 - heavy

        return Identity(identity=self.identity)


@dataclass(frozen=True, slots=True)
class CertifiedRepositoryIs(_SigstorePolicy):
    uri: str

    def describe(self) -> str:
        return f"source repository {self.uri}"

    def _policy(self) -> object:
        from sigstore.verify.policy import OIDCSourceRepositoryURI  # noqa: PLC0415 - heavy

        return OIDCSourceRepositoryURI(self.uri)


@dataclass(frozen=True, slots=True)
class CertifiedRefIs(_SigstorePolicy):
    ref: str

    def describe(self) -> str:
        return f"source ref {self.ref}"

    def _policy(self) -> object:
        from sigstore.verify.policy import OIDCSourceRepositoryRef  # noqa: PLC0415 - heavy

        return OIDCSourceRepositoryRef(self.ref)


@dataclass(frozen=True, slots=True)
class WorkflowIs(CertificateRequirement):
    """The caller workflow (Build Config URI) is `<repository>/<path>@…` at any ref."""

    repository_uri: str
    path: str

    def describe(self) -> str:
        return f"workflow {self.path} of {self.repository_uri}"

    def problem(self, certificate: Certificate) -> str | None:
        value = certificate_extension(certificate, _BUILD_CONFIG_URI_OID)
        if value is None:
            return "the certificate has no Build Config URI (not a GitHub Actions identity)"
        prefix = f"{self.repository_uri}/{self.path}@"
        if not value.startswith(prefix):
            return f"the certificate's workflow is {value}, expected {prefix}<ref>"
        return None


def certificate_extension(certificate: Certificate, oid: str) -> str | None:
    """A Fulcio v2 extension's value (a DER UTF8String), or None when absent or malformed."""
    from cryptography import x509  # noqa: PLC0415 - heavy
    from cryptography.hazmat import asn1  # noqa: PLC0415 - heavy

    try:
        extension = certificate.extensions.get_extension_for_oid(x509.ObjectIdentifier(oid))
    except (x509.ExtensionNotFound, ValueError):
        return None
    raw = getattr(extension.value, "value", None)
    if not isinstance(raw, bytes):
        return None
    try:
        decoded = asn1.decode_der(str, raw)
    except ValueError:
        return None
    return decoded if isinstance(decoded, str) else None


@dataclass(frozen=True, slots=True)
class CertifiedSource:
    """What a verified GitHub Actions certificate attests about the source (None: absent)."""

    repository_uri: str | None
    ref: str | None
    revision: str | None

    @classmethod
    def of(cls, certificate: Certificate) -> CertifiedSource:
        return cls(repository_uri=certificate_extension(certificate, _SOURCE_REPOSITORY_URI_OID),
                   ref=certificate_extension(certificate, _SOURCE_REPOSITORY_REF_OID),
                   revision=certificate_extension(certificate, _SOURCE_REPOSITORY_DIGEST_OID))


@dataclass(frozen=True, slots=True)
class SignerIdentity:
    """Every requirement the signer must meet (a conjunction; never empty)."""

    requirements: tuple[CertificateRequirement, ...]

    def __post_init__(self) -> None:
        if not self.requirements:
            raise ValueError("a signer identity needs at least one requirement")

    def describe(self) -> str:
        return ", ".join(r.describe() for r in self.requirements)

    def problems(self, certificate: Certificate) -> list[tuple[CertificateRequirement, str]]:
        found = []
        for requirement in self.requirements:
            problem = requirement.problem(certificate)
            if problem is not None:
                found.append((requirement, problem))
        return found

    def as_sigstore_policy(self) -> VerificationPolicy:
        """The same conjunction as a `sigstore` VerificationPolicy."""
        return _AllRequirements(self)


class _AllRequirements:
    def __init__(self, identity: SignerIdentity) -> None:
        self._identity = identity

    def verify(self, cert: Certificate) -> None:
        from sigstore.errors import VerificationError  # noqa: PLC0415 - heavy

        problems = self._identity.problems(cert)
        if problems:
            raise VerificationError("; ".join(problem for _, problem in problems))


def signer_identity(*, identity: str | None = None, issuer: str | None = None,
                    github_repository: str | None = None, github_workflow: str | None = None,
                    github_ref: str | None = None, where: str = "options") -> SignerIdentity | None:
    """The requirements the options name; None when they name no signer at all."""
    problems: list[str] = []
    if identity is not None and not identity:
        problems.append("the identity is empty")
    if identity and not issuer:
        problems.append("an identity needs its OIDC issuer (--issuer): without it any identity "
                        "provider could vouch for that name")
    if issuer is not None and not issuer.startswith("https://"):
        problems.append(f"issuer {issuer!r} is not an https:// URL")
    if issuer and not identity and not github_repository:
        problems.append("an issuer alone names nobody; add --identity or --github-repository")
    if github_repository is not None and not _REPOSITORY.fullmatch(github_repository):
        problems.append(f"GitHub repository {github_repository!r} is not owner/name")
    if (github_workflow or github_ref) and not github_repository:
        problems.append("--github-workflow and --github-ref need --github-repository")
    if github_workflow is not None and (not github_workflow or "@" in github_workflow
                                        or github_workflow.startswith("/")):
        problems.append(f"workflow {github_workflow!r} is not a path in the repository such as "
                        ".github/workflows/release.yml")
    if github_ref is not None and not github_ref.startswith("refs/"):
        problems.append(f"ref {github_ref!r} is not a full git ref such as refs/tags/v1.2.0")
    if problems:
        raise Refused.one(codes.SIGNATURE_OPTIONS, f"{where}: " + "; ".join(problems))
    requirements: list[CertificateRequirement] = []
    if identity and issuer:
        requirements += [SubjectIs(identity), IssuerIs(issuer)]
    if github_repository:
        repository_uri = f"{GITHUB_SERVER}/{github_repository}"
        requirements.append(IssuerIs(issuer or GITHUB_ISSUER))
        requirements.append(CertifiedRepositoryIs(repository_uri))
        if github_workflow:
            requirements.append(WorkflowIs(repository_uri, github_workflow.strip("/")))
        if github_ref:
            requirements.append(CertifiedRefIs(github_ref))
    if not requirements:
        return None
    return SignerIdentity(tuple(_unique(requirements)))


def _unique(items: Sequence[CertificateRequirement]) -> list[CertificateRequirement]:
    seen: list[CertificateRequirement] = []
    for item in items:
        if item not in seen:
            seen.append(item)
    return seen
