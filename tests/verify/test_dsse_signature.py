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
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from urllib.parse import quote

import pytest
import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

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

SYNTHETIC_TIME = datetime(2025, 1, 1, tzinfo=timezone.utc)
SYNTHETIC_SIGNER = "provenance@example.com"
SYNTHETIC_ISSUER = "https://issuer.example.com"


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _spki(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)


def _octet_string(content: bytes) -> bytes:
    size = len(content)
    length = bytes([size]) if size < 0x80 else bytes([0x82]) + size.to_bytes(2, "big")
    return b"\x04" + length + content


@dataclass(frozen=True)
class SyntheticInstance:
    root: Path
    signing_key: ec.EllipticCurvePrivateKey
    certificate: x509.Certificate
    log_key: ec.EllipticCurvePrivateKey

    def sign(self, payload_type: str, payload: bytes, path: Path) -> Path:
        """A bundle as `sign` writes it: DSSE envelope, certificate, dsse/0.0.1 log entry."""
        pae = b"DSSEv1 %d %s %d %s" % (len(payload_type), payload_type.encode(), len(payload),
                                        payload)
        signature = self.signing_key.sign(pae, ec.ECDSA(hashes.SHA256()))
        envelope = {"payload": _b64(payload), "payloadType": payload_type,
                    "signatures": [{"sig": _b64(signature)}]}
        pem = self.certificate.public_bytes(serialization.Encoding.PEM)
        body = rfc8785.dumps({"apiVersion": "0.0.1", "kind": "dsse", "spec": {
            "envelopeHash": {"algorithm": "sha256",
                             "value": hashlib.sha256(json.dumps(envelope).encode()).hexdigest()},
            "payloadHash": {"algorithm": "sha256", "value": hashlib.sha256(payload).hexdigest()},
            "signatures": [{"signature": _b64(signature), "verifier": _b64(pem)}]}})
        log_id = hashlib.sha256(_spki(self.log_key)).digest()
        leaf = hashlib.sha256(b"\x00" + body).digest()  # a tree of one entry: the root is it
        note = f"synthetic.example.com\n1\n{_b64(leaf)}\n"
        note_signature = self.log_key.sign(note.encode(), ec.ECDSA(hashes.SHA256()))
        integrated = int(SYNTHETIC_TIME.timestamp())
        promise = self.log_key.sign(rfc8785.dumps({
            "body": _b64(body), "integratedTime": integrated, "logID": log_id.hex(),
            "logIndex": 0}), ec.ECDSA(hashes.SHA256()))
        path.write_text(json.dumps({
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {
                "certificate": {"rawBytes": _b64(self.certificate.public_bytes(
                    serialization.Encoding.DER))},
                "tlogEntries": [{
                    "logIndex": "0", "logId": {"keyId": _b64(log_id)},
                    "kindVersion": {"kind": "dsse", "version": "0.0.1"},
                    "integratedTime": str(integrated), "canonicalizedBody": _b64(body),
                    "inclusionPromise": {"signedEntryTimestamp": _b64(promise)},
                    "inclusionProof": {
                        "logIndex": "0", "rootHash": _b64(leaf), "treeSize": "1", "hashes": [],
                        "checkpoint": {"envelope": note + "\n\u2014 synthetic.example.com "
                                                   f"{_b64(log_id[:4] + note_signature)}\n"}}}]},
            "dsseEnvelope": envelope}))
        return path


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory: pytest.TempPathFactory) -> SyntheticInstance:
    ca_key, ct_key, log_key, signing_key = (ec.generate_private_key(ec.SECP256R1())
                                            for _ in range(4))
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "synthetic CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name)
          .public_key(ca_key.public_key()).serial_number(1)
          .not_valid_before(SYNTHETIC_TIME - timedelta(days=1))
          .not_valid_after(SYNTHETIC_TIME + timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
          .add_extension(x509.KeyUsage(False, False, False, False, False, True, True,
                                       False, False), critical=True)
          .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()),
                         critical=False)
          .sign(ca_key, hashes.SHA256()))
    leaf = (x509.CertificateBuilder().subject_name(x509.Name([])).issuer_name(ca_name)
            .public_key(signing_key.public_key()).serial_number(2)
            .not_valid_before(SYNTHETIC_TIME - timedelta(minutes=5))
            .not_valid_after(SYNTHETIC_TIME + timedelta(minutes=5))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(True, False, False, False, False, False, False,
                                         False, False), critical=True)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CODE_SIGNING]),
                           critical=False)
            .add_extension(x509.SubjectAlternativeName([x509.RFC822Name(SYNTHETIC_SIGNER)]),
                           critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(
                ca_key.public_key()), critical=False)
            .add_extension(x509.UnrecognizedExtension(
                x509.ObjectIdentifier("1.3.6.1.4.1.57264.1.1"), SYNTHETIC_ISSUER.encode()),
                critical=False))
    # RFC 6962 3.2: the CT log signs the precertificate's TBS (the certificate without the SCT
    # list), which is the same whatever SCT is added afterwards.
    precertificate = leaf.sign(ca_key, hashes.SHA256()).tbs_certificate_bytes
    millis = int(SYNTHETIC_TIME.timestamp()) * 1000
    signed = (struct.pack(">BBQH", 0, 0, millis, 1) + hashlib.sha256(_spki(ca_key)).digest()
              + len(precertificate).to_bytes(3, "big") + precertificate + b"\x00\x00")
    sct_signature = ct_key.sign(signed, ec.ECDSA(hashes.SHA256()))
    sct = (b"\x00" + hashlib.sha256(_spki(ct_key)).digest() + struct.pack(">QH", millis, 0)
           + struct.pack(">BBH", 4, 3, len(sct_signature)) + sct_signature)
    certificate = leaf.add_extension(x509.UnrecognizedExtension(
        ExtensionOID.PRECERT_SIGNED_CERTIFICATE_TIMESTAMPS,
        _octet_string(struct.pack(">HH", len(sct) + 2, len(sct)) + sct)),
        critical=False).sign(ca_key, hashes.SHA256())
    assert certificate.tbs_precertificate_bytes == precertificate

    def log(key: ec.EllipticCurvePrivateKey, url: str) -> dict[str, object]:
        return {"baseUrl": url, "hashAlgorithm": "SHA2_256",
                "logId": {"keyId": _b64(hashlib.sha256(_spki(key)).digest())},
                "publicKey": {"rawBytes": _b64(_spki(key)), "keyDetails": "PKIX_ECDSA_P256_SHA_256",
                              "validFor": {"start": "2024-01-01T00:00:00Z"}}}

    root = tmp_path_factory.mktemp("synthetic-sigstore") / "trusted_root.json"
    root.write_text(json.dumps({
        "mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
        "tlogs": [log(log_key, "https://rekor.synthetic.example.com")],
        "ctlogs": [log(ct_key, "https://ct.synthetic.example.com")],
        "certificateAuthorities": [{
            "subject": {"organization": "synthetic", "commonName": "synthetic CA"},
            "uri": "https://ca.synthetic.example.com",
            "certChain": {"certificates": [{"rawBytes": _b64(ca.public_bytes(
                serialization.Encoding.DER))}]},
            "validFor": {"start": "2024-01-01T00:00:00Z"}}]}))
    return SyntheticInstance(root, signing_key, certificate, log_key)


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
    material["rawBytes"] = _b64(der[:12] + b"\x03" + der[13:])
    signature = tmp_path / "a.zip.provenance.sigstore.json"
    signature.write_text(json.dumps(document))
    check = verify_statement(signature, STATEMENT_SHA256, _verifier())
    assert _refusal(check) == ("signature.provenance", "fail", ["signature.invalid"])
