"""A private Sigstore instance for offline tests: a CA, a CT log and a Rekor log, each with a
key made here, in a pinned trusted_root.json, and bundles whose certificate, SCT, DSSE
signature, log entry, inclusion proof, checkpoint and SET are all really signed (RFC 6962 for
the SCT, the C2SP signed note for the checkpoint). sigstore verifies them as it would any
other; nothing is stubbed. Used by the payload-type tests (tests/verify/test_dsse_signature.py)
and the release-statement signing tests (tests/sign/test_release_statement.py)."""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import rfc8785
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, ExtensionOID, NameOID

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


def make_instance(directory: Path) -> SyntheticInstance:
    """A fresh instance whose trusted_root.json is written into `directory`."""
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

    root = directory / "trusted_root.json"
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
