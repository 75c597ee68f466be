"""The auditor's policy (`verify --policy`): every requirement met and unmet, the policy file
read strictly, and the whole verify of an example bundle with sockets disabled."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from sigstore.models import Bundle

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_file
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.signer_identity import CertifiedSource, signer_identity
from horon_bundle.rules.policy import parse_policy
from horon_bundle.rules.policy_requirements import SignatureRequired, SignedBy, Subject
from horon_bundle.verify.audit import AuditOptions, audit_options, audit_path
from horon_bundle.verify.harness.report import HarnessOptions
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.route import verify_any
from horon_bundle.verify.signature import SignatureVerifier, verify_file
from horon_bundle.verify.trust import PRODUCTION, STAGING, TrustChoice, load_trust
from tests.conftest import BuiltExample
from tests.harness_support import built_zip
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


def test_qa_free_unmet_on_a_qa_build(example_qa: BuiltExample) -> None:
    report = audit_path(example_qa.archive, _policy('qa-free = true\nchannel = "release"'))
    checks = _policy_checks(report)
    assert checks == {"policy.channel": UNMET, "policy.qa-free": UNMET}
    assert any("qa-provider" in f.message for f in report.findings)


def test_evidence_invocation_unmet_on_a_record_build(record_example: BuiltExample) -> None:
    record_built = record_example.archive
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


# --- what the mutants of the trust group showed untested --------------------------------------

def _refusal(text: bytes) -> list[tuple[str, str]]:
    with pytest.raises(Refused) as refused:
        parse_policy(text, "policy.toml")
    assert refused.value.exit_status == 2
    return [(f.code.name, f.message) for f in refused.value.findings]


@pytest.mark.parametrize(("text", "message"), [
    ('channel = "beta"', "policy.toml: channel: 'beta': expected 'release' or 'qa'"),
    ('evidence = "hearsay"', "policy.toml: evidence: 'hearsay': expected one of "
                             "('invocation', 'artifact-record')"),
    ('source-repository = "github.com/acme/x"',
     "policy.toml: source-repository: 'github.com/acme/x': expected a repository URL such as "
     "https://github.com/owner/name"),
    ('source-ref = "main"', "policy.toml: source-ref: 'main': expected a full ref such as "
                            "refs/tags/v1.2.0 (`*` is a wildcard)"),
    ("min-abi-minor = 65536", "policy.toml: min-abi-minor: 65536: expected 0 … 65535"),
    ("min-abi-minor = -1", "policy.toml: min-abi-minor: -1: expected 0 … 65535"),
    ('[signer]\nidentity = "a@example.com"',
     "policy.toml: [signer]: an identity needs its OIDC issuer (--issuer): without it any "
     "identity provider could vouch for that name"),
    ('[signer]\ngithub-repository = "acme/x"\ngithub-workflow = "release.yml@main"',
     "policy.toml: [signer]: workflow 'release.yml@main' is not a path in the repository such "
     "as .github/workflows/release.yml"),
    ('[signer]\ngithub-repository = "acme/x"\ngithub-workflow = ""',
     "policy.toml: [signer]: workflow '' is not a path in the repository such as "
     ".github/workflows/release.yml"),
    ('[signer]\ngithub-repository = "acme/x"\ngithub-workflow = "/.github/workflows/r.yml"',
     "policy.toml: [signer]: workflow '/.github/workflows/r.yml' is not a path in the "
     "repository such as .github/workflows/release.yml"),
])
def test_a_refusal_names_the_policy_file_the_key_and_the_value(text: str, message: str) -> None:
    assert _refusal(("schema = 1\n" + text).encode()) == [("policy.invalid", message)]


def test_another_schema_and_broken_toml_are_refused_naming_the_file() -> None:
    assert _refusal(b'schema = 2\nchannel = "release"\n') == [
        ("policy.invalid", "policy.toml: schema: 2, this toolchain reads 1")]
    [(code, message)] = _refusal(b"schema = 1\nchannel = \n")
    assert code == "policy.invalid" and message.startswith("policy.toml: ")
    assert "line 2" in message


def test_the_largest_abi_minor_is_a_valid_requirement(example_release: BuiltExample) -> None:
    report = audit_path(example_release.archive, _policy("min-abi-minor = 65535"))
    assert _policy_checks(report) == {"policy.min-abi-minor": UNMET}
    assert report.findings[0].message.endswith(", required at least 1.65535")


def _json_checks(result: Any) -> dict[str, dict[str, Any]]:
    return {c["check"]: c for c in result.json()["checks"]}


def test_met_requirements_name_what_met_them_in_the_report(example_release: BuiltExample,
                                                           tmp_path: Path) -> None:
    """`verify --policy --json` (the route's opened bundle): each met key's note says what met
    it; the ABI section requirement is met from the library's own section."""
    policy = tmp_path / "policy.toml"
    policy.write_text('schema = 1\nchannel = "release"\nevidence = "invocation"\n'
                      'builder-ids = ["urn:horon-bundle:*"]\nrequire-abi-section = true\n')
    result = cli("verify", example_release.archive, "--policy", policy, "--json")
    assert result.status == 0, result.stderr
    notes = {name: (c["result"], c["note"]) for name, c in _json_checks(result).items()
             if name.startswith("policy.")}
    assert notes == {
        "policy.channel": ("pass", "release"),
        "policy.evidence": ("pass", "invocation"),
        "policy.builder-ids": ("pass", "urn:horon-bundle:builder:local"),
        "policy.require-abi-section": ("pass", "the library's .horon_abi section was read")}
    report = audit_path(example_release.archive, _policy("require-abi-section = true"))
    assert _policy_checks(report) == {"policy.require-abi-section": MET}


def test_an_unmet_requirement_names_the_policy_file_on_the_cli(example_release: BuiltExample,
                                                               tmp_path: Path) -> None:
    policy = tmp_path / "strict.toml"
    policy.write_text('schema = 1\nchannel = "qa"\n')
    before = tree_snapshot(tmp_path)
    result = cli("verify", example_release.archive, "--policy", policy)
    assert_refused(result, "policy.unmet")
    assert "strict.toml: channel: channel 'release', required 'qa'" in result.stderr
    assert tree_snapshot(tmp_path) == before


def test_the_policys_qa_patterns_reach_verify_and_qa_free(example_release: BuiltExample,
                                                          tmp_path: Path) -> None:
    """A policy's `qa-patterns` are the auditor's: the example's `greeting` feature becomes a
    QA feature for verify's own graph check and for `qa-free`, directly and on the CLI."""
    text = 'qa-free = true\nqa-patterns = ["greeting"]'
    report = audit_path(example_release.archive, _policy(text))
    assert _policy_checks(report) == {"policy.qa-free": UNMET}
    failed = {c.name for c in report.checks if c.status == "fail"}
    assert failed == {"graph.qa-free", "policy.qa-free"}
    assert any("feature 'greeting' of 'horon-example' matches QA pattern 'greeting'" in
               f.message for f in report.findings)
    policy = tmp_path / "policy.toml"
    policy.write_text("schema = 1\n" + text + "\n")
    result = cli("verify", example_release.archive, "--policy", policy, "--json")
    assert_refused(result, "graph.qa-provider")
    checks = _json_checks(result)
    assert checks["graph.qa-free"]["result"] == "fail"
    assert checks["policy.qa-free"]["result"] == "fail"


def test_qa_free_judges_with_the_patterns_the_bundle_recorded(
        example_release: BuiltExample) -> None:
    report = verify_path(example_release.archive)
    assert report.provenance is not None
    facts = report.provenance.facts
    policy = parse_policy(b"schema = 1\nqa-free = true\n", "policy.toml")

    def qa_free(qa_patterns: tuple[str, ...]) -> Any:
        subject = Subject(manifest=report.manifest,
                          facts=dataclasses.replace(facts, qa_patterns=qa_patterns),
                          signature_present=False, signature_verified=False, certified=None)
        [check] = policy.checks(subject)
        return check

    assert qa_free(facts.qa_patterns).status == "pass"
    unmet = qa_free((*facts.qa_patterns, "greeting"))
    assert unmet.status == "fail"
    assert "horon-example[greeting]" in unmet.findings[0].message


def test_require_abi_section_and_clean_source_on_each_fact(example_release: BuiltExample) -> None:
    report = verify_path(example_release.archive)
    assert report.provenance is not None and report.manifest is not None
    facts = report.provenance.facts
    policy = parse_policy(b"schema = 1\nrequire-abi-section = true\nclean-source = true\n",
                          "policy.toml")

    def judged(**change: Any) -> dict[str, tuple[str, str]]:
        fields: dict[str, Any] = {"manifest": report.manifest, "facts": facts,
                                  "signature_present": False, "signature_verified": False,
                                  "certified": None, "advertised_source": "section"}
        fields.update(change)
        return {c.name: (c.status, c.findings[0].message if c.findings else c.note)
                for c in policy.checks(Subject(**fields))}

    revision = "1f43b1b96c7b9c63d2c3be2740c9859d8f7afcea"
    clean = dataclasses.replace(facts, source_revision=revision, source_dirty=False)
    assert judged(facts=clean) == {
        "policy.require-abi-section": ("pass", "the library's .horon_abi section was read"),
        "policy.clean-source": ("pass", revision)}
    got = judged(facts=dataclasses.replace(clean, source_dirty=True),
                 advertised_source="recorded-only")
    assert got == {
        "policy.require-abi-section": (
            "fail", "policy.toml: require-abi-section: the library has no .horon_abi section: "
                    "its advertised metadata is only what the build recorded (recorded-only)"),
        "policy.clean-source": (
            "fail", f"policy.toml: clean-source: built from a dirty tree at {revision}: the "
                    "source had uncommitted changes")}
    got = judged(facts=dataclasses.replace(clean, source_dirty=None), advertised_source=None)
    assert got["policy.require-abi-section"] == (
        "fail", "policy.toml: require-abi-section: the library's advertised metadata could not "
                "be read at all")
    assert got["policy.clean-source"][0] == "fail"
    assert judged(facts=dataclasses.replace(clean, source_revision=None))[
        "policy.clean-source"] == ("fail", "policy.toml: clean-source: the provenance records "
                                           "no source revision (built outside git, or before "
                                           "the first commit)")
    assert judged(manifest=None, facts=None) == {
        "policy.require-abi-section": ("skip", "plugin.json was refused"),
        "policy.clean-source": ("skip", "no readable provenance")}
    assert judged(kind=BundleKind.HARNESS)["policy.require-abi-section"] == (
        "fail", "policy.toml: require-abi-section: a harness bundle has no library and no "
                ".horon_abi section")


SJS_BUILDER = "https://github.com/sigstore/sigstore-js/.github/workflows/release.yml@refs/tags/v3.1.0"


def test_source_ref_is_judged_on_the_certificates_ref_too(example_release: BuiltExample) -> None:
    """The real sigstore-js certificate attests ref refs/heads/main; a provenance whose builder
    id names refs/tags/v3.1.0 meets `refs/tags/*` by its builder id, not by the certificate."""
    report = verify_path(example_release.archive)
    assert report.provenance is not None
    facts = dataclasses.replace(report.provenance.facts, builder_id=SJS_BUILDER)
    certificate = Bundle.from_json((DATA / "github-actions-npm-sigstore-3.1.0.sigstore.json")
                                   .read_bytes()).signing_certificate
    certified = CertifiedSource.of(certificate)
    assert certified.ref == "refs/heads/main"

    def judged(pattern: str, certified: CertifiedSource | None) -> Any:
        policy = parse_policy(f'schema = 1\nsource-ref = "{pattern}"\n'.encode(), "policy.toml")
        subject = Subject(manifest=report.manifest, facts=facts, signature_present=True,
                          signature_verified=True, certified=certified)
        [check] = policy.checks(subject)
        return check

    unmet = judged("refs/tags/*", certified)
    assert unmet.status == "fail"
    assert [f.message for f in unmet.findings] == [
        "policy.toml: source-ref: the signing certificate names ref 'refs/heads/main', required "
        "'refs/tags/*'"]
    met = judged("refs/*", certified)
    assert (met.status, met.note) == ("pass", "refs/heads/main (attested by the signing "
                                              "certificate)")
    alone = judged("refs/tags/*", None)
    assert (alone.status, alone.note) == ("pass", "refs/tags/v3.1.0 (from the builder id only)")


def _staging_policy(text: str) -> AuditOptions:
    policy = parse_policy(("schema = 1\n" + text).encode(), "policy.toml")
    return audit_options(identity=None, trust=TrustChoice(STAGING), require_signature=False,
                         policy=policy)


BEACON = "sigstore-conformance/extremely-dangerous-public-oidc-beacon"
BEACON_WORKFLOW = ".github/workflows/extremely-dangerous-oidc-beacon.yml"


@pytest.fixture
def dsse_beside(example_release: BuiltExample, tmp_path: Path) -> Path:
    """The example archive with the real staging DSSE envelope (the conformance beacon's, over
    another statement) as its provenance signature."""
    archive = tmp_path / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    shutil.copyfile(DATA / "a.dsse.staging-rekor-v2.txt.sigstore.json",
                    tmp_path / f"{archive.name}.provenance.sigstore.json")
    return archive


@pytest.mark.disable_socket
@pytest.mark.parametrize(("signer", "code", "words"), [
    ('github-workflow = ".github/workflows/release.yml"', "signature.identity",
     f"the certificate's workflow is https://github.com/{BEACON}/{BEACON_WORKFLOW}"
     f"@refs/heads/main, expected https://github.com/{BEACON}/.github/workflows/release.yml"
     "@<ref>"),
    ('github-ref = "refs/tags/v1.0.0"', "signature.identity",
     "got refs/heads/main, expected refs/tags/v1.0.0"),
    (f'github-workflow = "{BEACON_WORKFLOW}"\ngithub-ref = "refs/heads/main"',
     "signature.invalid", "signs a statement with sha256 3f79467b52fbab280f08f7eb3bb60988616"
                          "87b48763162209426053048d4c18f, the bundle's provenance.json is "),
])
def test_every_key_of_the_policys_signer_is_required_of_the_certificate(
        dsse_beside: Path, example_release: BuiltExample, signer: str, code: str,
        words: str) -> None:
    """The policy's [signer] github-workflow and github-ref each bind the real beacon
    certificate; when both are the certificate's own, the envelope is refused only because it
    signs another statement than this provenance.json."""
    options = _staging_policy(f'[signer]\ngithub-repository = "{BEACON}"\n{signer}')
    before = tree_snapshot(dsse_beside.parent)
    report = audit_path(dsse_beside, options)
    checks = {c.name: c for c in report.checks}
    [finding] = checks["signature.provenance"].findings
    assert finding.code.name == code
    assert words in finding.message
    if code == "signature.invalid":
        provenance = (example_release.bundle / "provenance.json").read_bytes()
        assert finding.message.endswith(hashlib.sha256(provenance).hexdigest())
    assert checks["policy.signer"].status == "skip"
    assert checks["policy.signer"].note == "no signature to judge (not required)"
    assert tree_snapshot(dsse_beside.parent) == before


@pytest.fixture
def staging_signed(tmp_path: Path) -> Path:
    """sigstore-python's staging-signed file with its signature as `sign` names it. No archive
    of ours can be signed here; `verify` still checks the signature of any file it is given,
    and judges the policy on that signature's facts."""
    artifact = tmp_path / "bundle_v3.txt"
    shutil.copyfile(DATA / "bundle_v3.txt", artifact)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / "bundle_v3.txt.sigstore.json")
    return artifact


@pytest.mark.disable_socket
def test_a_verified_signature_meets_the_policys_signature_keys(staging_signed: Path) -> None:
    options = _staging_policy('require-signature = true\n[signer]\n'
                              'identity = "william@yossarian.net"\n'
                              'issuer = "https://github.com/login/oauth"')
    report = audit_path(staging_signed, options)
    checks = {c.name: (c.status, c.note) for c in report.checks}
    assert checks["signature.valid"][0] == "pass"
    assert checks["signature.issuer"] == ("pass", "OIDC issuer https://github.com/login/oauth")
    assert checks["policy.require-signature"] == ("pass", "")
    assert checks["policy.signer"] == (
        "pass", "identity william@yossarian.net, OIDC issuer https://github.com/login/oauth")
    assert [f.code.name for f in report.findings] == ["layout.not-a-bundle"]


@pytest.mark.disable_socket
def test_another_issuer_is_named_with_what_the_certificate_says(staging_signed: Path) -> None:
    options = _staging_policy('[signer]\nidentity = "william@yossarian.net"\n'
                              'issuer = "https://token.actions.githubusercontent.com"')
    report = audit_path(staging_signed, options)
    checks = {c.name: c for c in report.checks}
    assert checks["signature.valid"].status == "pass"
    [finding] = checks["signature.issuer"].findings
    assert finding.code.name == "signature.issuer"
    assert finding.message.startswith("signing certificate: ")
    assert "'https://github.com/login/oauth'" in finding.message
    assert "'https://token.actions.githubusercontent.com'" in finding.message
    assert checks["policy.signer"].status == "fail"


def test_the_signature_check_without_a_signer_says_what_is_there(
        example_release: BuiltExample, tmp_path: Path) -> None:
    archive = tmp_path / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    options = AuditOptions()

    def present_note(path: Path) -> tuple[str, str]:
        [check] = [c for c in audit_path(path, options).checks if c.name == "signature.present"]
        return check.status, check.note

    assert present_note(archive) == ("skip", "not checked: no signer named")
    (tmp_path / f"{archive.name}.sigstore.json").write_bytes(b"{}")
    assert present_note(archive) == (
        "skip", f"{archive.name}.sigstore.json present, not checked: name the signer "
                "(--identity/--issuer or --github-repository)")
    bundle = tmp_path / example_release.bundle.name
    shutil.copytree(example_release.bundle, bundle)
    (tmp_path / f"{bundle.name}.sigstore.json").write_bytes(b"{}")
    assert present_note(bundle) == ("skip", "not checked: no signer named")


def test_a_named_signer_on_a_bundle_directory(example_release: BuiltExample) -> None:
    """Signatures cover archives: a directory with a signer named is refused when a signature
    is required, and its signature check skipped (saying why) otherwise."""
    identity = signer_identity(github_repository="acme/example")
    why = "signatures cover archives: verify the .zip next to the bundle directory"
    for required, status in ((True, "fail"), (False, "skip")):
        options = audit_options(identity=identity, trust=TrustChoice(PRODUCTION),
                                require_signature=required, policy=None)
        report = audit_path(example_release.bundle, options)
        [check] = [c for c in report.checks if c.name == "signature.present"]
        assert check.status == status
        if required:
            assert [(f.code.name, f.message) for f in check.findings] == [
                ("signature.missing", f"{example_release.bundle.name}: {why}")]
            assert report.exit_status == 1
        else:
            assert check.note == why and report.ok


@pytest.mark.disable_socket
def test_the_signature_is_checked_against_the_bytes_verify_judged(
        example_release: BuiltExample, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With a signer named, the archive's digest comes from the one pass verify made over it
    (`report.archive_digest`), directly and through the route, and the signature check never
    hashes the archive a second time by its path."""
    archive = tmp_path / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    shutil.copyfile(DATA / "bundle_v3.txt.sigstore", tmp_path / f"{archive.name}.sigstore.json")
    expected = hashlib.sha256(archive.read_bytes()).hexdigest()
    hashed: list[Path] = []

    def counting(path: Path, **options: Any) -> Any:
        hashed.append(path)
        return hash_file(path, **options)

    monkeypatch.setattr("horon_bundle.verify.signature.hash_file", counting)
    assert audit_path(archive, AuditOptions()).archive_digest is None
    identity = signer_identity(identity="william@yossarian.net",
                               issuer="https://github.com/login/oauth")
    options = audit_options(identity=identity, trust=TrustChoice(STAGING),
                            require_signature=True, policy=None)
    for report in (audit_path(archive, options), verify_any(archive, options, HarnessOptions())):
        assert report.archive_digest is not None
        assert report.archive_digest.sha256 == expected
        checks = {c.name: c for c in report.checks}
        assert checks["signature.present"].status == "pass"
        assert [f.code.name for f in checks["signature.valid"].findings] == ["signature.invalid"]
    assert hashed == []


def test_checks_made_before_routing_stay_on_a_native_report(example_release: BuiltExample,
                                                            tmp_path: Path) -> None:
    """A native zip with a `.ref.json` beside it: the ref's digest check, made before the zip
    was routed to the native judge, is on the report verify prints."""
    archive = tmp_path / example_release.archive.name
    shutil.copyfile(example_release.archive, archive)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    (tmp_path / f"{archive.name}.ref.json").write_text(
        json.dumps({"name": "example", "sha256": digest}))
    for path in (archive, tmp_path / f"{archive.name}.ref.json"):
        result = cli("verify", path, "--json")
        assert result.status == 0, result.stderr
        document = result.json()
        assert document["path"] == str(path)
        assert document["checks"][0]["check"] == "ref.digest"
        assert document["checks"][0]["result"] == "pass"


def test_a_harness_bundle_cannot_meet_what_only_a_native_one_has(tmp_path: Path) -> None:
    archive = built_zip(tmp_path)
    policy = tmp_path / "policy.toml"
    policy.write_text('schema = 1\nchannel = "release"\nrequire-abi-section = true\n')
    result = cli("verify", archive, "--policy", policy, "--json")
    assert_refused(result, "policy.unmet")
    checks = _json_checks(result)
    assert [f["message"] for f in checks["policy.channel"]["findings"]] == [
        "policy.toml: channel: a harness bundle has no channel"]
    assert checks["policy.require-abi-section"]["result"] == "fail"
