"""The auditor's policy (`verify --policy`): every requirement met and unmet, the policy file
read strictly, and the whole verify of an example bundle with sockets disabled."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.model.signer import signer_identity
from horon_bundle.rules.policy import parse_policy
from horon_bundle.rules.policy_requirements import SignatureRequired, SignedBy, Subject
from horon_bundle.verify.audit import AuditOptions, audit_options, audit_path
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.signature import SignatureVerifier, verify_file
from horon_bundle.verify.trust import PRODUCTION, STAGING, TrustChoice, load_trust
from tests.conftest import BuiltExample
from tests.helpers import REPO, TEMPLATE, assert_refused, cli, tree_snapshot

pytestmark = pytest.mark.cargo

GITHUB_BUILDER = ("https://github.com/acme/example/.github/workflows/release.yml"
                  "@refs/tags/v0.1.0")
DATA = REPO / "tests" / "data" / "sigstore"


def _build(out: Path, target_dir: Path, *args: str) -> Path:
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", target_dir, *args)
    assert result.status == 0, result.stderr
    [archive] = out.glob("*.zip")
    return archive


@pytest.fixture(scope="module")
def github_built(tmp_path_factory: pytest.TempPathFactory, cargo_target_dir: Path) -> Path:
    """The example as a GitHub release workflow would build it (its builder id)."""
    return _build(tmp_path_factory.mktemp("github-built"), cargo_target_dir,
                  "--builder-id", GITHUB_BUILDER)


@pytest.fixture(scope="module")
def qa_built(tmp_path_factory: pytest.TempPathFactory, cargo_target_dir: Path) -> Path:
    return _build(tmp_path_factory.mktemp("qa-built"), cargo_target_dir, "--channel", "qa")


@pytest.fixture(scope="module")
def record_built(tmp_path_factory: pytest.TempPathFactory, cargo_target_dir: Path) -> Path:
    """The example bound through an artifact record (evidence kind 2)."""
    compiled = tmp_path_factory.mktemp("record-compiled")
    result = cli("compile", TEMPLATE, "--out", compiled, "--target-dir", cargo_target_dir)
    assert result.status == 0, result.stderr
    [directory] = [p for p in compiled.iterdir() if p.name.endswith(".compiled")]
    [library] = [p for p in directory.iterdir() if p.name != "record.json"]
    out = tmp_path_factory.mktemp("record-built")
    result = cli("build", TEMPLATE, "--out", out, "--prebuilt", library, "--record",
                 directory / "record.json")
    assert result.status == 0, result.stderr
    [archive] = out.glob("*.zip")
    return archive


def _policy(text: str) -> AuditOptions:
    policy = parse_policy(("schema = 1\n" + text).encode(), "policy.toml")
    return audit_options(identity=None, trust=TrustChoice(), require_signature=False,
                         policy=policy)


def _policy_checks(report: VerifyReport) -> dict[str, tuple[str, list[str]]]:
    return {c.name: (c.status, [f.code.name for f in c.findings])
            for c in report.checks if c.name.startswith("policy.")}


MET: tuple[str, list[str]] = ("pass", [])
UNMET: tuple[str, list[str]] = ("fail", ["policy.unmet"])


@pytest.mark.parametrize(("text", "key", "expected"), [
    ('channel = "release"', "channel", MET),
    ('channel = "qa"', "channel", UNMET),
    ('builder-ids = ["urn:horon-bundle:builder:local"]', "builder-ids", MET),
    ('builder-ids = ["https://github.com/acme/*"]', "builder-ids", UNMET),
    ("qa-free = true", "qa-free", MET),
    ('evidence = "invocation"', "evidence", MET),
    ('evidence = "artifact-record"', "evidence", UNMET),
    ("min-abi-minor = 0", "min-abi-minor", MET),
    ("min-abi-minor = 1", "min-abi-minor", UNMET),
    ('source-repository = "https://github.com/acme/example"', "source-repository", UNMET),
    ('source-ref = "refs/tags/*"', "source-ref", UNMET),
])
def test_requirements_on_the_local_release(example_release: BuiltExample, text: str, key: str,
                                           expected: tuple[str, list[str]]) -> None:
    report = audit_path(example_release.archive, _policy(text))
    assert _policy_checks(report) == {f"policy.{key}": expected}
    assert report.ok is (expected == MET)
    if expected == UNMET:
        assert f"policy.toml: {key}:" in report.findings[0].message


@pytest.mark.parametrize(("text", "key", "expected"), [
    ('builder-ids = ["https://github.com/acme/example/.github/workflows/release.yml@*"]',
     "builder-ids", MET),
    ('source-repository = "https://github.com/acme/example"', "source-repository", MET),
    ('source-repository = "https://github.com/acme/other"', "source-repository", UNMET),
    ('source-ref = "refs/tags/v0.*"', "source-ref", MET),
    ('source-ref = "refs/heads/main"', "source-ref", UNMET),
])
def test_source_requirements_on_a_github_build(github_built: Path, text: str, key: str,
                                               expected: tuple[str, list[str]]) -> None:
    report = audit_path(github_built, _policy(text))
    assert _policy_checks(report) == {f"policy.{key}": expected}
    if key.startswith("source-") and expected == MET:
        check = next(c for c in report.checks if c.name == f"policy.{key}")
        assert "builder id only" in check.note


def test_qa_free_unmet_on_a_qa_build(qa_built: Path) -> None:
    report = audit_path(qa_built, _policy('qa-free = true\nchannel = "release"'))
    checks = _policy_checks(report)
    assert checks == {"policy.channel": UNMET, "policy.qa-free": UNMET}
    assert any("qa-provider" in f.message for f in report.findings)


def test_evidence_invocation_unmet_on_a_record_build(record_built: Path) -> None:
    report = audit_path(record_built, _policy('evidence = "invocation"'))
    assert _policy_checks(report) == {"policy.evidence": UNMET}
    met = audit_path(record_built, _policy('evidence = "artifact-record"'))
    assert _policy_checks(met) == {"policy.evidence": MET}


def test_require_signature_and_signer_unmet_on_an_unsigned_archive(
        example_release: BuiltExample) -> None:
    options = _policy('require-signature = true\n[signer]\ngithub-repository = "acme/example"')
    report = audit_path(example_release.archive, options)
    assert _policy_checks(report) == {"policy.require-signature": UNMET,
                                      "policy.signer": ("skip", [])}
    codes = [f.code.name for f in report.findings]
    assert codes == ["signature.missing", "policy.unmet"]


def test_signer_unmet_when_the_signature_is_from_someone_else(example_release: BuiltExample,
                                                              tmp_path: Path) -> None:
    archive = tmp_path / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / (archive.name + ".sigstore.json"))
    report = audit_path(archive, _policy('[signer]\ngithub-repository = "acme/example"'))
    assert _policy_checks(report) == {"policy.signer": UNMET}


def test_signature_requirements_met_by_a_real_verified_signature(
        example_release: BuiltExample, tmp_path: Path) -> None:
    """A signature over one of our archives cannot be made here (no identity); the staging
    bundle's real verification result stands in as the signature facts the policy judges."""
    artifact = tmp_path / "bundle_v3.txt"
    shutil.copyfile(DATA / "bundle_v3.txt", artifact)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / "bundle_v3.txt.sigstore.json")
    identity = signer_identity(identity="william@yossarian.net",
                               issuer="https://github.com/login/oauth")
    assert identity is not None
    result = verify_file(artifact, SignatureVerifier(trust=load_trust(TrustChoice(STAGING)),
                                                     identity=identity), required=True)
    assert result.verified
    report = verify_path(example_release.archive)
    assert report.provenance is not None
    subject = Subject(manifest=report.manifest, facts=report.provenance.facts,
                      signature_present=True, signature_verified=result.verified,
                      certified=result.certified)
    assert SignatureRequired().check(subject, "p").status == "pass"
    assert SignedBy(identity).check(subject, "p").status == "pass"


@pytest.mark.parametrize(("text", "fragment"), [
    ("", "the policy requires nothing"),
    ('chanel = "release"', "chanel: unknown key"),
    ('channel = "beta"', "expected 'release' or 'qa'"),
    ("min-abi-minor = true", "expected an integer"),
    ("builder-ids = []", "at least one"),
    ('source-ref = "main"', "full ref"),
    ('source-repository = "github.com/acme/x"', "repository URL"),
    ('[signer]\nidentity = "a@example.com"', "OIDC issuer"),
    ("[signer]\n", "names no signer"),
    ('[signer]\ngithub-repository = "acme/x"\nextra = 1', "signer.extra: unknown key"),
])
def test_malformed_policies_are_refused(text: str, fragment: str) -> None:
    with pytest.raises(Refused) as refused:
        parse_policy(("schema = 1\n" + text).encode(), "policy.toml")
    assert set(refused.value.codes()) == {"policy.invalid"}
    assert refused.value.exit_status == 2
    assert fragment in str(refused.value)


def test_policy_schema_is_required() -> None:
    with pytest.raises(Refused) as refused:
        parse_policy(b'channel = "release"\n', "policy.toml")
    assert "schema: required key is missing" in str(refused.value)


def test_verify_cli_with_a_policy(example_release: BuiltExample, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('schema = 1\nchannel = "release"\nqa-free = true\nmin-abi-minor = 0\n'
                      'evidence = "invocation"\n')
    ok = cli("verify", example_release.archive, "--policy", policy, "--json")
    assert ok.status == 0, ok.stderr
    document = ok.json()
    assert document["format"] == "horon.verify-report.v1"
    assert {c["check"]: c["result"] for c in document["checks"]
            if c["check"].startswith("policy.")} == {
        "policy.channel": "pass", "policy.qa-free": "pass", "policy.min-abi-minor": "pass",
        "policy.evidence": "pass"}
    policy.write_text('schema = 1\nchannel = "qa"\n')
    unmet = cli("verify", example_release.archive, "--policy", policy)
    assert_refused(unmet, "policy.unmet")
    assert "channel 'release', required 'qa'" in unmet.stderr


def test_verify_cli_refuses_a_broken_policy_file(example_release: BuiltExample,
                                                 tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("schema = 1\nchannel = \n")
    before = tree_snapshot(tmp_path)
    assert_refused(cli("verify", example_release.archive, "--policy", policy),
                   "policy.invalid", status=2)
    assert_refused(cli("verify", example_release.archive, "--policy", tmp_path / "absent.toml"),
                   "input.unreadable")
    assert tree_snapshot(tmp_path) == before


def test_signer_named_twice_or_required_without_a_signer(example_release: BuiltExample,
                                                         tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text('schema = 1\n[signer]\ngithub-repository = "acme/example"\n')
    twice = cli("verify", example_release.archive, "--policy", policy,
                "--github-repository", "acme/example")
    assert_refused(twice, "signature.options", status=2)
    policy.write_text("schema = 1\nrequire-signature = true\n")
    nobody = cli("verify", example_release.archive, "--policy", policy)
    assert_refused(nobody, "signature.options", status=2)


# --- the whole verify, offline -------------------------------------------------------------

@pytest.mark.disable_socket
def test_whole_verify_of_the_example_runs_with_sockets_disabled(
        example_release: BuiltExample) -> None:
    for path in (example_release.archive, example_release.bundle):
        plain = verify_path(path)
        assert plain.ok, [f.message for f in plain.findings]
    identity = signer_identity(github_repository="acme/example",
                               github_workflow=".github/workflows/release.yml")
    policy = parse_policy(b'schema = 1\nchannel = "release"\nqa-free = true\n'
                          b'evidence = "invocation"\nmin-abi-minor = 0\n', "policy.toml")
    options = audit_options(identity=identity, trust=TrustChoice(PRODUCTION),
                            require_signature=False, policy=policy)
    report = audit_path(example_release.archive, options)
    assert report.ok, [f.message for f in report.findings]
    names = [c.name for c in report.checks]
    assert "signature.present" in names
    assert {"policy.channel", "policy.qa-free", "policy.evidence",
            "policy.min-abi-minor"} <= set(names)
    assert report.to_json()["format"] == "horon.verify-report.v1"
