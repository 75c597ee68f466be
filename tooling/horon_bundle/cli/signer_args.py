"""Command-line options naming the expected signer and the trust root (verify, build)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from horon_bundle.cli.argtypes import named_path
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.verify.trust_choice import PINNED, PRODUCTION, STAGING, TrustChoice

if TYPE_CHECKING:  # imported only when a signer is named (start-up of a plain verify)
    from horon_bundle.model.signer_identity import SignerIdentity
    from horon_bundle.verify.signature import SignatureVerifier

SIGNER_OPTIONS = ("identity", "issuer", "github_repository", "github_workflow", "github_ref")


def add_signer_arguments(parser: Any, *, what: str) -> None:
    group = parser.add_argument_group(
        "signature", f"who must have signed {what} (checked offline against a pinned root)")
    group.add_argument("--identity", metavar="SAN",
                       help="the certificate identity (SAN): an e-mail or URI")
    group.add_argument("--issuer", metavar="URL",
                       help="the OIDC issuer URL that vouched for --identity")
    group.add_argument("--github-repository", metavar="OWNER/REPO",
                       help="signed by a GitHub Actions workflow of this repository")
    group.add_argument("--github-workflow", metavar="PATH",
                       help="… started by this workflow file (e.g. .github/workflows/release.yml)")
    group.add_argument("--github-ref", metavar="REF",
                       help="… for this git ref (e.g. refs/tags/v1.2.0)")
    roots = group.add_mutually_exclusive_group()
    roots.add_argument("--trust-root", type=named_path, metavar="FILE",
                       help="pin this Sigstore trusted_root.json (default: the production root "
                            "shipped with sigstore)")
    roots.add_argument("--staging", action="store_true",
                       help="use Sigstore's staging root shipped with sigstore")


def identity_from_args(args: argparse.Namespace) -> SignerIdentity | None:
    if all(getattr(args, name) is None for name in SIGNER_OPTIONS):
        return None  # what signer_identity says of no option at all, without its models
    from horon_bundle.model.signer_identity import signer_identity  # noqa: PLC0415 - start-up

    return signer_identity(identity=args.identity, issuer=args.issuer,
                           github_repository=args.github_repository,
                           github_workflow=args.github_workflow, github_ref=args.github_ref,
                           where="command line")


def trust_from_args(args: argparse.Namespace) -> TrustChoice:
    if args.trust_root is not None:
        return TrustChoice(PINNED, args.trust_root)
    return TrustChoice(STAGING if args.staging else PRODUCTION)


def required_signer(args: argparse.Namespace, *,
                    flag: str) -> tuple[SignerIdentity, TrustChoice] | None:
    """The signer a `flag` (e.g. --require-signature) asks for, or None when it is off.

    Signer options without the flag, or the flag without a signer, are usage errors.
    """
    identity = identity_from_args(args)
    trust = trust_from_args(args)
    if not getattr(args, flag.lstrip("-").replace("-", "_")):
        if identity is not None or trust.kind != PRODUCTION:
            raise Refused.one(codes.SIGNATURE_OPTIONS, f"signer options given without {flag}")
        return None
    if identity is None:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          f"{flag} needs the expected signer: --identity and --issuer, or "
                          "--github-repository")
    return identity, trust


def record_signer_from_args(args: argparse.Namespace) -> SignatureVerifier | None:
    """`build --require-signed-record`: the verifier for REC.sigstore.json, or None."""
    wanted = required_signer(args, flag="--require-signed-record")
    if wanted is None:
        return None
    identity, trust = wanted
    from horon_bundle.verify.signature import SignatureVerifier  # noqa: PLC0415 - start-up
    from horon_bundle.verify.trust import load_trust  # noqa: PLC0415

    return SignatureVerifier(trust=load_trust(trust), identity=identity)
