"""What `verify` checks beyond the bundle's own bytes: its signature and the auditor's policy.

`audit_path` = `verify_path` (every rule of the bundle format) + the signature checks
(`signature.*`, archives only: signatures cover `<archive>.sigstore.json`) + one check per
policy key (`policy.*`), all on the same report. The harness judge (`verify.route`) adds the
same signature and policy checks through `audit_signature` and `judge_policy`. Everything
runs offline: the trust root is pinned (`verify.trust`), nothing is fetched.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.sidefiles import SIGNATURE_SUFFIX, beside
from horon_bundle.verify.reading.interface import BundleSource
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.trust_choice import PRODUCTION, TrustChoice

if TYPE_CHECKING:  # the policy's rules are imported only when a policy is given, the
    # signature checks (and the signer's models) only when a signer is named (start-up)
    from horon_bundle.model.harness.statement import HarnessFacts
    from horon_bundle.model.manifest import Manifest
    from horon_bundle.model.provenance import BuildFacts
    from horon_bundle.model.signer_identity import SignerIdentity
    from horon_bundle.rules.policy import Policy
    from horon_bundle.verify.signature import SignatureResult, SignatureVerifier


@dataclass(frozen=True, slots=True, kw_only=True)
class AuditOptions:
    verifier: SignatureVerifier | None = None
    require_signature: bool = False
    policy: Policy | None = None


def audit_options(*, identity: SignerIdentity | None, trust: TrustChoice,
                  require_signature: bool, policy: Policy | None) -> AuditOptions:
    """Merge the command line with the policy; refuse what cannot be meant (exit 2)."""
    if identity is not None and policy is not None and policy.signer is not None:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          f"the signer is named both on the command line and in "
                          f"{policy.source} [signer]; name it in one place")
    signer = identity or (policy.signer if policy is not None else None)
    required = require_signature or (policy is not None and policy.require_signature)
    if required and signer is None:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          "a signature is required but no signer is named: a signature from "
                          "anyone proves nothing")
    if signer is None and trust.kind != PRODUCTION:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          f"{trust.label} given but no signer named, so no signature is checked")
    verifier = None
    if signer is not None:
        from horon_bundle.verify.signature import SignatureVerifier  # noqa: PLC0415 - start-up
        from horon_bundle.verify.trust import load_trust  # noqa: PLC0415

        verifier = SignatureVerifier(trust=load_trust(trust), identity=signer)
    return AuditOptions(verifier=verifier, require_signature=required, policy=policy)


def audit_path(path: Path, options: AuditOptions, *, opened: BundleSource | None = None,
               report: VerifyReport | None = None, archive_digest: bool = False) -> VerifyReport:
    """Verify a bundle directory or archive, then its signature and the policy.

    With `opened` (the bundle already opened once, by a caller that had to look inside to
    route it), those same files are judged into `report`, with no second walk.
    `archive_digest` hashes an archive from the very bytes judged (`report.archive_digest`),
    as a signature check does anyway."""
    # the native judge only for a native bundle: a harness verify never loads it
    from horon_bundle.verify.judge import verify_opened, verify_path  # noqa: PLC0415

    patterns = options.policy.qa_patterns if options.policy is not None else ()
    wants_digest = archive_digest or options.verifier is not None
    if opened is None:
        report = verify_path(path, qa_patterns=patterns, archive_digest=wants_digest)
    else:
        report = verify_opened(opened, report or VerifyReport(path=str(path)),
                               qa_patterns=patterns, archive_digest=wants_digest)
    manifest = report.manifest
    asset = manifest.asset("provenance") if manifest is not None else None
    statement = (report.digests[asset.file.path].sha256
                 if asset is not None and asset.file.path in report.digests else None)
    signature = audit_signature(path, report, options, statement_sha256=statement)
    judge_policy(report, options, signature, manifest=manifest,
                 facts=report.provenance.facts if report.provenance is not None else None,
                 advertised_source=report.advertised_source)
    return report


def judge_policy(report: VerifyReport, options: AuditOptions,
                 signature: SignatureResult | None, *, manifest: Manifest | None,
                 facts: BuildFacts | HarnessFacts | None,
                 kind: BundleKind = BundleKind.NATIVE,
                 advertised_source: str | None = None) -> None:
    """One `policy.*` check per key of the policy, on the facts the judge read."""
    if options.policy is None:
        return
    from horon_bundle.rules.policy_requirements import Subject  # noqa: PLC0415 - start-up

    subject = Subject(
        manifest=manifest, facts=facts, kind=kind,
        signature_present=signature is not None and any(
            c.name == "signature.present" and c.status == "pass" for c in signature.checks),
        signature_verified=signature is not None and signature.verified,
        certified=signature.certified if signature is not None else None,
        advertised_source=advertised_source)
    report.checks.extend(options.policy.checks(subject))


def _signature_path(archive: Path) -> Path:
    """verify.signature's `signature_path`, without loading the signature checks."""
    return beside(archive, SIGNATURE_SUFFIX)


def audit_signature(path: Path, report: VerifyReport, options: AuditOptions, *,
                    statement_sha256: str | None) -> SignatureResult | None:
    """`<archive>.sigstore.json` over the archive's SHA-256 and, when present,
    `<archive>.provenance.sigstore.json` over the provenance statement (`statement_sha256`),
    as checks on `report`; None when no signature was checked."""
    verifier = options.verifier
    if options.verifier is not None:
        report.notes.append(f"trust root: {options.verifier.trust.description}")
    if verifier is None:
        present = path.is_file() and _signature_path(path).is_file()
        report.skipped("signature.present",
                    f"{_signature_path(path).name} present, not checked: name the signer "
                    "(--identity/--issuer or --github-repository)" if present
                    else "not checked: no signer named")
        return None
    if not path.is_file():
        why = "signatures cover archives: verify the .zip next to the bundle directory"
        if options.require_signature:
            report.judged("signature.present",
                         [Finding(codes.SIGNATURE_MISSING, f"{path.name}: {why}")])
        else:
            report.skipped("signature.present", why)
        return None
    from horon_bundle.verify.signature import (  # noqa: PLC0415 - only with a signer named
        provenance_signature_path,
        verify_file,
        verify_statement,
    )

    result = verify_file(path, verifier, required=options.require_signature,
                         digest=report.archive_digest)
    report.checks.extend(result.checks)
    statement_signature = provenance_signature_path(path)
    if os.path.lexists(statement_signature) and statement_sha256 is not None:
        report.checks.append(verify_statement(statement_signature, statement_sha256, verifier))
    return result
