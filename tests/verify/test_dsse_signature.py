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

from horon_bundle.model.signer_identity import signer_identity
from horon_bundle.verify.signature import (
    IN_TOTO_PAYLOAD_TYPE,
    SignatureVerifier,
    verify_statement,
)
from horon_bundle.verify.trust import (
    PINNED,
    PRODUCTION,
    PRODUCTION_TUF_URL,
    STAGING,
    STAGING_TUF_URL,
    TrustChoice,
    load_trust,
)
from tests.helpers import REPO
from tests.sigstore_synthetic import (
    SYNTHETIC_ISSUER,
    SYNTHETIC_SIGNER,
    SyntheticInstance,
    make_instance,
)

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


# --- each refusal is the provenance check's, with its code (mutation testing) -------------------

def _shipped(url: str) -> dict[str, object]:
    document = json.loads(importlib.resources.files("sigstore._store").joinpath(
        quote(url, safe="")).joinpath("trusted_root.json").read_bytes())
    assert isinstance(document, dict)
    return document


def _refusal(check: object) -> tuple[str, str, list[str]]:
    return getattr(check, "name", ""), getattr(check, "status", ""), _codes(check)


@pytest.mark.disable_socket
def test_every_refusal_is_the_provenance_check() -> None:
    other_signer = verify_statement(DSSE, STATEMENT_SHA256, _verifier(identity={
        "identity": IDENTITY, "issuer": "https://accounts.google.com"}))
    assert _refusal(other_signer) == ("signature.provenance", "fail", ["signature.issuer"])
    other_digest = verify_statement(DSSE, "0" * 64, _verifier())
    assert _refusal(other_digest) == ("signature.provenance", "fail", ["signature.invalid"])


@pytest.mark.disable_socket
def test_a_malformed_provenance_signature_fails_the_check(tmp_path: Path) -> None:
    signature = tmp_path / "a.zip.provenance.sigstore.json"
    signature.write_text(DSSE.read_text().replace("{", '{"mediaType": "x", ', 1))
    check = verify_statement(signature, STATEMENT_SHA256, _verifier())
    assert _refusal(check) == ("signature.provenance", "fail", ["json.duplicate-key"])
    signature.write_text("[]")
    check = verify_statement(signature, STATEMENT_SHA256, _verifier())
    assert _refusal(check) == ("signature.provenance", "fail", ["signature.invalid"])


@pytest.mark.disable_socket
def test_a_certificate_outside_the_pinned_root_is_signature_trust_root(tmp_path: Path) -> None:
    """Staging's logs and timestamp authority with production's Fulcio: the times verify, the
    certificate chain does not."""
    mixed = _shipped(STAGING_TUF_URL)
    mixed["certificateAuthorities"] = _shipped(PRODUCTION_TUF_URL)["certificateAuthorities"]
    root = tmp_path / "trusted_root.json"
    root.write_text(json.dumps(mixed))
    check = verify_statement(DSSE, STATEMENT_SHA256, _verifier(PINNED, root))
    assert _refusal(check) == ("signature.provenance", "fail", ["signature.trust-root"])
    assert check.findings[0].message.startswith(
        f"{DSSE.name}: the certificate does not chain to the pinned trust root {root}: ")


def _with_entry_kind(tmp_path: Path, kind: str) -> Path:
    """The bundle with its log entry's kind replaced (not covered by the entry's proofs, so
    sigstore gets as far as refusing the kind, naming it)."""
    document = json.loads(DSSE.read_text())
    document["verificationMaterial"]["tlogEntries"][0]["kindVersion"]["kind"] = kind
    path = tmp_path / "a.zip.provenance.sigstore.json"
    path.write_text(json.dumps(document))
    return path


@pytest.mark.disable_socket
def test_a_long_reason_is_cut_to_300_characters(tmp_path: Path) -> None:
    prefix = "a.zip.provenance.sigstore.json: does not verify: "
    # sigstore's line: "Unsupported DSSE log entry type: <kind>/0.0.2", 33 + len(kind) + 6
    for kind, line in (("k" * 261, "Unsupported DSSE log entry type: " + "k" * 261 + "/0.0.2"),
                       ("k" * 262, "Unsupported DSSE log entry type: " + "k" * 262 + "/0...")):
        check = verify_statement(_with_entry_kind(tmp_path, kind), STATEMENT_SHA256,
                                 _verifier())
        assert _refusal(check) == ("signature.provenance", "fail", ["signature.invalid"])
        assert check.findings[0].message == prefix + line
        assert len(line) == 300


# --- a DSSE envelope over another payload type: a synthetic, private Sigstore instance ---------
# No real signer signs anything but in-toto statements, and the payload type is covered by the
# DSSE signature, so the one way to reach that refusal offline is an instance of our own: a CA,
# a CT log and a Rekor log, each with a key made here, in a pinned trusted_root.json, and a
# bundle whose certificate, SCT, DSSE signature, log entry, inclusion proof, checkpoint and
# SET are all really signed (RFC 6962 for the SCT, the C2SP signed note for the checkpoint).
# sigstore verifies it as it would any other; nothing is stubbed.

@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> SyntheticInstance:
    return make_instance(tmp_path_factory.mktemp("synthetic-sigstore"))


def _synthetic_verifier(instance: SyntheticInstance) -> SignatureVerifier:
    return _verifier(PINNED, instance.root,
                     identity={"identity": SYNTHETIC_SIGNER, "issuer": SYNTHETIC_ISSUER})


@pytest.mark.disable_socket
def test_a_synthetic_in_toto_envelope_verifies(synthetic: SyntheticInstance,
                                               tmp_path: Path) -> None:
    """The instance is sound: an in-toto statement it signs passes, as the real one does."""
    signature = synthetic.sign(IN_TOTO_PAYLOAD_TYPE, _statement(), tmp_path / "a.sigstore.json")
    check = verify_statement(signature, STATEMENT_SHA256, _synthetic_verifier(synthetic))
    assert (check.name, check.status, _codes(check)) == ("signature.provenance", "pass", [])


@pytest.mark.disable_socket
def test_an_envelope_over_another_payload_type_is_signature_invalid(
        synthetic: SyntheticInstance, tmp_path: Path) -> None:
    """Signed by the right signer over the very statement, but as another payload type."""
    signature = synthetic.sign("application/json", _statement(),
                               tmp_path / "a.zip.provenance.sigstore.json")
    check = verify_statement(signature, STATEMENT_SHA256, _synthetic_verifier(synthetic))
    assert _refusal(check) == ("signature.provenance", "fail", ["signature.invalid"])
    assert check.findings[0].message == (
        "a.zip.provenance.sigstore.json: payload type 'application/json'")


@pytest.mark.disable_socket
def test_a_certificate_of_an_unknown_x509_version_fails_the_check(tmp_path: Path) -> None:
    """cryptography's InvalidVersion is no ValueError: it was an internal error (exit 4)."""
    document = json.loads(DSSE.read_text())
    material = document["verificationMaterial"]["certificate"]
    der = base64.b64decode(material["rawBytes"])
    assert der[8:13] == bytes.fromhex("a003020102")  # version v3
    material["rawBytes"] = base64.b64encode(der[:12] + b"\x03" + der[13:]).decode()
    signature = tmp_path / "a.zip.provenance.sigstore.json"
    signature.write_text(json.dumps(document))
    check = verify_statement(signature, STATEMENT_SHA256, _verifier())
    assert _refusal(check) == ("signature.provenance", "fail", ["signature.invalid"])
