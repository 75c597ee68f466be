"""Signatures and audit policies on harness zips, as on native archives: `sign` signs the zip's
digest and its provenance statement, `verify --require-signature` checks them offline with the
real Sigstore verifier (the staging bundle of tests/data/sigstore signs another file, so it
must be refused with the exact code), and `--policy` judges a harness zip's own facts."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from horon_bundle.core.hashing import Digest
from horon_bundle.sign import files as signing_files
from horon_bundle.sign import signer as signing
from tests.harness_support import built_zip, commit_all, write_plugin
from tests.helpers import REPO, CliResult, assert_refused, cli, tree_snapshot
from tests.install_support import hb

DATA = REPO / "tests" / "data" / "sigstore"
DSSE = DATA / "conformance-beacon-dsse.staging.sigstore.json"
IDENTITY = "william@yossarian.net"
ISSUER = "https://github.com/login/oauth"
SIGNER = ("--identity", IDENTITY, "--issuer", ISSUER)
BUILDER = "https://github.com/acme/guards/.github/workflows/release.yml@refs/tags/v1.2.0"


@pytest.fixture(name="harness_zip", scope="module")
def harness_zip_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built_zip(tmp_path_factory.mktemp("signed-zip"))


def _copy(archive: Path, directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy2(archive, directory / archive.name)
    return directory / archive.name


def _checks(result: CliResult) -> dict[str, str]:
    return {c["check"]: c["result"] for c in result.json()["checks"]}


@pytest.mark.disable_socket
def test_require_signature_on_an_unsigned_harness_zip(harness_zip: Path,
                                                      tmp_path: Path) -> None:
    archive = _copy(harness_zip, tmp_path)
    before = tree_snapshot(tmp_path)
    result = cli("verify", archive, "--require-signature", *SIGNER, "--json")
    assert_refused(result, "signature.missing")
    checks = _checks(result)
    assert checks["signature.present"] == "fail"
    assert checks["hook.lint"] == "pass"  # the harness judge ran in full
    assert tree_snapshot(tmp_path) == before


def test_a_signature_of_another_file_is_invalid_for_the_zip(harness_zip: Path,
                                                            tmp_path: Path) -> None:
    """The real verifier is asked about the zip's own digest: a valid staging signature of
    another artifact does not verify for it; under the production root it does not chain."""
    archive = _copy(harness_zip, tmp_path)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", f"{archive}.sigstore.json")
    staging = cli("verify", archive, "--staging", *SIGNER, "--json")
    assert_refused(staging, "signature.invalid")
    assert _checks(staging)["signature.valid"] == "fail"
    assert _checks(staging)["signature.identity"] == "pass"  # right signer, wrong bytes
    production = cli("verify", archive, *SIGNER)
    assert_refused(production, "signature.trust-root")
    # by a ref: the signature checked is the one beside the zip the ref selects
    assert_refused(cli("verify", f"{harness_zip}.ref.json", "--zip", archive, "--staging",
                       *SIGNER), "signature.invalid")
    assert cli("verify", f"{harness_zip}.ref.json", "--staging", *SIGNER).status == 0


def test_a_provenance_signature_over_another_statement_is_refused(harness_zip: Path,
                                                                  tmp_path: Path) -> None:
    archive = _copy(harness_zip, tmp_path)
    shutil.copyfile(DSSE, f"{archive}.provenance.sigstore.json")
    result = cli("verify", archive, "--staging", "--github-repository",
                 "sigstore-conformance/extremely-dangerous-public-oidc-beacon", "--json")
    assert_refused(result, "signature.invalid")
    provenance = [c for c in result.json()["checks"] if c["check"] == "signature.provenance"]
    assert provenance and provenance[0]["result"] == "fail"
    with zipfile.ZipFile(archive) as opened:
        ours = hashlib.sha256(opened.read("provenance.json")).hexdigest()
    assert ours in provenance[0]["findings"][0]["message"]


def test_install_takes_the_same_signature_options(harness_zip: Path, tmp_path: Path) -> None:
    archive = _copy(harness_zip, tmp_path / "dist")
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", f"{archive}.sigstore.json")
    home = tmp_path / "home"
    assert_refused(hb("install", archive, "--require-signature", "--staging", *SIGNER,
                      home=home), "signature.invalid")
    assert not home.exists()


@pytest.fixture(name="github_zip", scope="module")
def github_zip_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built as a release workflow would: committed, with a GitHub workflow builder id."""
    root = tmp_path_factory.mktemp("github-zip")
    workspace = write_plugin(root / "plugin")
    commit_all(workspace)
    result = cli("build", workspace, "--out", root / "out", "--builder-id", BUILDER)
    assert result.status == 0, result.stderr
    [archive] = (root / "out").glob("*.zip")
    return archive


def _policy(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text("schema = 1\n" + body)
    return path


@pytest.mark.parametrize(("body", "code", "check"), [
    (f'builder-ids = ["{BUILDER.rsplit("@", 1)[0]}@refs/tags/*"]\n', None, "policy.builder-ids"),
    ('source-repository = "https://github.com/acme/guards"\n', None, "policy.source-repository"),
    ('source-ref = "refs/tags/v*"\n', None, "policy.source-ref"),
    ("clean-source = true\n", None, "policy.clean-source"),
    ('builder-ids = ["https://github.com/other/*"]\n', "policy.unmet", "policy.builder-ids"),
    ('source-ref = "refs/heads/main"\n', "policy.unmet", "policy.source-ref"),
    ('channel = "release"\n', "policy.unmet", "policy.channel"),
    ("qa-free = true\n", "policy.unmet", "policy.qa-free"),
    ('evidence = "invocation"\n', "policy.unmet", "policy.evidence"),
    ("min-abi-minor = 0\n", "policy.unmet", "policy.min-abi-minor"),
])
def test_a_policy_judges_what_a_harness_zip_can_prove(github_zip: Path, tmp_path: Path,
                                                      body: str, code: str | None,
                                                      check: str) -> None:
    """Builder, source repository, ref and a clean tree come from the zip's provenance; a
    key a harness bundle cannot have is unmet, never skipped."""
    result = cli("verify", github_zip, "--policy", _policy(tmp_path, body), "--json")
    checks = _checks(result)
    if code is None:
        assert result.status == 0, result.stderr
        assert checks[check] == "pass"
    else:
        assert_refused(result, code)
        assert checks[check] == "fail"
        assert "harness bundle has no" in result.stderr or "required" in result.stderr \
            or "not one of" in result.stderr


def test_a_dirty_harness_build_fails_clean_source(harness_zip: Path, tmp_path: Path) -> None:
    result = cli("verify", harness_zip, "--policy", _policy(tmp_path, "clean-source = true\n"))
    assert_refused(result, "policy.unmet")  # built outside git: no revision recorded


class _RecordingSigner(signing.Signer):
    """Stands in for Fulcio and Rekor, which cannot be reached here."""

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


def test_sign_signs_the_zip_digest_and_its_provenance(harness_zip: Path,
                                                      tmp_path: Path) -> None:
    archive = _copy(harness_zip, tmp_path)
    signer = _RecordingSigner()
    [signed] = signing_files.sign_files(signing_files.prepare([archive]), signer)
    assert signed.kind == "archive"
    assert signer.digests == [hashlib.sha256(archive.read_bytes()).hexdigest()]
    with zipfile.ZipFile(archive) as opened:
        assert signer.statements == [opened.read("provenance.json")]
    assert json.loads(Path(f"{archive}.sigstore.json").read_text()) == {
        "signed": signer.digests[0]}
    assert Path(f"{archive}.provenance.sigstore.json").is_file()


def _sign(*args: str | Path) -> CliResult:
    env = {k: v for k, v in os.environ.items()
           if k not in ("SIGSTORE_IDENTITY_TOKEN", "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
                        "ACTIONS_ID_TOKEN_REQUEST_URL")}
    env["GITHUB_ACTIONS"] = ""
    done = subprocess.run([sys.executable, "-m", "horon_bundle", "sign", *map(str, args)],
                          env={**env, "COLUMNS": "200"}, capture_output=True, text=True,
                          timeout=60, check=False)
    return CliResult(done.returncode, done.stdout, done.stderr)


@pytest.mark.slow
@pytest.mark.process
def test_sign_checks_a_harness_zip_before_asking_for_an_identity(harness_zip: Path,
                                                                 tmp_path: Path) -> None:
    archive = _copy(harness_zip, tmp_path)
    before = tree_snapshot(tmp_path)
    assert_refused(_sign(archive), "signing.no-identity", status=3)  # it verified: then asked
    data = bytearray(archive.read_bytes())
    data[len(data) // 2] ^= 0xFF
    archive.write_bytes(bytes(data))
    tampered = tree_snapshot(tmp_path)
    result = _sign(archive)
    assert_refused(result, "signing.input")
    assert "signing.no-identity" not in result.codes
    assert tree_snapshot(tmp_path) == tampered != before
