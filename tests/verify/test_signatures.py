"""Signature verification with real Sigstore data, offline, and `sign` without an identity.

The staging bundle in tests/data/sigstore/ verifies through our own code with sockets
disabled (pytest-socket); a changed byte, another identity, another issuer and the production
root are each refused with their own code. `sign` can only really sign in CI: here it must
stop at once with exit 3 and a hint, writing nothing.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.resources
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from sigstore.errors import VerificationError
from sigstore.models import Bundle
from sigstore.verify import Verifier, policy

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.model.signer_identity import (
    GITHUB_ISSUER,
    CertifiedSource,
    SignerIdentity,
    signer_identity,
)
from horon_bundle.sign import files as signing_files
from horon_bundle.sign import signer as signing
from horon_bundle.verify.signature import SignatureVerifier, require_signature, verify_file
from horon_bundle.verify.trust import (
    PINNED,
    PRODUCTION,
    PRODUCTION_TUF_URL,
    STAGING,
    STAGING_TUF_URL,
    TrustChoice,
    load_trust,
)
from tests.conftest import BuiltExample, Compiled
from tests.helpers import REPO, TEMPLATE, CliResult, assert_refused, cli, tree_snapshot

DATA = REPO / "tests" / "data" / "sigstore"
IDENTITY = "william@yossarian.net"
ISSUER = "https://github.com/login/oauth"
GITHUB_CERT_BUNDLE = DATA / "github-actions-npm-sigstore-3.1.0.sigstore.json"
CI_VARIABLES = ("GITHUB_ACTIONS", "ACTIONS_ID_TOKEN_REQUEST_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_URL",
                "SIGSTORE_IDENTITY_TOKEN", "GOOGLE_SERVICE_ACCOUNT_NAME", "BUILDKITE",
                "GITLAB_CI", "CIRCLECI", "SIGSTORE_ID_TOKEN")


def _shipped_root(url: str) -> bytes:
    return importlib.resources.files("sigstore._store").joinpath(
        quote(url, safe="")).joinpath("trusted_root.json").read_bytes()


@pytest.fixture
def signed_text(tmp_path: Path) -> Path:
    """The staging artifact with its bundle under the name `sign` writes."""
    artifact = tmp_path / "bundle_v3.txt"
    shutil.copyfile(DATA / "bundle_v3.txt", artifact)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / "bundle_v3.txt.sigstore.json")
    return artifact


def _verifier(kind: str = STAGING, *, identity: str = IDENTITY,
              issuer: str = ISSUER) -> SignatureVerifier:
    wanted = signer_identity(identity=identity, issuer=issuer)
    assert wanted is not None
    return SignatureVerifier(trust=load_trust(TrustChoice(kind)), identity=wanted)


def _results(artifact: Path, verifier: SignatureVerifier) -> dict[str, tuple[str, list[str]]]:
    result = verify_file(artifact, verifier, required=True)
    return {c.name: (c.status, [f.code.name for f in c.findings]) for c in result.checks}


@pytest.mark.disable_socket
def test_sockets_really_are_disabled_here() -> None:
    """pytest-socket under filterwarnings=error: a socket attempt raises (as a warning)."""
    with pytest.raises((RuntimeError, UserWarning)):
        socket.socket(socket.AF_INET, socket.SOCK_STREAM)


@pytest.mark.disable_socket
def test_staging_bundle_verifies_offline(signed_text: Path) -> None:
    assert _results(signed_text, _verifier()) == {
        "signature.present": ("pass", []), "signature.valid": ("pass", []),
        "signature.identity": ("pass", []), "signature.issuer": ("pass", [])}


@pytest.mark.disable_socket
def test_one_changed_byte_is_signature_invalid(signed_text: Path) -> None:
    data = bytearray(signed_text.read_bytes())
    data[0] ^= 0x01
    signed_text.write_bytes(bytes(data))
    results = _results(signed_text, _verifier())
    assert results["signature.valid"] == ("fail", ["signature.invalid"])
    assert results["signature.identity"] == ("pass", [])


@pytest.mark.disable_socket
def test_another_identity_is_signature_identity(signed_text: Path) -> None:
    results = _results(signed_text, _verifier(identity="mallory@example.com"))
    assert results["signature.identity"] == ("fail", ["signature.identity"])
    assert results["signature.issuer"] == ("pass", [])
    assert results["signature.valid"] == ("pass", [])  # the signature itself is sound


@pytest.mark.disable_socket
def test_another_issuer_is_signature_issuer(signed_text: Path) -> None:
    results = _results(signed_text, _verifier(issuer="https://accounts.google.com"))
    assert results["signature.issuer"] == ("fail", ["signature.issuer"])
    assert results["signature.identity"] == ("pass", [])


@pytest.mark.disable_socket
def test_production_root_refuses_a_staging_signature(signed_text: Path) -> None:
    results = _results(signed_text, _verifier(PRODUCTION))
    assert results["signature.valid"] == ("fail", ["signature.trust-root"])
    assert results["signature.identity"][0] == "skip"


@pytest.mark.disable_socket
def test_tampered_byte_and_wrong_identity_are_both_reported(signed_text: Path) -> None:
    signed_text.write_bytes(signed_text.read_bytes() + b"!")
    results = _results(signed_text, _verifier(identity="mallory@example.com"))
    assert results["signature.valid"] == ("fail", ["signature.invalid"])
    assert results["signature.identity"] == ("fail", ["signature.identity"])


@pytest.mark.disable_socket
def test_pinned_trust_root_file(signed_text: Path, tmp_path: Path) -> None:
    staging_root = load_trust(TrustChoice(STAGING))
    pinned = tmp_path / "trusted_root.json"
    pinned.write_bytes(_shipped_root(STAGING_TUF_URL))
    trust = load_trust(TrustChoice(PINNED, pinned))
    assert trust.sha256 == staging_root.sha256
    identity = signer_identity(identity=IDENTITY, issuer=ISSUER)
    assert identity is not None
    result = verify_file(signed_text, SignatureVerifier(trust=trust, identity=identity),
                         required=True)
    assert result.verified


@pytest.mark.disable_socket
def test_a_poisoned_user_cache_is_never_trusted(signed_text: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """sigstore's own offline production verifier reads the user's TUF cache unchecked; put
    the staging root where it looks and it accepts a staging signature as production. Ours
    reads the root shipped in the package and still refuses, touching nothing in the cache."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    poisoned = cache / "sigstore-python" / "tuf" / quote(PRODUCTION_TUF_URL, safe="")
    poisoned.mkdir(parents=True)
    (poisoned / "trusted_root.json").write_bytes(_shipped_root(STAGING_TUF_URL))
    bundle = Bundle.from_json((signed_text.parent / "bundle_v3.txt.sigstore.json").read_bytes())
    Verifier.production(offline=True).verify_artifact(  # sigstore alone: fooled
        signed_text.read_bytes(), bundle, policy.Identity(identity=IDENTITY, issuer=ISSUER))
    before = tree_snapshot(cache)

    results = _results(signed_text, _verifier(PRODUCTION))
    assert results["signature.valid"] == ("fail", ["signature.trust-root"])
    assert tree_snapshot(cache) == before


@pytest.mark.disable_socket
def test_malformed_and_ambiguous_signature_files(signed_text: Path) -> None:
    signature = signed_text.parent / "bundle_v3.txt.sigstore.json"
    document = json.loads(signature.read_text())
    document["mediaType"] = "application/vnd.dev.sigstore.bundle.v9+json"
    signature.write_text(json.dumps(document))
    assert _results(signed_text, _verifier())["signature.valid"] == (
        "fail", ["signature.invalid"])
    text = (DATA / "bundle_v3.txt.sigstore").read_text()
    signature.write_text(text.replace("{", '{"mediaType": "x", ', 1))
    assert _results(signed_text, _verifier())["signature.valid"] == (
        "fail", ["json.duplicate-key"])


def test_missing_signature(tmp_path: Path) -> None:
    artifact = tmp_path / "a.txt"
    artifact.write_bytes(b"a")
    required = verify_file(artifact, _verifier(), required=True)
    assert [(c.name, c.status) for c in required.checks] == [("signature.present", "fail")]
    assert required.findings[0].code.name == "signature.missing"
    optional = verify_file(artifact, _verifier(), required=False)
    assert [(c.name, c.status) for c in optional.checks] == [("signature.present", "skip")]


def _github_certificate() -> object:
    return Bundle.from_json(GITHUB_CERT_BUNDLE.read_bytes()).signing_certificate


@pytest.mark.parametrize(("options", "unmet"), [
    ({"github_repository": "sigstore/sigstore-js"}, []),
    ({"github_repository": "sigstore/sigstore-js",
      "github_workflow": ".github/workflows/release.yml", "github_ref": "refs/heads/main"}, []),
    ({"identity": "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml"
                  "@refs/heads/main", "issuer": "https://token.actions.githubusercontent.com"},
     []),
    ({"github_repository": "acme/sigstore-js"}, ["signature.identity"]),
    ({"github_repository": "sigstore/sigstore-js",
      "github_workflow": ".github/workflows/ci.yml"}, ["signature.identity"]),
    ({"github_repository": "sigstore/sigstore-js", "github_ref": "refs/tags/v3.1.0"},
     ["signature.identity"]),
    ({"github_repository": "sigstore/sigstore-js", "issuer": "https://gitlab.com"},
     ["signature.issuer"]),
])
def test_github_shorthands_on_a_real_actions_certificate(options: dict[str, str],
                                                         unmet: list[str]) -> None:
    """The shorthands read the Fulcio extensions of a real GitHub Actions certificate."""
    identity = signer_identity(**options)
    assert isinstance(identity, SignerIdentity)
    problems = identity.problems(_github_certificate())  # type: ignore[arg-type]
    assert [requirement.code.name for requirement, _ in problems] == unmet


def test_the_email_certificate_is_no_github_identity(signed_text: Path) -> None:
    identity = signer_identity(github_repository="sigstore/sigstore-js")
    assert identity is not None
    bundle = Bundle.from_json((signed_text.parent / "bundle_v3.txt.sigstore.json").read_bytes())
    codes = sorted(r.code.name for r, _ in identity.problems(bundle.signing_certificate))
    assert codes == ["signature.identity", "signature.issuer"]


@pytest.mark.parametrize("options", [
    {"identity": "a@example.com"},
    {"issuer": "https://github.com/login/oauth"},
    {"github_workflow": ".github/workflows/release.yml"},
    {"github_repository": "not a repository"},
    {"github_repository": "o/r", "github_ref": "v1.0.0"},
    {"identity": "a@example.com", "issuer": "http://insecure.example"},
])
def test_incomplete_signer_options_are_refused(options: dict[str, str]) -> None:
    with pytest.raises(Refused) as refused:
        signer_identity(**options)
    assert refused.value.codes() == ["signature.options"]
    assert refused.value.exit_status == 2


# --- the CLI: verify an archive's signature ---------------------------------------------------

def _archive_copy(example_release: BuiltExample, directory: Path) -> Path:
    archive = directory / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    return archive


@pytest.mark.cargo
def test_require_signature_on_an_unsigned_archive(example_release: BuiltExample,
                                                  tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    before = tree_snapshot(tmp_path)
    result = cli("verify", archive, "--require-signature", "--identity", IDENTITY,
                 "--issuer", ISSUER, "--json")
    assert_refused(result, "signature.missing")
    checks = {c["check"]: c["result"] for c in result.json()["checks"]}
    assert checks["signature.present"] == "fail"
    assert checks["integrity.sha256sums"] == "pass"
    assert tree_snapshot(tmp_path) == before


@pytest.mark.cargo
def test_a_signature_of_another_file_is_invalid_for_the_archive(example_release: BuiltExample,
                                                                tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / (archive.name + ".sigstore.json"))
    staging = cli("verify", archive, "--staging", "--identity", IDENTITY, "--issuer", ISSUER)
    assert_refused(staging, "signature.invalid")
    assert "does not verify" in staging.stderr
    production = cli("verify", archive, "--identity", IDENTITY, "--issuer", ISSUER)
    assert_refused(production, "signature.trust-root")


@pytest.mark.cargo
def test_unsigned_archive_without_a_requirement_verifies(example_release: BuiltExample) -> None:
    result = cli("verify", example_release.archive, "--identity", IDENTITY, "--issuer", ISSUER,
                 "--json")
    assert result.status == 0, result.stderr
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["signature.present"]["result"] == "skip"
    assert "not required" in checks["signature.present"]["note"]


@pytest.mark.parametrize(("args", "code"), [
    (("--identity", IDENTITY), "signature.options"),
    (("--require-signature",), "signature.options"),
    (("--staging",), "signature.options"),
    (("--trust-root", "/nonexistent/trusted_root.json", "--identity", IDENTITY,
      "--issuer", ISSUER), "input.unreadable"),
])
def test_verify_option_misuse_is_a_usage_error(tmp_path: Path, args: tuple[str, ...],
                                               code: str) -> None:
    archive = tmp_path / "x.zip"
    archive.write_bytes(b"not read")
    result = cli("verify", archive, *args)
    assert_refused(result, code, status=2 if code == "signature.options" else 1)


def test_a_malformed_trust_root_file_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "trusted_root.json"
    root.write_text('{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1"}')
    result = cli("verify", tmp_path / "x.zip", "--trust-root", root, "--identity", IDENTITY,
                 "--issuer", ISSUER)
    assert_refused(result, "signature.trust-root-file", status=2)


# --- build --require-signed-record ------------------------------------------------------------

@pytest.fixture
def compiled(compiled_example: Compiled) -> tuple[Path, Path]:
    """The example compiled once per run (conftest): its library and artifact record."""
    return compiled_example.library, compiled_example.record


def _prebuilt(out: Path, compiled: tuple[Path, Path], *args: str) -> CliResult:
    library, record = compiled
    return cli("build", TEMPLATE, "--out", out, "--prebuilt", library, "--record", record,
               "--require-signed-record", *args)


@pytest.mark.cargo
def test_an_unsigned_record_is_refused_before_anything_is_written(
        tmp_path: Path, compiled: tuple[Path, Path]) -> None:
    out = tmp_path / "out"
    result = _prebuilt(out, compiled, "--github-repository", "acme/example")
    assert_refused(result, "signature.missing")
    assert tree_snapshot(out) == {}


@pytest.mark.cargo
def test_a_record_with_a_foreign_signature_is_refused(tmp_path: Path,
                                                      compiled: tuple[Path, Path]) -> None:
    library, original = compiled
    record = tmp_path / "record.json"
    shutil.copyfile(original, record)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / "record.json.sigstore.json")
    out = tmp_path / "out"
    result = _prebuilt(out, (library, record), "--staging", "--identity", IDENTITY,
                       "--issuer", ISSUER)
    assert_refused(result, "signature.invalid")
    other_signer = _prebuilt(out, (library, record), "--staging", "--identity",
                             "mallory@example.com", "--issuer", ISSUER)
    assert_refused(other_signer, "signature.identity")
    assert "signature.invalid" in other_signer.codes
    assert tree_snapshot(out) == {}


def test_signer_options_need_require_signed_record(tmp_path: Path) -> None:
    result = cli("build", TEMPLATE, "--out", tmp_path / "out", "--identity", IDENTITY,
                 "--issuer", ISSUER)
    assert_refused(result, "signature.options", status=2)
    assert not (tmp_path / "out").exists()


# --- sign -------------------------------------------------------------------------------------

def _without_ci() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CI_VARIABLES}
    env["GITHUB_ACTIONS"] = ""
    return env


def _sign(*args: str | Path, env: dict[str, str]) -> CliResult:
    """`sign` in a child with exactly `env`; the timeout guards against a hang."""
    done = subprocess.run([sys.executable, "-m", "horon_bundle", "sign", *map(str, args)],
                          env={**env, "COLUMNS": "200"}, capture_output=True, text=True,
                          timeout=60, check=False)
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.cargo
def test_sign_without_an_identity_exits_3_quickly(example_release: BuiltExample,
                                                  tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    before = tree_snapshot(tmp_path)
    started = time.monotonic()
    result = _sign(archive, env=_without_ci())
    elapsed = time.monotonic() - started
    assert_refused(result, "signing.no-identity", status=3)
    assert "id-token: write" in result.stderr
    assert "outside CI" in result.stderr
    assert elapsed < 30, elapsed
    assert tree_snapshot(tmp_path) == before


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.cargo
def test_sign_in_actions_without_id_token_permission(example_release: BuiltExample,
                                                     tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    env = _without_ci()
    env["GITHUB_ACTIONS"] = "true"
    result = _sign(archive, env=env)
    assert_refused(result, "signing.no-identity", status=3)
    assert "id-token: write" in result.stderr
    assert not (tmp_path / (archive.name + ".sigstore.json")).exists()


@pytest.mark.slow
@pytest.mark.process
@pytest.mark.cargo
def test_sign_with_an_unusable_token(example_release: BuiltExample, tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    env = _without_ci()
    env["SIGSTORE_IDENTITY_TOKEN"] = "not-a-jwt"  # noqa: S105 - a deliberately unusable token
    result = _sign(archive, env=env)
    assert_refused(result, "signing.no-identity", status=3)
    assert "not usable" in result.stderr


@pytest.mark.process
@pytest.mark.cargo
def test_sign_refuses_inputs_before_asking_for_an_identity(example_release: BuiltExample,
                                                           tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    other = tmp_path / "notes.txt"
    other.write_text("not a bundle")
    before = tree_snapshot(tmp_path)
    result = _sign(archive, other, env=_without_ci())
    assert_refused(result, "signing.input")
    assert "signing.no-identity" not in result.codes
    assert tree_snapshot(tmp_path) == before


@pytest.mark.process
@pytest.mark.cargo
def test_sign_refuses_an_archive_that_does_not_verify(example_release: BuiltExample,
                                                      tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    before = tree_snapshot(tmp_path)
    result = _sign(archive, env=_without_ci())
    assert_refused(result, "signing.input")
    assert tree_snapshot(tmp_path) == before


class _RecordingSigner(signing.Signer):
    """Stands in for Fulcio and Rekor, which cannot be reached here: records what it is
    asked to sign and answers with a marker document."""

    def __init__(self) -> None:
        self.digests: list[str] = []
        self.statements: list[bytes] = []

    @property
    def identity(self) -> str:
        return "test"

    def sign_digest(self, digest: Digest) -> bytes:
        self.digests.append(digest.sha256)
        return json.dumps({"signed": digest.sha256}).encode()

    def sign_statement(self, statement: bytes) -> bytes:
        self.statements.append(statement)
        return b'{"statement": true}'


@pytest.mark.cargo
def test_sign_files_writes_signatures_beside_each_input(example_release: BuiltExample,
                                                        compiled: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    record = tmp_path / "record.json"
    shutil.copyfile(compiled[1], record)
    signer = _RecordingSigner()
    signed = signing_files.sign_files(signing_files.prepare([archive, record]), signer)
    assert [s.kind for s in signed] == ["archive", "record"]
    assert signer.digests == [hashlib.sha256(archive.read_bytes()).hexdigest(),
                              hashlib.sha256(record.read_bytes()).hexdigest()]
    provenance = (example_release.bundle / "provenance.json").read_bytes()
    assert signer.statements == [provenance]
    assert json.loads((tmp_path / (archive.name + ".sigstore.json")).read_text()) == {
        "signed": signer.digests[0]}
    assert (tmp_path / (archive.name + ".provenance.sigstore.json")).is_file()
    assert (tmp_path / "record.json.sigstore.json").is_file()
    assert not (tmp_path / "record.json.provenance.sigstore.json").exists()


@pytest.mark.cargo
def test_a_provenance_signature_that_is_no_dsse_envelope_is_refused(
        example_release: BuiltExample, tmp_path: Path) -> None:
    archive = _archive_copy(example_release, tmp_path)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore",
                    tmp_path / (archive.name + ".provenance.sigstore.json"))
    result = cli("verify", archive, "--staging", "--identity", IDENTITY, "--issuer", ISSUER,
                 "--json")
    assert_refused(result, "signature.invalid")
    checks = {c["check"]: c for c in result.json()["checks"]}
    assert checks["signature.present"]["result"] == "skip"
    assert checks["signature.provenance"]["result"] == "fail"
    assert "DSSE" in checks["signature.provenance"]["findings"][0]["message"]


# --- what a verification reports, field by field (mutation testing) ----------------------------

def _bundle_of(signed_text: Path) -> Bundle:
    return Bundle.from_json((signed_text.parent / "bundle_v3.txt.sigstore.json").read_bytes())


@pytest.mark.disable_socket
def test_a_verified_signature_reports_its_root_signer_digest_and_certificate(
        signed_text: Path) -> None:
    verifier = _verifier()
    assert verifier.trust.sha256 == hashlib.sha256(_shipped_root(STAGING_TUF_URL)).hexdigest()
    result = verify_file(signed_text, verifier, required=True)
    assert {c.name: (c.status, c.note) for c in result.checks} == {
        "signature.present": ("pass", "bundle_v3.txt.sigstore.json"),
        "signature.valid": ("pass", f"Sigstore staging root shipped with sigstore (sha256 "
                                    f"{verifier.trust.sha256}); signer: identity {IDENTITY}, "
                                    f"OIDC issuer {ISSUER}"),
        "signature.identity": ("pass", f"identity {IDENTITY}"),
        "signature.issuer": ("pass", f"OIDC issuer {ISSUER}")}
    assert result.verified is True
    assert result.certified is not None
    assert result.certified == CertifiedSource.of(_bundle_of(signed_text).signing_certificate)
    data = signed_text.read_bytes()
    assert result.artifact_digest == Digest(hashlib.sha256(data).hexdigest(), len(data))
    assert require_signature(signed_text, verifier) == result.artifact_digest


@pytest.mark.disable_socket
def test_a_sound_signature_of_another_signer_and_issuer(signed_text: Path) -> None:
    """Both the identity and the issuer are wrong: the diagnostic run still finds the signature
    itself sound, and nothing is certified."""
    wanted = signer_identity(github_repository="sigstore/sigstore-js")
    assert wanted is not None
    result = verify_file(signed_text, SignatureVerifier(trust=load_trust(TrustChoice(STAGING)),
                                                        identity=wanted), required=True)
    checks = {c.name: c for c in result.checks}
    assert (checks["signature.valid"].status, checks["signature.valid"].findings) == ("pass", [])
    assert checks["signature.valid"].note == ("signature and log entry verify; the signer does "
                                              "not match")
    assert [f.code.name for f in checks["signature.identity"].findings] == [
        "signature.identity"]
    assert [f.code.name for f in checks["signature.issuer"].findings] == ["signature.issuer"]
    assert checks["signature.identity"].note == (
        "source repository https://github.com/sigstore/sigstore-js")
    assert checks["signature.issuer"].note == f"OIDC issuer {GITHUB_ISSUER}"
    assert result.verified is False
    assert result.certified is None


@pytest.mark.disable_socket
def test_a_changed_byte_reports_sigstores_own_reason(signed_text: Path) -> None:
    signed_text.write_bytes(signed_text.read_bytes() + b"!")
    verifier = _verifier()
    with pytest.raises(VerificationError) as sigstore_says:
        verifier.trust.verifier.verify_artifact(
            signed_text.read_bytes(), _bundle_of(signed_text),
            policy.Identity(identity=IDENTITY, issuer=ISSUER))
    reason = str(sigstore_says.value).strip().splitlines()[0]
    result = verify_file(signed_text, verifier, required=True)
    assert [(f.code.name, f.message) for f in result.findings] == [
        ("signature.invalid", f"the signature does not verify: {reason}")]
    assert result.verified is False
    assert result.certified is None


@pytest.mark.disable_socket
def test_an_unanchored_or_malformed_signature_skips_the_signer_checks(signed_text: Path) -> None:
    unanchored = verify_file(signed_text, _verifier(PRODUCTION), required=True)
    assert [(c.name, c.status, c.note) for c in unanchored.checks[2:]] == [
        ("signature.identity", "skip", "the certificate is not anchored in the root"),
        ("signature.issuer", "skip", "the certificate is not anchored in the root")]
    assert unanchored.verified is False
    assert unanchored.certified is None
    (signed_text.parent / "bundle_v3.txt.sigstore.json").write_text("[]")
    malformed = verify_file(signed_text, _verifier(), required=True)
    assert [(c.name, c.status, c.note) for c in malformed.checks] == [
        ("signature.present", "pass", "bundle_v3.txt.sigstore.json"),
        ("signature.valid", "fail", ""),
        ("signature.identity", "skip", "the signature is malformed"),
        ("signature.issuer", "skip", "the signature is malformed")]
    assert malformed.verified is False
    assert malformed.findings[0].code.name == "signature.invalid"


def test_an_absent_signature_verifies_nothing(tmp_path: Path) -> None:
    artifact = tmp_path / "a.txt"
    artifact.write_bytes(b"a")
    for required in (True, False):
        result = verify_file(artifact, _verifier(), required=required)
        assert result.verified is False
        assert result.certified is None
        assert result.artifact_digest is None


@pytest.mark.disable_socket
def test_a_signed_artifact_that_is_a_symlink_or_absent_is_refused(signed_text: Path) -> None:
    link = signed_text.parent / "link.txt"
    link.symlink_to(signed_text.name)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", signed_text.parent / "link.txt.sigstore.json")
    with pytest.raises(Refused) as refused:
        verify_file(link, _verifier(), required=True)
    assert refused.value.codes() == ["input.not-a-file"]
    signed_text.unlink()
    with pytest.raises(Refused) as refused:
        verify_file(signed_text, _verifier(), required=True)
    assert refused.value.codes() == ["input.unreadable"]


@pytest.mark.skipif(not Path("/proc/self/mem").is_file(), reason="needs Linux /proc")
@pytest.mark.disable_socket
def test_a_signed_artifact_that_fails_to_read_is_unreadable() -> None:
    """/proc/self/mem is a regular file whose first page is unmapped: it opens, and reading
    it fails with EIO while it is hashed."""
    with pytest.raises(Refused) as refused:
        verify_file(Path("/proc/self/mem"), _verifier(), required=True,
                    signature=DATA / "bundle_v3.txt.sigstore")
    assert [(f.code.name, f.message) for f in refused.value.findings] == [
        ("input.unreadable", "/proc/self/mem: Input/output error")]


def _nested(depth: int) -> str:
    return '{"mediaType": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


@pytest.mark.disable_socket
def test_signature_nesting_is_capped_at_32(signed_text: Path) -> None:
    signature = signed_text.parent / "bundle_v3.txt.sigstore.json"
    signature.write_text(_nested(33))
    result = verify_file(signed_text, _verifier(), required=True)
    assert [(f.code.name, f.message.split(":")[0]) for f in result.findings] == [
        ("json.too-deep", "bundle_v3.txt.sigstore.json")]
    signature.write_text(_nested(32))  # within the cap: parsed, then not a Sigstore bundle
    result = verify_file(signed_text, _verifier(), required=True)
    assert [f.code.name for f in result.findings] == ["signature.invalid"]


def test_trust_root_nesting_and_size_caps(tmp_path: Path) -> None:
    root = tmp_path / "trusted_root.json"
    for depth, code in ((17, "json.too-deep"), (16, "signature.trust-root-file")):
        root.write_text(_nested(depth))
        with pytest.raises(Refused) as refused:
            load_trust(TrustChoice(PINNED, root))
        assert refused.value.codes() == [code]
        assert refused.value.findings[0].message.startswith(f"{root}: ")
    shipped = _shipped_root(STAGING_TUF_URL)
    padded = shipped + b" " * ((1 << 20) + 1 - len(shipped))  # past JSON's default cap of 1 MiB
    root.write_bytes(padded)
    trust = load_trust(TrustChoice(PINNED, root))
    assert trust.sha256 == hashlib.sha256(padded).hexdigest()
    root.write_bytes(shipped + b" " * ((4 << 20) + 1 - len(shipped)))
    with pytest.raises(Refused) as refused:
        load_trust(TrustChoice(PINNED, root))
    assert refused.value.codes() == ["input.too-large"]


def test_an_unusable_trust_root_names_the_first_line_of_the_reason(tmp_path: Path) -> None:
    root = tmp_path / "trusted_root.json"
    root.write_text("{}")  # pydantic: "4 validation errors for TrustedRoot\nmediaType\n ..."
    with pytest.raises(Refused) as refused:
        load_trust(TrustChoice(PINNED, root))
    assert [(f.code.name, f.message) for f in refused.value.findings] == [
        ("signature.trust-root-file",
         f"{root}: not a usable Sigstore trusted root: 4 validation errors for TrustedRoot")]


def _with_certificate_version_3(der: bytes) -> bytes:
    """The certificate with its version field (a0 03 02 01 02: v3) set to 3, which
    cryptography refuses with InvalidVersion, an exception that is no ValueError."""
    assert der[8:13] == bytes.fromhex("a003020102")
    return der[:12] + b"\x03" + der[13:]


@pytest.mark.disable_socket
def test_a_certificate_of_an_unknown_x509_version_is_refused_not_a_crash(
        signed_text: Path, tmp_path: Path) -> None:
    """Was exit 4, INTERNAL ERROR InvalidVersion: in the signature and in a pinned root."""
    signature = signed_text.parent / "bundle_v3.txt.sigstore.json"
    document = json.loads(signature.read_text())
    material = document["verificationMaterial"]["certificate"]
    material["rawBytes"] = base64.b64encode(_with_certificate_version_3(
        base64.b64decode(material["rawBytes"]))).decode()
    signature.write_text(json.dumps(document))
    result = verify_file(signed_text, _verifier(), required=True)
    assert [(f.code.name, f.message) for f in result.findings] == [
        ("signature.invalid", "bundle_v3.txt.sigstore.json: not a Sigstore bundle: 3 is not a "
                              "valid X509 version")]
    root = json.loads(_shipped_root(STAGING_TUF_URL))
    certificate = root["certificateAuthorities"][0]["certChain"]["certificates"][0]
    certificate["rawBytes"] = base64.b64encode(_with_certificate_version_3(
        base64.b64decode(certificate["rawBytes"]))).decode()
    pinned = tmp_path / "trusted_root.json"
    pinned.write_text(json.dumps(root))
    refused = cli("verify", tmp_path / "x.zip", "--trust-root", pinned, "--identity", IDENTITY,
                  "--issuer", ISSUER)
    assert_refused(refused, "signature.trust-root-file", status=2)
    assert "3 is not a valid X509 version" in refused.stderr
