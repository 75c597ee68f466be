"""`verify ARCHIVE --attestation FILE`: the archive is a subject of a signed release statement.

FILE is the Sigstore bundle `sign` wrote for a release statement (`<statement>.sigstore.json`)
or the statement itself, its bundle then read from beside it. The DSSE envelope is verified
offline against the pinned root with the required signer; the archive passes when its
SHA-256 is one of the signed statement's subjects (by digest, as `gh attestation verify`
matches: a renamed copy of the same bytes is the same archive).
"""

from __future__ import annotations

from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.model.checks import FAIL, PASS, Check
from horon_bundle.model.release_statement import STATEMENT_SUFFIX, parse_statement
from horon_bundle.model.sidefiles import SIGNATURE_SUFFIX
from horon_bundle.verify.signature import SignatureVerifier, verified_statement_payload

CHECK_NAME = "attestation.subject"


def attestation_bundle(path: Path) -> Path:
    """The Sigstore bundle of `--attestation PATH`."""
    return path.with_name(path.name + SIGNATURE_SUFFIX) \
        if path.name.endswith(STATEMENT_SUFFIX) else path


def check_attestation(archive_name: str, sha256: str, attestation: Path,
                      verifier: SignatureVerifier) -> Check:
    bundle = attestation_bundle(attestation)
    payload = verified_statement_payload(bundle, verifier)
    if isinstance(payload, list):
        return Check(CHECK_NAME, FAIL, payload)
    try:
        statement = parse_statement(payload, source=bundle.name)
    except Refused as exc:
        return Check(CHECK_NAME, FAIL, list(exc.findings))
    named = [name for name, digest in sorted(statement.subjects.items()) if digest == sha256]
    if not named:
        return Check(CHECK_NAME, FAIL, [Finding(
            codes.ATTESTATION_NOT_SUBJECT,
            f"{archive_name}: sha256 {sha256} is not a subject of the statement {bundle.name} "
            f"signs ({len(statement.subjects)} archives)")])
    return Check(CHECK_NAME, PASS, [], f"subject {named[0]} of {bundle.name}; signer: "
                                       f"{verifier.identity.describe()}")
