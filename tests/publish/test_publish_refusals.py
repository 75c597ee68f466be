"""Publish refusals that need a particular destination or release, each made for real: an empty
release directory, a store whose index entry is garbage, a store holding a rotten blob, a
read-only store, a bundle whose advertised features could not be checked, a version too long
to be a registry tag, and a registry that requires credentials.

Every test asserts the one code printed, the exit status, no traceback, and that nothing was
written: the store (or the registry's storage) and the release directory are unchanged.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.publish.destinations.file_store import MARKER, STORE_FORMAT
from tests.conftest import BuiltExample
from tests.gate_helpers import rewrite_record
from tests.helpers import (
    HOST,
    TEMPLATE,
    CliResult,
    assert_refused,
    cli,
    copy_workspace,
    tree_snapshot,
)
from tests.native_bins import make_pe
from tests.publish_support import (
    REGISTRY_BINARY,
    Registry,
    make_dist,
    publish_env,
)

pytestmark = pytest.mark.cargo

ENTRY = Path("index") / "example" / "0.1.0" / f"{HOST}.json"
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def _refused_with_only(result: CliResult, code: str, *, status: int) -> None:
    assert_refused(result, code, status=status)
    assert set(result.codes) == {code}, result.stderr


def _store(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "store"
    store.mkdir()
    return store, f"file://{store}"


def _initialised_store(tmp_path: Path) -> tuple[Path, str]:
    """A store as the first publish leaves it: the format marker (written as publish does)."""
    store, url = _store(tmp_path)
    (store / MARKER).write_bytes(canonical_bytes({"format": STORE_FORMAT}))
    return store, url


# --- publish.nothing ------------------------------------------------------------------------
@pytest.mark.parametrize("layout", ["empty", "absent", "bundle-directory-only"])
def test_a_release_without_archives_publishes_nothing(tmp_path: Path, layout: str,
                                                      example_release: BuiltExample) -> None:
    dist = tmp_path / "dist"
    if layout != "absent":
        dist.mkdir()
    if layout == "bundle-directory-only":
        shutil.copytree(example_release.bundle, dist / example_release.bundle.name)
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    _refused_with_only(result, "publish.nothing", status=1)
    assert f"{dist}: " in result.stderr
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


# --- publish.destination-state --------------------------------------------------------------
@pytest.mark.parametrize(("garbage", "said"), [
    (b'{"format": "horon.store-entry.v1", "archive": {"sha2', "Unterminated string"),
    (canonical_bytes({"format": "horon.store-entry.v0", "archive": "example.zip"}),
     "not a horon.store-entry.v1 entry with archive.sha256"),
], ids=["truncated-json", "another-format"])
def test_a_garbage_index_entry_is_destination_state(tmp_path: Path, garbage: bytes, said: str,
                                                    example_release: BuiltExample) -> None:
    store, url = _initialised_store(tmp_path)
    (store / ENTRY).parent.mkdir(parents=True)
    (store / ENTRY).write_bytes(garbage)
    dist = make_dist(tmp_path / "dist", example_release.archive)
    before, dist_before = tree_snapshot(store), tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    _refused_with_only(result, "publish.destination-state", status=3)
    assert str(store / ENTRY) in result.stderr and said in result.stderr
    assert tree_snapshot(store) == before
    assert tree_snapshot(dist) == dist_before


# --- publish.integrity ----------------------------------------------------------------------
def test_a_rotten_blob_under_the_archive_digest_is_integrity(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """The store already holds a blob named by the archive's sha256 (uploaded by a run that was
    interrupted before its commit) whose bytes the storage has since corrupted: publish reads
    it back instead of trusting the name, and commits nothing."""
    sha = hashlib.sha256(example_release.archive.read_bytes()).hexdigest()
    store, url = _initialised_store(tmp_path)
    blob = store / "blobs" / "sha256" / sha
    blob.parent.mkdir(parents=True)
    rotten = bytearray(example_release.archive.read_bytes())
    rotten[len(rotten) // 2] ^= 0x01
    blob.write_bytes(bytes(rotten))
    dist = make_dist(tmp_path / "dist", example_release.archive)
    before, dist_before = tree_snapshot(store), tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    _refused_with_only(result, "publish.integrity", status=3)
    assert f"{blob}: holds sha256 {hashlib.sha256(rotten).hexdigest()}" in result.stderr
    assert f"expected {sha}" in result.stderr
    assert "0 of 1 new bundles were published" in result.stderr
    assert tree_snapshot(store) == before
    assert not (store / "index").exists()
    assert tree_snapshot(dist) == dist_before


# --- publish.not-writable -------------------------------------------------------------------
@pytest.mark.process
def test_a_read_only_store_is_not_writable(tmp_path: Path,
                                           example_release: BuiltExample) -> None:
    """Tests run as root, whom file modes do not stop: the store is bind-mounted read-only in
    a private mount namespace (`unshare -rm`) for the publishing process alone."""
    if shutil.which("unshare") is None:
        pytest.fail("unshare is not installed (Debian package util-linux)")
    store, url = _initialised_store(tmp_path)
    dist = make_dist(tmp_path / "dist", example_release.archive)
    before, dist_before = tree_snapshot(store), tree_snapshot(dist)
    read_only = ("unshare", "-rm", "--", "sh", "-c",
                 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"',
                 "sh", store)
    result = cli("publish", dist, env=publish_env(url), prefix=read_only)
    _refused_with_only(result, "publish.not-writable", status=3)
    assert f"{url}: cannot be written (permission denied or read-only)" in result.stderr
    assert tree_snapshot(store) == before
    assert tree_snapshot(dist) == dist_before


# --- publish.unproven -----------------------------------------------------------------------
@pytest.mark.slow
def test_a_bundle_whose_advertised_features_went_unchecked_is_unproven(
        tmp_path: Path, cargo_target_dir: Path) -> None:
    """A Windows library (it cannot be loaded here) without a .horon_abi section, bound by an
    artifact record from a cross-compiling runner that could not probe it either: `build`
    bundles it with a note and `verify` passes with features.advertised skipped, but
    publication needs every claim checked."""
    compiled = tmp_path / "compiled"
    assert cli("compile", TEMPLATE, "--out", compiled, "--target-dir",
               cargo_target_dir).status == 0
    [record] = compiled.glob("*.compiled/record.json")
    target = "x86_64-pc-windows-msvc"
    library = make_pe(tmp_path, "horon_example", section=None)
    data = library.read_bytes()

    def cross_compiled(document: dict[str, Any]) -> None:
        document["target"] = target
        document["library"] = {"name": library.name, "sha256": hashlib.sha256(data).hexdigest(),
                               "size": len(data)}
        document["advertised"] = None

    rewrite_record(record, cross_compiled)
    dist = tmp_path / "dist"
    built = cli("build", TEMPLATE, "--out", dist, "--prebuilt", library, "--record", record,
                "--target", target)
    assert built.status == 0, built.stderr
    assert "advertised features not checked" in built.stderr
    archive = dist / f"example-0.1.0-{target}.zip"
    checks = {c["check"]: c["result"] for c in cli("verify", archive, "--json").json()["checks"]}
    assert checks["features.advertised"] == "skip"

    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    _refused_with_only(result, "publish.unproven", status=1)
    assert (f"{archive.name}: check features.advertised did not pass (no .horon_abi section"
            in result.stderr)
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


# --- publish.name ---------------------------------------------------------------------------
def _writes(registry: Registry) -> list[str]:
    return [f"{a.method} {a.path}" for a in registry.accesses() if a.method in WRITES]


@pytest.mark.slow
def test_a_version_too_long_for_a_registry_tag_is_refused(
        tmp_path: Path, cargo_target_dir: Path, registry: Registry) -> None:
    """A valid semantic version (a nightly with its commit in the build metadata) whose tag
    `<version>__<target>` is longer than the 128 characters an OCI registry allows."""
    version = "0.1.0-nightly.20261129.1+git." + "0123456789abcdef" * 4 + ".ci.run.1234567890"
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    for name in ("Cargo.toml", "Cargo.lock"):
        path = workspace / name
        text = path.read_text()
        assert text.count('\nversion = "0.1.0"\n') == 1
        path.write_text(text.replace('\nversion = "0.1.0"\n', f'\nversion = "{version}"\n'))
    dist = tmp_path / "dist"
    built = cli("build", workspace, "--out", dist, "--target-dir", cargo_target_dir)
    assert built.status == 0, built.stderr
    tag = version.replace("+", "_") + "__" + HOST
    assert len(tag) > 128

    storage, before = tree_snapshot(registry.storage), tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(registry.destination))
    _refused_with_only(result, "publish.name", status=1)
    assert f"tag {tag!r} is {len(tag)} characters" in result.stderr
    assert _writes(registry) == []
    assert tree_snapshot(registry.storage) == storage
    assert tree_snapshot(dist) == before


# --- publish.auth ---------------------------------------------------------------------------
USER, PASSWORD = "ci", "right-" + hashlib.sha256(b"horon publish.auth").hexdigest()[:16]


@pytest.fixture(name="auth_registry")
def auth_registry_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A registry that answers every request without valid basic credentials with 401."""
    if shutil.which(REGISTRY_BINARY) is None:
        pytest.fail("docker-registry is not installed (apt-get install docker-registry)")
    import bcrypt  # noqa: PLC0415 - only this fixture

    entry = USER.encode() + b":" + bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4))
    registry = Registry(tmp_path_factory.mktemp("auth-registry"), htpasswd=entry + b"\n")
    registry.start()
    try:
        yield registry
    finally:
        registry.stop()


def test_a_registry_requiring_credentials(tmp_path: Path, auth_registry: Registry,
                                          example_release: BuiltExample) -> None:
    dist = make_dist(tmp_path / "dist", example_release.archive)
    empty_docker_config = tmp_path / "docker"
    empty_docker_config.mkdir()
    env = {**publish_env(auth_registry.destination), "DOCKER_CONFIG": str(empty_docker_config),
           "HORON_REGISTRY_USERNAME": "", "HORON_REGISTRY_PASSWORD": ""}
    storage, before = tree_snapshot(auth_registry.storage), tree_snapshot(dist)

    none = cli("publish", dist, env=env)
    _refused_with_only(none, "publish.auth", status=3)
    assert "asks for credentials and none were found" in none.stderr

    wrong = "wrong-" + PASSWORD
    refused = cli("publish", dist, env={**env, "HORON_REGISTRY_USERNAME": USER,
                                        "HORON_REGISTRY_PASSWORD": wrong})
    _refused_with_only(refused, "publish.auth", status=3)
    assert "credentials refused for POST /v2/horon/example/blobs/uploads/" in refused.stderr
    assert wrong not in refused.stdout + refused.stderr
    assert all(a.status == 401 for a in auth_registry.accesses() if a.method in WRITES)
    assert tree_snapshot(auth_registry.storage) == storage
    assert tree_snapshot(dist) == before

    # the same release with the right credentials: the refusals were about credentials only
    accepted = cli("publish", dist, "--json", env={**env, "HORON_REGISTRY_USERNAME": USER,
                                                   "HORON_REGISTRY_PASSWORD": PASSWORD})
    assert accepted.status == 0, accepted.stderr
    assert [b["status"] for b in accepted.json()["bundles"]] == ["published"]
    assert PASSWORD not in accepted.stdout + accepted.stderr
    assert PASSWORD not in (dist / "publish-receipt.json").read_text()
    assert json.loads((dist / "publish-receipt.json").read_text()) == accepted.json()


# --- archive names that are not UTF-8 -------------------------------------------------------
def test_archives_are_judged_in_byte_order_of_their_names_utf8_or_not(tmp_path: Path) -> None:
    """A `*.zip` whose name is not UTF-8 (byte 0xff) is an archive like any other: refused for
    what it holds, never a crash; the archives are judged in byte order of their names (0xff
    after every UTF-8 lead byte, e.g. U+FF5A's 0xef), not in order of the decoded names."""
    dist = tmp_path / "dist"
    dist.mkdir()
    names = ["a.zip", "\uff5a.zip", os.fsdecode(b"\xff.zip")]
    for name in reversed(names):
        (dist / name).write_bytes(b"not a zip")
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    _refused_with_only(result, "archive.format", status=1)
    lines = [line for line in result.stderr.splitlines() if line.startswith("ERROR ")]
    assert len(lines) == 3, result.stderr
    assert lines[0].startswith("ERROR archive.format: a.zip: not a zip")
    assert lines[1].startswith("ERROR archive.format: \uff5a.zip: not a zip")
    assert lines[2].startswith("ERROR archive.format: ") and "\uff5a" not in lines[2]
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


def test_marketplace_indexes_are_found_in_byte_order_of_their_names_utf8_or_not(
        tmp_path: Path) -> None:
    """The same rule for the marketplace indexes beside the archives: a name that is not UTF-8
    is found, in byte order, never a crash."""
    from horon_bundle.publish.marketplace import find_indexes  # noqa: PLC0415
    from horon_bundle.publish.release import MARKETPLACE_INDEX_SUFFIX as INDEX_SUFFIX  # noqa: PLC0415

    dist = tmp_path / "dist"
    dist.mkdir()
    names = [f"a{INDEX_SUFFIX}", f"\uff5a{INDEX_SUFFIX}",
             os.fsdecode(b"\xff" + INDEX_SUFFIX.encode())]
    for name in reversed(names):
        (dist / name).write_text("{}\n")
    (dist / f".hidden{INDEX_SUFFIX}").write_text("{}\n")
    assert [p.name for p in find_indexes(dist)] == names


# --- publish.unproven: checks a qa bundle never runs ------------------------------------------
def test_a_qa_bundle_without_a_recorded_graph_is_unproven_for_every_check_not_run(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """A qa bundle may record no graph: verify passes it with graph.present skipped and never
    runs graph.qa-free or features.compiled. Publication refuses it for its channel and for
    each of those checks by name (a check absent from the report is "not run"), never crashes."""
    import zipfile  # noqa: PLC0415 - this test only

    from horon_bundle.publish.preflight import check_archive  # noqa: PLC0415
    from tests.helpers import copy_bundle, edit_manifest, edit_provenance  # noqa: PLC0415

    bundle = copy_bundle(example_release.bundle, tmp_path / "work")

    def without_graph(statement: dict[str, Any]) -> None:
        statement["predicate"]["buildDefinition"]["externalParameters"]["channel"] = "qa"
        details = statement["predicate"]["runDetails"]
        details["byproducts"] = [b for b in details["byproducts"] if b["name"] != "horon:graph"]

    edit_provenance(bundle, without_graph)
    edit_manifest(bundle, lambda manifest: manifest.update(channel="qa"))
    dist = tmp_path / "dist"
    dist.mkdir()
    archive = dist / f"example-0.1.0-{HOST}-qa.zip"
    with zipfile.ZipFile(example_release.archive) as built, zipfile.ZipFile(archive, "w") as qa:
        for entry in built.infolist():  # the same entries, names, modes and times
            qa.writestr(entry, (bundle / entry.filename).read_bytes(),
                        compress_type=zipfile.ZIP_DEFLATED)
    checks = {c["check"]: c["result"] for c in cli("verify", archive, "--json").json()["checks"]}
    assert checks["graph.present"] == "skip"
    assert "graph.qa-free" not in checks and "features.compiled" not in checks

    expected = [
        ("publish.channel", f"{archive.name}: channel 'qa'; only release bundles are published"),
        ("publish.unproven", f"{archive.name}: check graph.present did not pass "
                             "(qa bundle without a recorded graph)"),
        ("publish.unproven", f"{archive.name}: check graph.qa-free did not pass (not run)"),
        ("publish.unproven", f"{archive.name}: check features.compiled did not pass (not run)")]
    _item, problems = check_archive(archive, None)
    assert [(f.code.name, f.message) for f in problems] == expected
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    assert_refused(result, "publish.unproven")
    assert set(result.codes) == {"publish.channel", "publish.unproven"}, result.stderr
    for code, message in expected:
        assert f"ERROR {code}: {message}" in result.stderr
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before
