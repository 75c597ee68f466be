"""Publishing harness zips beside native archives, all or nothing, to a file:// store and to
the real loopback OCI registry (Debian's distribution 2.8: no referrers API, so referrers go
through the referrers tag schema): layouts, referrers found by the standard lookup, the ref
and the marketplace index checked and published with their zips, immutability, refusals."""

from __future__ import annotations

import hashlib
import json
import shutil
import time
import zipfile
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from horon_bundle.core.hashing import hash_bytes
from horon_bundle.publish import preflight
from horon_bundle.publish.destinations import oci_layout, oci_referrers
from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.release import (
    CATALOGUE_MEDIA_TYPE,
    HARNESS_ARCHIVE_MEDIA_TYPE,
    MARKETPLACE_INDEX_MEDIA_TYPE,
    REF_MEDIA_TYPE,
)
from horon_bundle.verify.check_table import CheckRow, CheckTable
from horon_bundle.verify.harness.judge import HARNESS_CHECKS
from tests.harness_support import (
    edit_json,
    nested_brackets_zip,
    repeated_path_zip,
    write_json,
    write_plugin,
)
from tests.helpers import HANG_GUARD, HOST, REPO, assert_refused, cli, tree_snapshot
from tests.publish_support import (
    Registry,
    Releases,
    make_dist,
    place_signature,
    publish_env,
)

SIGNATURE = Path(__file__).resolve().parent.parent / "data" / "sigstore" / "bundle_v3.txt.sigstore"
MARKET = "team-tools"
ZIPS = ("bare-0.3.0.zip", "guard-kit-1.2.0.zip")


def _marketplace(root: Path, *, command: str = "Review `git diff --staged`.") -> Path:
    """A marketplace repository of two local plugins, built: zips, refs and the index."""
    repository = root / "market"
    write_plugin(repository / "plugins" / "guard-kit")
    (repository / "plugins" / "guard-kit" / "commands" / "review.md").write_text(
        f"---\ndescription: Review the staged diff\n---\n{command}\n")
    bare = repository / "plugins" / "bare"
    (bare / "commands").mkdir(parents=True)
    (bare / "commands" / "hello.md").write_text("---\ndescription: hi\n---\nhello\n")
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": MARKET, "owner": {"name": "Team"},
        "plugins": [{"name": "guard-kit", "source": "./plugins/guard-kit"},
                    {"name": "bare", "source": "./plugins/bare", "version": "0.3.0"}]})
    out = root / "out"
    result = cli("build", repository, "--out", out)
    assert result.status == 0, result.stderr
    return out


@pytest.fixture(name="market", scope="module")
def market_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _marketplace(tmp_path_factory.mktemp("market"))


def _harness_dist(dist: Path, market: Path, *, signed: bool = True) -> Path:
    dist.mkdir(parents=True, exist_ok=True)
    for path in market.iterdir():  # hand-assembled with other archives: no release statement
        if not path.name.endswith(".intoto.jsonl"):
            shutil.copy2(path, dist / path.name)
    if signed:  # a real Sigstore bundle of another file, naming this zip's digest
        place_signature(SIGNATURE, dist / "guard-kit-1.2.0.zip")
    return dist


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _catalogue(archive: Path) -> bytes:
    with zipfile.ZipFile(archive) as opened:
        return opened.read("catalogue.json")


@pytest.mark.cargo
def test_a_release_of_native_and_harness_bundles_to_a_file_store(
        tmp_path: Path, releases: Releases, market: Path) -> None:
    dist = _harness_dist(make_dist(tmp_path / "dist", releases.example), market)
    store = tmp_path / "store"
    store.mkdir()
    env = publish_env(f"file://{store}")
    result = cli("publish", dist, "--json", env=env)
    assert result.status == 0, result.stderr
    _receipt_valid(result.json())
    bundles = {(b["kind"], b["id"]): b for b in result.json()["bundles"]}
    assert set(bundles) == {("native", "example"), ("harness", "bare"), ("harness", "guard-kit")}
    assert all(b["status"] == "published" for b in bundles.values())
    assert bundles["harness", "guard-kit"]["target"] is None
    # the native layout is unchanged
    native = json.loads((store / "index" / "example" / "0.1.0" / f"{HOST}.json").read_text())
    assert native["format"] == "horon.store-entry.v1"
    # each harness zip: an entry naming its zip, its catalogue and every file beside it
    for name in ZIPS:
        plugin, version = name[: -len(".zip")].rsplit("-", 1)
        entry = json.loads((store / "harness" / "index" / plugin / f"{version}.json")
                           .read_text())
        archive = dist / name
        assert entry["format"] == "horon.store-harness-entry.v1"
        assert (entry["name"], entry["version"]) == (plugin, version)
        assert entry["archive"] == {"name": name, "sha256": _sha(archive),
                                    "size": archive.stat().st_size}
        assert entry["catalogue"]["sha256"] == hash_bytes(_catalogue(archive)).sha256
        roles = {f["role"]: f for f in entry["files"]}
        assert roles["ref"]["sha256"] == _sha(Path(f"{archive}.ref.json"))
        assert roles["marketplace-index"]["sha256"] == _sha(dist / f"{MARKET}.index.json")
        assert ("signature" in roles) == (plugin == "guard-kit")
        for sha in (entry["archive"]["sha256"], entry["catalogue"]["sha256"],
                    *(f["sha256"] for f in entry["files"])):
            blob = store / "blobs" / "sha256" / sha
            assert hashlib.sha256(blob.read_bytes()).hexdigest() == sha
    before = tree_snapshot(store)
    again = cli("publish", dist, "--json", env=env)
    assert again.status == 0, again.stderr
    assert {b["status"] for b in again.json()["bundles"]} == {"already-published"}
    assert tree_snapshot(store) == before
    # other bytes under a published harness name and version: refused, nothing written
    other = _harness_dist(tmp_path / "other-dist", _marketplace(tmp_path / "other",
                                                                command="Review it all."))
    conflict = cli("publish", other, env=env)
    assert_refused(conflict, "publish.conflict")
    assert "guard-kit 1.2.0" in conflict.stderr
    assert tree_snapshot(store) == before


def _receipt_valid(document: object) -> None:
    schema = json.loads((REPO / "docs" / "schemas" / "publish-receipt.schema.json").read_text())
    errors = [e.message for e in jsonschema.Draft202012Validator(schema).iter_errors(document)]
    assert not errors, errors


def _client(registry: Registry) -> RegistryClient:
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    return RegistryClient(address, {})


def _manifest(registry: Registry, repository: str, reference: str) -> tuple[bytes, Any]:
    status, body = registry.get(f"/v2/{repository}/manifests/{reference}",
                                accept=oci_layout.MANIFEST_MEDIA_TYPE)
    assert status == 200, (repository, reference, status)
    return body, json.loads(body)


@pytest.mark.slow
def test_harness_zips_to_an_oci_registry_with_their_referrers(
        tmp_path: Path, registry: Registry, market: Path) -> None:
    dist = _harness_dist(tmp_path / "dist", market)
    env = publish_env(registry.destination)
    result = cli("publish", dist, "--json", env=env)
    assert result.status == 0, result.stderr
    _receipt_valid(result.json())
    bundles = {b["id"]: b for b in result.json()["bundles"]}
    assert bundles["guard-kit"]["location"] == (
        f"oci://{registry.host}/{registry.repository('guard-kit')}:1.2.0")
    archive = dist / "guard-kit-1.2.0.zip"
    repository = registry.repository("guard-kit")
    body, manifest = _manifest(registry, repository, "1.2.0")
    assert bundles["guard-kit"]["manifest"] == "sha256:" + hash_bytes(body).sha256
    assert manifest["artifactType"] == oci_layout.HARNESS_ARTIFACT_TYPE
    assert manifest["config"]["mediaType"] == CATALOGUE_MEDIA_TYPE
    assert registry.get(f"/v2/{repository}/blobs/{manifest['config']['digest']}")[1] == (
        _catalogue(archive))
    [layer] = manifest["layers"]
    assert (layer["mediaType"], layer["digest"]) == (HARNESS_ARCHIVE_MEDIA_TYPE,
                                                      "sha256:" + _sha(archive))
    assert layer["annotations"][oci_layout.TITLE] == archive.name
    annotations = manifest["annotations"]
    assert annotations["dev.horon.harness.archive.sha256"] == _sha(archive)
    assert annotations["dev.horon.harness.events"] == "PreToolUse,SessionStart"
    # the referrers, by the standard lookup (no API here: the sha256-<hex> tag)
    found = oci_referrers.find(_client(registry), repository, hash_bytes(body))
    roles = {r.annotations[oci_layout.ROLE]: r for r in found}
    assert set(roles) == {"signature", "ref", "marketplace-index"}
    assert roles["ref"].artifact_type == REF_MEDIA_TYPE
    assert roles["marketplace-index"].artifact_type == MARKETPLACE_INDEX_MEDIA_TYPE
    [ref_layer] = roles["ref"].layers
    assert registry.get(f"/v2/{repository}/blobs/{ref_layer['digest']}")[1] == (
        Path(f"{archive}.ref.json").read_bytes())
    writes = len(registry.accesses())
    again = cli("publish", dist, "--json", env=env)
    assert again.status == 0, again.stderr
    assert {b["status"] for b in again.json()["bundles"]} == {"already-published"}
    assert [a for a in registry.accesses()[writes:] if a.method in ("PUT", "PATCH")] == []


@pytest.mark.slow
@pytest.mark.cargo
def test_a_mixed_release_to_an_oci_registry(tmp_path: Path, registry: Registry,
                                            releases: Releases, market: Path) -> None:
    dist = _harness_dist(make_dist(tmp_path / "dist", releases.example), market)
    result = cli("publish", dist, "--json", env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    assert len(result.json()["bundles"]) == 3
    _body, native = _manifest(registry, registry.repository("example"), f"0.1.0__{HOST}")
    assert native["artifactType"] == oci_layout.ARTIFACT_TYPE  # native layout unchanged
    _body, harness = _manifest(registry, registry.repository("bare"), "0.3.0")
    assert harness["artifactType"] == oci_layout.HARNESS_ARTIFACT_TYPE


def _refused_without_writes(dist: Path, store: Path, code: str) -> None:
    before = tree_snapshot(store)
    result = cli("publish", dist, env=publish_env(f"file://{store}"))
    assert_refused(result, code)
    assert tree_snapshot(store) == before
    assert not (dist / "publish-receipt.json").exists()


@pytest.mark.parametrize("case", ["renamed", "ref-name", "index-digest", "index-missing",
                                  "index-malformed"])
def test_a_release_with_a_wrong_harness_file_publishes_nothing(tmp_path: Path, market: Path,
                                                               case: str) -> None:
    dist = _harness_dist(tmp_path / "dist", market)
    store = tmp_path / "store"
    store.mkdir()
    index = dist / f"{MARKET}.index.json"
    code = "publish.side-file"
    if case == "renamed":
        (dist / "bare-0.3.0.zip").rename(dist / "bare-0.3.1.zip")
        (dist / "bare-0.3.0.zip.ref.json").rename(dist / "bare-0.3.1.zip.ref.json")
        code = "publish.archive-name"
    elif case == "ref-name":
        edit_json(dist / "bare-0.3.0.zip.ref.json", lambda d: d.update(name="other"))
    elif case == "index-digest":
        edit_json(index, lambda d: d["plugins"][0].update(sha256="0" * 64))
    elif case == "index-missing":
        (dist / "bare-0.3.0.zip").unlink()
        (dist / "bare-0.3.0.zip.ref.json").unlink()
    else:
        edit_json(index, lambda d: d.update(extra=True))
        code = "marketplace.invalid"
    _refused_without_writes(dist, store, code)


def test_a_harness_version_no_oci_tag_can_name_is_refused(tmp_path: Path,
                                                          registry: Registry) -> None:
    workspace = write_plugin(tmp_path / "plugin", manifest={"name": "guard-kit",
                                                            "version": "1.2.0_beta"})
    built = cli("build", workspace, "--out", tmp_path / "dist")
    assert built.status == 0, built.stderr
    writes = len(registry.accesses())
    result = cli("publish", tmp_path / "dist", env=publish_env(registry.destination))
    assert_refused(result, "publish.name")
    assert "'_'" in result.stderr
    assert [a for a in registry.accesses()[writes:] if a.method in ("PUT", "POST")] == []


def test_a_dry_run_of_harness_zips_writes_nothing(tmp_path: Path, market: Path) -> None:
    dist = _harness_dist(tmp_path / "dist", market)
    store = tmp_path / "store"
    store.mkdir()
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, "--dry-run", "--json", env=publish_env(f"file://{store}"))
    assert result.status == 0, result.stderr
    assert {b["status"] for b in result.json()["bundles"]} == {"would-publish"}
    assert "guard-kit 1.2.0 (harness)" in result.stderr
    assert tree_snapshot(tmp_path) == before


def test_require_signature_checks_each_harness_zip(tmp_path: Path, market: Path) -> None:
    """guard-kit carries a real staging signature of another file, bare none: both refused
    with their own code, nothing published."""
    dist = _harness_dist(tmp_path / "dist", market)
    store = tmp_path / "store"
    store.mkdir()
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, "--require-signature", "--staging", "--identity",
                 "william@yossarian.net", "--issuer", "https://github.com/login/oauth",
                 env=publish_env(f"file://{store}"))
    assert_refused(result, "signature.invalid")
    assert "signature.missing" in result.codes
    assert tree_snapshot(tmp_path) == before


@pytest.mark.slow
def test_the_hostile_zips_of_issue_20_are_judged_in_seconds(tmp_path: Path) -> None:
    """The preflight's judge keeps the reader's budgets: the repeated-path zip is refused
    with its code and nothing published, the nested-brackets zip published with warnings."""
    store = tmp_path / "store"
    store.mkdir()
    env = publish_env(f"file://{store}")
    refused = repeated_path_zip(tmp_path / "refused").parent
    before = tree_snapshot(tmp_path)
    start = time.monotonic()
    result = cli("publish", refused, env=env)
    assert time.monotonic() - start < HANG_GUARD
    assert_refused(result, "harness.limit")
    assert tree_snapshot(tmp_path) == before
    warned = nested_brackets_zip(tmp_path / "warned").parent
    start = time.monotonic()
    result = cli("publish", warned, "--json", env=env)
    assert time.monotonic() - start < HANG_GUARD
    assert result.status == 0, result.stderr[-2000:]
    assert [b["status"] for b in result.json()["bundles"]] == ["published"]


def test_a_harness_zip_whose_proving_check_never_ran_is_unproven(
        tmp_path: Path, market: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Publish asks the harness table which checks prove a release: a proving row the
    judge's report does not hold (here one added to the table publish reads) refuses each
    zip with publish.unproven naming the zip and the row, and nothing is written."""
    table = HARNESS_CHECKS
    extra = CheckRow("harness.never-run", table.rows[-1].judge, proves_release=True)
    monkeypatch.setattr(preflight, "HARNESS_CHECKS",
                        CheckTable(rows=(*table.rows, extra), passing=table.passing))
    dist = _harness_dist(tmp_path / "dist", market, signed=False)
    store = tmp_path / "store"
    store.mkdir()
    result = cli("publish", dist, env=publish_env(f"file://{store}"))
    assert_refused(result, "publish.unproven")
    for name in ZIPS:
        assert f"{name}: check harness.never-run did not pass (not run)" in result.stderr
    assert tree_snapshot(store) == {}
