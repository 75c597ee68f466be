"""The provenance-signature (DSSE) success path, with a real Sigstore DSSE bundle, offline.

`tests/data/sigstore/conformance-beacon-dsse.staging.sigstore.json` is a DSSE envelope over an
in-toto statement signed on Sigstore's staging instance by the sigstore-conformance OIDC
beacon workflow (GitHub Actions), logged in a Rekor v2 log and timestamped by the staging TSA
(see tests/data/sigstore/README.md). It goes through `verify_statement` exactly as a bundle's
`<archive>.provenance.sigstore.json` does, with sockets disabled: the right signer and the
statement's digest pass; another digest, another signer, another issuer and another root are
each refused with their own code.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.resources
import json
from pathlib import Path
from urllib.parse import quote

import pytest

from horon_bundle.model.signer import signer_identity
from horon_bundle.verify.signature import SignatureVerifier, verify_statement
from horon_bundle.verify.trust import (
    PINNED,
    PRODUCTION,
    STAGING,
    STAGING_TUF_URL,
    TrustChoice,
    load_trust,
)
from tests.helpers import REPO

DSSE = REPO / "tests" / "data" / "sigstore" / "conformance-beacon-dsse.staging.sigstore.json"
REPOSITORY = "sigstore-conformance/extremely-dangerous-public-oidc-beacon"
WORKFLOW = ".github/workflows/extremely-dangerous-oidc-beacon.yml"
IDENTITY = f"https://github.com/{REPOSITORY}/{WORKFLOW}@refs/heads/main"
ISSUER = "https://token.actions.githubusercontent.com"


def _statement() -> bytes:
    envelope = json.loads(DSSE.read_text())["dsseEnvelope"]
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    return base64.b64decode(envelope["payload"])


STATEMENT_SHA256 = hashlib.sha256(_statement()).hexdigest()


def _verifier(kind: str = STAGING, path: Path | None = None, *,
              identity: dict[str, str] | None = None) -> SignatureVerifier:
    wanted = signer_identity(**(identity or {"identity": IDENTITY, "issuer": ISSUER}))
    assert wanted is not None
    return SignatureVerifier(trust=load_trust(TrustChoice(kind, path)), identity=wanted)


def _codes(check: object) -> list[str]:
    return [f.code.name for f in getattr(check, "findings", [])]


def test_the_asset_is_what_the_readme_says() -> None:
    statement = json.loads(_statement())
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    assert hashlib.sha256(DSSE.read_bytes()).hexdigest() == (
        "56e79ba9f94a34aba285769574c456601f38beeaa48a3acb67f8d5db706f9420")


@pytest.mark.disable_socket
def test_a_real_dsse_bundle_verifies_offline_with_identity_and_issuer() -> None:
    check = verify_statement(DSSE, STATEMENT_SHA256, _verifier())
    assert (check.name, check.status, _codes(check)) == ("signature.provenance", "pass", [])
    assert check.note == "DSSE envelope over provenance.json"


@pytest.mark.disable_socket
def test_a_real_dsse_bundle_verifies_with_github_requirements() -> None:
    check = verify_statement(DSSE, STATEMENT_SHA256, _verifier(identity={
        "github_repository": REPOSITORY, "github_workflow": WORKFLOW,
        "github_ref": "refs/heads/main"}))
    assert check.status == "pass", check.findings


@pytest.mark.disable_socket
def test_a_real_dsse_bundle_verifies_against_the_same_root_pinned(tmp_path: Path) -> None:
    root = tmp_path / "trusted_root.json"
    root.write_bytes(importlib.resources.files("sigstore._store").joinpath(
        quote(STAGING_TUF_URL, safe="")).joinpath("trusted_root.json").read_bytes())
    check = verify_statement(DSSE, STATEMENT_SHA256, _verifier(PINNED, root))
    assert check.status == "pass", check.findings


@pytest.mark.disable_socket
def test_another_statement_digest_is_signature_invalid() -> None:
    check = verify_statement(DSSE, "0" * 64, _verifier())
    assert _codes(check) == ["signature.invalid"]
    assert f"signs a statement with sha256 {STATEMENT_SHA256}" in check.findings[0].message


@pytest.mark.disable_socket
@pytest.mark.parametrize(("identity", "code"), [
    ({"identity": "https://github.com/acme/example/.github/workflows/release.yml@refs/heads/main",
      "issuer": ISSUER}, "signature.identity"),
    ({"identity": IDENTITY, "issuer": "https://accounts.google.com"}, "signature.issuer"),
    ({"github_repository": "acme/example"}, "signature.identity"),
])
def test_another_signer_is_refused_with_its_code(identity: dict[str, str], code: str) -> None:
    check = verify_statement(DSSE, STATEMENT_SHA256, _verifier(identity=identity))
    assert _codes(check) == [code]


@pytest.mark.disable_socket
def test_the_production_root_does_not_anchor_a_staging_signature() -> None:
    check = verify_statement(DSSE, STATEMENT_SHA256, _verifier(PRODUCTION))
    assert check.status == "fail"
    assert _codes(check)[0] in {"signature.trust-root", "signature.invalid"}
