"""One release statement per build, merged across jobs, signed once, checked by verify
--attestation and obeyed by publish: harness builds (no cargo) stand in for the archives, a
private in-memory Sigstore instance (tests/sigstore_synthetic.py) signs, and its exchanges are
counted."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from horon_bundle.core.hashing import hash_bytes, hash_file
from horon_bundle.model.checks import PASS, Check
from horon_bundle.model.release_statement import (
    STATEMENT_SUFFIX,
    parse_statement_file,
    run_identity,
    statement_document,
)
from horon_bundle.publish.destinations import oci_layout, oci_referrers
from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.sign.files import prepare, sign_files
from horon_bundle.sign.signer import Signer
from horon_bundle.verify import attestation as attestation_check
from horon_bundle.verify.signature import IN_TOTO_PAYLOAD_TYPE
from tests.harness_support import write_json, write_plugin
from tests.helpers import REPO, assert_refused, cli, tree_snapshot
from tests.publish_support import Registry, publish_env
from tests.sigstore_synthetic import (
    SYNTHETIC_ISSUER,
    SYNTHETIC_SIGNER,
    SyntheticInstance,
    make_instance,
)

LOCAL = {"GITHUB_ACTIONS": ""}
GITHUB = {"GITHUB_ACTIONS": "true", "GITHUB_SERVER_URL": "https://github.com",
          "GITHUB_REPOSITORY": "acme/tools", "GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "2",
          "GITHUB_WORKFLOW_REF": "acme/tools/.github/workflows/release.yml@refs/tags/v1.0.0",
          "GITHUB_REF": "refs/tags/v1.0.0", "GITHUB_SHA": "ab" * 20,
          "RUNNER_NAME": "runner-secret-7", "HOSTNAME": "build-host-secret"}
SCHEMA = jsonschema.Draft202012Validator(json.loads(
    (REPO / "docs" / "schemas" / "release-statement.schema.json").read_text()))


def _plugin(root: Path, name: str) -> Path:
    plugin = write_plugin(root / name)
    manifest = plugin / ".claude-plugin" / "plugin.json"
    document = json.loads(manifest.read_text())
    document["name"] = name
    write_json(manifest, document)
    return plugin


def _build(plugin: Path, out: Path, env: dict[str, str] | None = None) -> Path:
    result = cli("build", plugin, "--out", out, "--json", env=env or LOCAL)
    assert result.status == 0, result.stderr
    statement = result.json()["statement"]
    assert isinstance(statement, str)
    return Path(statement)


def _statements(directory: Path) -> list[Path]:
    return sorted(directory.glob(f"*{STATEMENT_SUFFIX}"))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.slow
def test_a_marketplace_build_writes_one_statement_naming_exactly_its_zips(
        tmp_path: Path) -> None:
    repository = tmp_path / "market"
    for name in ("alpha", "beta", "gamma"):
        _plugin(repository / "plugins", name)
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": "team", "owner": {"name": "Team"},
        "plugins": [{"name": n, "source": f"./plugins/{n}"} for n in ("alpha", "beta", "gamma")]})
    out = tmp_path / "dist"
    statement = _build(repository, out)
    assert _statements(out) == [statement]
    [document] = _lines(statement)
    assert not list(SCHEMA.iter_errors(document))
    zips = {p.name: hash_file(p).sha256 for p in out.glob("*.zip")}
    assert len(zips) == 3
    assert {s["name"]: s["digest"]["sha256"] for s in document["subject"]} == zips
    predicate = document["predicate"]
    assert predicate["runDetails"]["builder"]["id"] == "urn:horon-bundle:builder:local"
    assert predicate["buildDefinition"]["externalParameters"] == {"environment": "local"}
    assert socket.gethostname() not in statement.read_text()
    # the same build again: the same bytes, the same name
    before = statement.read_bytes()
    assert _build(repository, out) == statement and statement.read_bytes() == before


def test_in_github_actions_the_statement_names_the_workflow_run_and_no_host(
        tmp_path: Path) -> None:
    out = tmp_path / "dist"
    statement = _build(_plugin(tmp_path, "alpha"), out, env=GITHUB)
    [document] = _lines(statement)
    assert not list(SCHEMA.iter_errors(document))
    definition = document["predicate"]["buildDefinition"]
    assert definition["externalParameters"] == {"environment": "github-actions", "workflow": {
        "ref": "refs/tags/v1.0.0", "repository": "https://github.com/acme/tools",
        "path": ".github/workflows/release.yml"}}
    assert definition["resolvedDependencies"] == [{
        "uri": "git+https://github.com/acme/tools@refs/tags/v1.0.0",
        "digest": {"gitCommit": "ab" * 20}}]
    run = document["predicate"]["runDetails"]
    assert run["builder"]["id"] == ("https://github.com/acme/tools/.github/workflows/"
                                    "release.yml@refs/tags/v1.0.0")
    assert run["metadata"] == {
        "invocationId": "https://github.com/acme/tools/actions/runs/4242"}
    text = statement.read_text()
    for secret in ("runner-secret-7", "build-host-secret", socket.gethostname()):
        assert secret not in text


def _two_jobs(tmp_path: Path, env: dict[str, str] | None = None) -> Path:
    """Two jobs of one run, each building its own plugin; their dist/ merged into one."""
    dist = tmp_path / "dist"
    dist.mkdir()
    for attempt, name in enumerate(("alpha", "beta"), 1):
        job = tmp_path / f"job-{name}"  # beta re-run in a later attempt: still the same run
        job_env = {**(env or GITHUB), "GITHUB_RUN_ATTEMPT": str(attempt)}
        _build(_plugin(tmp_path / "src", name), job, env=job_env)
        for path in job.iterdir():
            assert not (dist / path.name).exists(), f"{path.name}: two jobs wrote one name"
            shutil.copy2(path, dist / path.name)
    assert len(_statements(dist)) == 2
    return dist


@pytest.mark.slow
def test_merge_joins_one_runs_statements_and_refuses_another_run(tmp_path: Path) -> None:
    dist = _two_jobs(tmp_path)
    release = dist / "release.intoto.jsonl"
    result = cli("statement", "merge", *_statements(dist), "--out", release, "--json")
    assert result.status == 0, result.stderr
    assert result.json()["format"] == "horon.statement-merge.v1"
    merge_schema = json.loads((REPO / "docs/schemas/statement-merge-result.schema.json")
                              .read_text())
    assert not list(jsonschema.Draft202012Validator(merge_schema).iter_errors(result.json()))
    [document] = _lines(release)
    assert not list(SCHEMA.iter_errors(document))
    assert {s["name"] for s in document["subject"]} == {p.name for p in dist.glob("*.zip")}
    # run again over dist/*.intoto.jsonl, the release statement included: the same bytes
    before = release.read_bytes()
    again = cli("statement", "merge", *_statements(dist), "--out", release)
    assert again.status == 0, again.stderr
    assert release.read_bytes() == before
    # a statement of another run (another builder) is refused, nothing written
    other = tmp_path / "other"
    stranger = _build(_plugin(tmp_path / "src2", "gamma"), other, env=LOCAL)
    refused_out = tmp_path / "refused.intoto.jsonl"
    result = cli("statement", "merge", *_statements(dist), stranger, "--out", refused_out)
    assert_refused(result, "statement.conflict")
    assert "predicate.buildDefinition.externalParameters" in result.stderr
    assert not refused_out.exists()


def test_merge_refuses_one_name_with_two_digests(tmp_path: Path) -> None:
    run = run_identity(GITHUB)
    first, second = tmp_path / "a.intoto.jsonl", tmp_path / "b.intoto.jsonl"
    for path, digest in ((first, "1" * 64), (second, "2" * 64)):
        path.write_text(json.dumps(statement_document({"x.zip": digest}, run, "0.1.0")) + "\n")
    result = cli("statement", "merge", first, second, "--out", tmp_path / "r.intoto.jsonl")
    assert_refused(result, "statement.conflict")
    assert f"x.zip: sha256 {'1' * 64} in a.intoto.jsonl, {'2' * 64} in b.intoto.jsonl" \
        in result.stderr


@pytest.mark.parametrize(("text", "what"), [
    ("", "does not end with a newline"),
    ('{"_type": "x"}\n', "not an in-toto Statement"),
    ("[]\n", "not an in-toto Statement"),
    ("\n", "json"),
])
def test_malformed_statements_are_refused(tmp_path: Path, text: str, what: str) -> None:
    path = tmp_path / "bad.intoto.jsonl"
    path.write_text(text)
    before = tree_snapshot(tmp_path)
    result = cli("statement", "merge", path, "--out", tmp_path / "r.intoto.jsonl")
    assert result.status == 1 and "Traceback" not in result.stderr
    assert what.lower() in (result.stderr + " ".join(result.codes)).lower()
    assert tree_snapshot(tmp_path) == before


# --- signing once, with a private Sigstore instance, and verify --attestation -------------------
class CountingSigner(Signer):
    """A signer over the private instance that counts what a real one exchanges: the OIDC
    identity (once per signer), the certificate (once per signer: sigstore's signer keeps one
    for its session) and the transparency-log entries (one per signature)."""

    def __init__(self, instance: SyntheticInstance, scratch: Path) -> None:
        self.instance = instance
        self.scratch = scratch
        self.identity_exchanges = 0
        self.certificates = 0
        self.log_entries = 0

    @property
    def identity(self) -> str:
        return f"{SYNTHETIC_SIGNER} (issuer {SYNTHETIC_ISSUER})"

    def _session(self) -> None:
        if self.certificates == 0:
            self.identity_exchanges += 1
            self.certificates += 1

    def sign_digest(self, digest: Any) -> bytes:
        raise AssertionError("a release statement is never signed digest by digest")

    def sign_statement(self, statement: bytes) -> bytes:
        self._session()
        self.log_entries += 1
        path = self.scratch / f"signature-{self.log_entries}.json"
        return self.instance.sign(IN_TOTO_PAYLOAD_TYPE, statement, path).read_bytes()


@pytest.fixture(scope="module")
def instance(tmp_path_factory: pytest.TempPathFactory) -> SyntheticInstance:
    return make_instance(tmp_path_factory.mktemp("private-sigstore"))


def _signer_args(instance: SyntheticInstance) -> list[str | Path]:
    return ["--trust-root", instance.root, "--identity", SYNTHETIC_SIGNER,
            "--issuer", SYNTHETIC_ISSUER]


@pytest.mark.slow
@pytest.mark.disable_socket
def test_a_release_is_signed_once_and_each_archive_verifies_against_it(
        tmp_path: Path, instance: SyntheticInstance) -> None:
    dist = _two_jobs(tmp_path)
    release = dist / "release.intoto.jsonl"
    assert cli("statement", "merge", *_statements(dist), "--out", release).status == 0
    archives = sorted(dist.glob("*.zip"))
    signer = CountingSigner(instance, tmp_path)
    [signed] = sign_files(prepare([release]), signer)
    assert (signer.identity_exchanges, signer.certificates, signer.log_entries) == (1, 1, 1)
    assert signed.signature == dist / "release.intoto.jsonl.sigstore.json"
    assert signed.statement_signature is None
    envelope = json.loads(signed.signature.read_text())["dsseEnvelope"]
    assert envelope["payloadType"] == "application/vnd.in-toto+json"
    for archive in archives:
        for attestation in (release, signed.signature):
            result = cli("verify", archive, "--attestation", attestation,
                         *_signer_args(instance), "--json")
            assert result.status == 0, result.stderr
            checks = {c["check"]: c["result"] for c in result.json()["checks"]}
            assert checks["attestation.subject"] == "pass"
    # install: exactly the bytes the signed statement names, nothing written otherwise
    home = tmp_path / "home"
    installed = cli("install", archives[0], "--home", home, "--attestation", signed.signature,
                    *_signer_args(instance))
    assert installed.status == 0, installed.stderr
    assert f"subject {archives[0].name} of release.intoto.jsonl.sigstore.json" in \
        installed.stderr
    assert "installed" in installed.stdout
    # publish with a signer required: the one signed statement stands for every archive
    store = tmp_path / "store"
    store.mkdir()
    result = cli("publish", dist, "--dry-run", "--require-signature", *_signer_args(instance),
                 "--json", env=publish_env(f"file://{store}"))
    assert result.status == 0, result.stderr
    assert {b["archive"]["name"] for b in result.json()["bundles"]} == {a.name for a in archives}
    # an archive of another build is named and refused
    stranger = tmp_path / "stranger"
    _build(_plugin(tmp_path / "src3", "gamma"), stranger, env=GITHUB)
    [outside] = stranger.glob("*.zip")
    result = cli("verify", outside, "--attestation", release, *_signer_args(instance))
    assert_refused(result, "attestation.not-subject")
    assert f"{outside.name}: sha256 {hash_file(outside).sha256} is not a subject" \
        in result.stderr
    before = tree_snapshot(home)
    result = cli("install", outside, "--home", home, "--attestation", release,
                 *_signer_args(instance))
    assert_refused(result, "attestation.not-subject")
    assert tree_snapshot(home) == before
    # another signer required: refused with the signer's code, offline
    result = cli("verify", archives[0], "--attestation", release, "--trust-root", instance.root,
                 "--identity", "someone@example.com", "--issuer", SYNTHETIC_ISSUER)
    assert_refused(result, "signature.identity")


def test_attestation_needs_a_signer_and_an_archive(tmp_path: Path,
                                                   instance: SyntheticInstance) -> None:
    dist = _two_jobs(tmp_path, env=LOCAL)
    [archive, _] = sorted(dist.glob("*.zip"))
    statement = _statements(dist)[0]
    assert_refused(cli("verify", archive, "--attestation", statement), "signature.options",
                   status=2)
    assert_refused(cli("verify", dist, "--attestation", statement, *_signer_args(instance)),
                   "usage.invalid", status=2)
    home = tmp_path / "home"
    assert_refused(cli("install", archive, "--home", home, "--attestation", statement),
                   "signature.options", status=2)
    assert_refused(cli("install", dist, "--home", home, "--attestation", statement,
                       *_signer_args(instance)), "usage.invalid", status=2)
    assert not home.exists()


def test_install_admits_only_the_bytes_the_attestation_check_hashed(
        tmp_path: Path, instance: SyntheticInstance, monkeypatch: pytest.MonkeyPatch) -> None:
    """An archive replaced after `--attestation` was checked and before the install's own
    verify (here: by the check itself, on its way out) is refused, the home untouched: the
    install takes the digest the attestation proved, never the file's word afterwards."""
    dist = _two_jobs(tmp_path, env=LOCAL)
    first, second = sorted(dist.glob("*.zip"))

    def passes_then_swaps(name: str, *_: object) -> Check:
        shutil.copyfile(second, first)  # other valid bytes under the checked name
        return Check(attestation_check.CHECK_NAME, PASS, [], "subject (test)")

    monkeypatch.setattr(attestation_check, "check_attestation", passes_then_swaps)
    home = tmp_path / "home"
    result = cli("install", first, "--home", home, "--attestation", _statements(dist)[0],
                 *_signer_args(instance))
    assert_refused(result, "install.integrity")
    assert "when it was checked against its log entry or statement" in result.stderr
    assert not home.exists() or tree_snapshot(home) == {}


def test_sign_refuses_a_statement_of_two_lines_or_with_an_archive_changed(
        tmp_path: Path, instance: SyntheticInstance) -> None:
    dist = _two_jobs(tmp_path)
    both = dist / "both.intoto.jsonl"
    both.write_bytes(b"".join(p.read_bytes() for p in _statements(dist) if p != both))
    before = tree_snapshot(dist)
    signer = CountingSigner(instance, tmp_path)
    result = cli("sign", both, env={"SIGSTORE_IDENTITY_TOKEN": ""})
    assert_refused(result, "signing.input")
    assert "2 statements; sign one release statement" in result.stderr
    both.unlink()
    [first, *_] = _statements(dist)
    [archive] = [dist / s for s in parse_statement_file(first.read_bytes(),
                                                         source=first.name)[0].subjects]
    archive.write_bytes(archive.read_bytes() + b"\0")
    result = cli("sign", first)
    assert_refused(result, "signing.input")
    assert f"names {archive.name} with sha256" in result.stderr
    assert signer.log_entries == 0
    del before[both.name]
    assert tree_snapshot(dist) == {**before, archive.name: tree_snapshot(dist)[archive.name]}


def test_signing_a_statement_without_an_identity_exits_3(tmp_path: Path) -> None:
    dist = _two_jobs(tmp_path)
    [first, *_] = _statements(dist)
    before = tree_snapshot(dist)
    result = cli("sign", first, env={"SIGSTORE_IDENTITY_TOKEN": "", "GITHUB_ACTIONS": "",
                                     "ACTIONS_ID_TOKEN_REQUEST_URL": ""})
    assert_refused(result, "signing.no-identity", status=3)
    assert tree_snapshot(dist) == before


# --- publish: exactly the subjects ---------------------------------------------------------------
@pytest.mark.slow
def test_publish_refuses_an_archive_no_statement_names_and_can_leave_it_out(
        tmp_path: Path) -> None:
    dist = _two_jobs(tmp_path, env=LOCAL)
    stale_job = tmp_path / "stale"
    _build(_plugin(tmp_path / "old", "renamed-away"), stale_job, env=LOCAL)
    [stale] = stale_job.glob("*.zip")
    shutil.copy2(stale, dist / stale.name)  # left from an earlier build: no statement here
    store = tmp_path / "store"
    store.mkdir()
    env = publish_env(f"file://{store}")
    result = cli("publish", dist, env=env)
    assert_refused(result, "publish.not-subject")
    assert f"{stale.name}: in {dist} but no release statement names it" in result.stderr
    assert not store.exists() or not any(store.rglob("*.zip"))
    result = cli("publish", dist, "--leave-out-unlisted", "--json", env=env)
    assert result.status == 0, result.stderr
    receipt = result.json()
    published = {b["archive"]["name"] for b in receipt["bundles"]}
    assert published == {p.name for p in dist.glob("*.zip")} - {stale.name}
    assert f"left out {stale.name}" in result.stderr
    for bundle in receipt["bundles"]:
        roles = {f["role"]: f for f in bundle["files"]}
        statement = roles["release-statement"]
        blob = next(store.rglob(statement["sha256"]))  # kept in the store, by digest
        assert bundle["archive"]["name"] in blob.read_text()


def test_publish_without_a_statement_warns_and_a_missing_subject_is_refused(
        tmp_path: Path) -> None:
    dist = _two_jobs(tmp_path, env=LOCAL)
    statements = _statements(dist)
    moved = tmp_path / "aside"
    moved.mkdir()
    for path in statements:
        path.rename(moved / path.name)
    store = tmp_path / "store"
    store.mkdir()
    result = cli("publish", dist, "--dry-run", env=publish_env(f"file://{store}"))
    assert result.status == 0, result.stderr
    assert result.warnings == ["publish.no-statement"], result.stderr
    assert "no release statement (*.intoto.jsonl)" in result.stderr + result.stdout
    # a statement naming an archive that is not there
    shutil.copy2(moved / statements[0].name, dist / statements[0].name)
    shutil.copy2(moved / statements[1].name, dist / statements[1].name)
    [gone] = parse_statement_file((dist / statements[0].name).read_bytes(),
                                  source="s")[0].subjects
    (dist / gone).unlink()
    result = cli("publish", dist, "--dry-run", env=publish_env(f"file://{store}"))
    assert_refused(result, "publish.subject-missing")
    assert f"{gone}: named by {statements[0].name} but not in {dist}" in result.stderr


@pytest.mark.slow
def test_a_rebuild_removes_the_statement_it_made_stale(tmp_path: Path) -> None:
    plugin = _plugin(tmp_path, "alpha")
    out = tmp_path / "dist"
    first = _build(plugin, out)
    (plugin / "commands" / "more.md").write_text("---\ndescription: more\n---\nmore\n")
    result = cli("build", plugin, "--out", out, env=LOCAL)
    assert result.status == 0, result.stderr
    [second] = _statements(out)
    assert second != first and not first.exists()
    assert f"removed the stale release statement {first.name}" in result.stderr + result.stdout


@pytest.mark.slow
def test_publish_to_oci_attaches_the_statement_as_a_referrer(tmp_path: Path,
                                                            registry: Registry) -> None:
    dist = _two_jobs(tmp_path, env=LOCAL)
    result = cli("publish", dist, "--json", env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    client = RegistryClient(address, {})
    for bundle in result.json()["bundles"]:
        repository = registry.repository(bundle["id"])
        status, body = registry.get(f"/v2/{repository}/manifests/{bundle['version']}",
                                    accept=oci_layout.MANIFEST_MEDIA_TYPE)
        assert status == 200
        found = oci_referrers.find(client, repository, hash_bytes(body))
        statements = [r for r in found
                      if r.annotations[oci_layout.ROLE] == "release-statement"]
        assert [r.artifact_type for r in statements] == ["application/vnd.in-toto+jsonl"]


@pytest.mark.parametrize(("text", "code"), [
    ('{"_type": "https://in-toto.io/Statement/v0.1"}\n', "statement.invalid"),
    ("", "statement.invalid"),
    ("not json\n", "json.syntax"),
])
def test_a_file_that_is_no_release_statement_is_refused_by_merge(tmp_path: Path, text: str,
                                                                  code: str) -> None:
    given = tmp_path / "job.intoto.jsonl"
    given.write_text(text)
    out = tmp_path / "release.intoto.jsonl"
    result = cli("statement", "merge", given, "--out", out)
    assert_refused(result, code)
    assert not out.exists()
