"""Signatures and build records as OCI 1.1 referrers, found by the standard lookup on a real
registry (Debian's distribution 2.8 on loopback: no referrers API, so the referrers tag
schema), read back with an independent client (skopeo), and the earlier layout still read.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.reporter import SilentReporter
from horon_bundle.publish.destinations import oci_layout
from horon_bundle.publish.destinations.interface import OciAddress, parse_address
from horon_bundle.publish.destinations.oci_client import RegistryClient
from horon_bundle.publish.destinations.oci_registry import OciRegistry
from horon_bundle.publish.preflight import PublishRequest, check_archive
from horon_bundle.publish.publisher import publish
from horon_bundle.publish.release import (
    ARCHIVE_MEDIA_TYPE,
    BUILD_RECORD_MEDIA_TYPE,
    CONFIG_MEDIA_TYPE,
    ReleaseItem,
)
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.publish_support import (
    Registry,
    Releases,
    make_dist,
    place_signature,
    publish_env,
)

TAG = f"0.1.0__{HOST}"
SIGSTORE = Path(__file__).resolve().parent.parent / "data" / "sigstore"
MESSAGE_SIGNATURE = SIGSTORE / "bundle_v3.txt.sigstore"  # v0.3, message signature
DSSE_SIGNATURE = SIGSTORE / "github-actions-npm-sigstore-3.1.0.sigstore.json"  # v0.2, DSSE
INDEX = oci_layout.INDEX_MEDIA_TYPE
WRITES = ("PUT", "PATCH")


def _signed_dist(root: Path, releases: Releases) -> Path:
    """The example release with a Sigstore bundle and a provenance DSSE bundle beside it (real
    bundles of other files: publish checks their structure; --require-signature, which is not
    used here, would verify them)."""
    dist = make_dist(root, releases.example)
    archive = dist / releases.example.name
    place_signature(MESSAGE_SIGNATURE, archive)
    shutil.copyfile(DSSE_SIGNATURE,
                    archive.with_name(archive.name + ".provenance.sigstore.json"))
    return dist


def _item(dist: Path, name: str) -> ReleaseItem:
    item, findings = check_archive(dist / name, None)
    assert item is not None and not findings, findings
    return item


def _client(registry: Registry) -> RegistryClient:
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    return RegistryClient(address, {})


def _json(registry: Registry, path: str, accept: str) -> tuple[bytes, Any]:
    status, body = registry.get(path, accept=accept)
    assert status == 200, (path, status, body[:200])
    return body, json.loads(body)


def _writes(registry: Registry, since: int = 0) -> list[str]:
    return [f"{a.method} {a.path}" for a in registry.accesses()[since:] if a.method in WRITES]


@pytest.mark.slow
def test_signatures_and_build_record_are_found_by_the_standard_lookup(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    dist = _signed_dist(tmp_path / "dist", releases)
    archive = dist / releases.example.name
    result = cli("publish", dist, "--json", env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    [bundle] = result.json()["bundles"]

    subject_bytes, subject = _json(registry, f"/v2/{registry.repository()}/manifests/{TAG}",
                                   oci_layout.MANIFEST_MEDIA_TYPE)
    digest = "sha256:" + hashlib.sha256(subject_bytes).hexdigest()
    assert bundle["manifest"] == digest
    assert [layer["mediaType"] for layer in subject["layers"]] == [ARCHIVE_MEDIA_TYPE]
    assert subject["config"]["mediaType"] == CONFIG_MEDIA_TYPE
    fallback = "sha256-" + digest[len("sha256:"):]
    assert bundle["referrers"] == f"referrers tag {fallback}"

    # the standard lookup, step 1: this registry has no referrers API (a 404) ...
    assert registry.get(f"/v2/{registry.repository()}/referrers/{digest}", accept=INDEX)[0] == 404
    # ... step 2: the referrers tag schema, an image index of every referrer
    index_bytes, index = _json(registry, f"/v2/{registry.repository()}/manifests/{fallback}", INDEX)
    assert index["mediaType"] == INDEX and index["schemaVersion"] == 2
    local = {archive.name + suffix: archive.with_name(archive.name + suffix).read_bytes()
             for suffix in (".sigstore.json", ".provenance.sigstore.json", ".build.json")}
    roles: dict[str, tuple[str, str]] = {}
    for entry in index["manifests"]:
        body, referrer = _json(registry, f"/v2/{registry.repository()}/manifests/{entry['digest']}",
                               oci_layout.MANIFEST_MEDIA_TYPE)
        assert entry["digest"] == "sha256:" + hashlib.sha256(body).hexdigest()
        assert entry["size"] == len(body)
        assert referrer["subject"] == {"mediaType": oci_layout.MANIFEST_MEDIA_TYPE,
                                       "digest": digest, "size": len(subject_bytes)}
        # artifactType and annotations pulled up into the index, as the API would list them
        assert entry["artifactType"] == referrer["artifactType"]
        assert entry["annotations"] == referrer["annotations"]
        assert referrer["config"]["mediaType"] == oci_layout.EMPTY_MEDIA_TYPE
        [layer] = referrer["layers"]
        assert layer["mediaType"] == referrer["artifactType"]
        status, blob = registry.get(f"/v2/{registry.repository()}/blobs/{layer['digest']}")
        assert status == 200 and blob == local[layer["annotations"][oci_layout.TITLE]]
        roles[referrer["annotations"][oci_layout.ROLE]] = (
            referrer["artifactType"], referrer["annotations"].get(oci_layout.SIGSTORE_CONTENT, ""))
    assert roles == {
        "signature": ("application/vnd.dev.sigstore.bundle.v0.3+json", "message-signature"),
        "provenance-signature": ("application/vnd.dev.sigstore.bundle+json", "dsse-envelope"),
        "build-record": (BUILD_RECORD_MEDIA_TYPE, ""),
    }

    # the toolchain's own lookup finds the same three
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    found = OciRegistry(address, {}).referrers("example", "0.1.0", HOST)
    assert sorted(r.annotations[oci_layout.ROLE] for r in found) == sorted(roles)

    # an independent OCI client reads the fallback index and a referrer
    skopeo = shutil.which("skopeo")
    if skopeo is None:
        pytest.fail("skopeo is not installed (apt-get install skopeo)")
    raw = subprocess.run(
        [skopeo, "inspect", "--raw", "--tls-verify=false",
         f"docker://{registry.host}/{registry.repository()}:{fallback}"],
        capture_output=True, check=True, timeout=60).stdout
    assert raw.rstrip(b"\n") == index_bytes
    first = index["manifests"][0]["digest"]
    raw = subprocess.run(
        [skopeo, "inspect", "--raw", "--tls-verify=false",
         f"docker://{registry.host}/{registry.repository()}@{first}"],
        capture_output=True, check=True, timeout=60).stdout
    assert json.loads(raw)["subject"]["digest"] == digest


def test_an_interrupted_publish_lists_each_referrer_once(tmp_path: Path, registry: Registry,
                                                         releases: Releases) -> None:
    """A run that uploaded everything and stopped before its commit; the re-run finds the
    referrers listed and adds nothing twice."""
    dist = _signed_dist(tmp_path / "dist", releases)
    item = _item(dist, releases.example.name)
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    OciRegistry(address, {}).upload(item)
    assert registry.get(f"/v2/{registry.repository()}/manifests/{TAG}")[0] == 404
    result = cli("publish", dist, "--json", env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    assert result.json()["bundles"][0]["status"] == "published"
    subject = hash_bytes(oci_layout.bundle_manifest(item))
    _, index = _json(registry, f"/v2/{registry.repository()}/manifests/sha256-{subject.sha256}",
                     INDEX)
    digests = [entry["digest"] for entry in index["manifests"]]
    assert len(digests) == len(set(digests)) == 3


def _foreign_referrer(client: RegistryClient, repository: str,
                      subject: bytes) -> dict[str, Any]:
    """Another tool's artifact (an SBOM) attached to our manifest, pushed by digest."""
    sbom = client.push_blob(repository, b'{"bomFormat":"CycloneDX"}')
    empty = client.push_blob(repository, oci_layout.EMPTY_BLOB)
    document = {
        "schemaVersion": 2, "mediaType": oci_layout.MANIFEST_MEDIA_TYPE,
        "artifactType": "application/vnd.cyclonedx+json",
        "config": oci_layout.descriptor(oci_layout.EMPTY_MEDIA_TYPE, empty),
        "layers": [oci_layout.descriptor("application/vnd.cyclonedx+json", sbom)],
        "subject": oci_layout.descriptor(oci_layout.MANIFEST_MEDIA_TYPE, hash_bytes(subject))}
    encoded = oci_layout.encode(document)
    client.put_manifest(repository, "sha256:" + hash_bytes(encoded).sha256, encoded)
    return {"mediaType": oci_layout.MANIFEST_MEDIA_TYPE,
            "digest": "sha256:" + hash_bytes(encoded).sha256, "size": len(encoded),
            "artifactType": "application/vnd.cyclonedx+json"}


def test_another_tools_referrers_index_is_extended_not_replaced(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    dist = _signed_dist(tmp_path / "dist", releases)
    manifest = oci_layout.bundle_manifest(_item(dist, releases.example.name))
    client = _client(registry)
    foreign = _foreign_referrer(client, registry.repository(), manifest)
    tag = oci_layout.referrers_tag(hash_bytes(manifest))
    client.put_manifest(registry.repository(), tag, oci_layout.encode(
        {"schemaVersion": 2, "mediaType": INDEX, "manifests": [foreign]}), media_type=INDEX)
    result = cli("publish", dist, env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    _, index = _json(registry, f"/v2/{registry.repository()}/manifests/{tag}", INDEX)
    assert index["manifests"][0] == foreign
    assert len(index["manifests"]) == 4
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    found = OciRegistry(address, {}).referrers("example", "0.1.0", HOST)
    assert [r.artifact_type for r in found] == ["application/vnd.cyclonedx+json", *(
        r.artifact_type for r in found[1:])]
    assert len(found) == 4


def test_a_foreign_manifest_under_the_referrers_tag_is_refused(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    """The referrers tag of our manifest holds something that is not an image index: publish
    refuses before uploading anything rather than replace another tool's tag."""
    dist = _signed_dist(tmp_path / "dist", releases)
    manifest = oci_layout.bundle_manifest(_item(dist, releases.example.name))
    client = _client(registry)
    empty = client.push_blob(registry.repository(), oci_layout.EMPTY_BLOB)
    squatter = oci_layout.encode({
        "schemaVersion": 2, "mediaType": oci_layout.MANIFEST_MEDIA_TYPE,
        "artifactType": "application/vnd.example.other",
        "config": oci_layout.descriptor(oci_layout.EMPTY_MEDIA_TYPE, empty),
        "layers": [oci_layout.descriptor(oci_layout.EMPTY_MEDIA_TYPE, empty)]})
    tag = oci_layout.referrers_tag(hash_bytes(manifest))
    client.put_manifest(registry.repository(), tag, squatter)
    since = len(registry.accesses())
    storage_before, dist_before = tree_snapshot(registry.storage), tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(registry.destination))
    assert_refused(result, "publish.destination-state", status=3)
    assert set(result.codes) == {"publish.destination-state"}
    assert f"/v2/{registry.repository()}/manifests/{tag} is not an OCI image index" in result.stderr
    assert not _writes(registry, since)
    assert registry.get(f"/v2/{registry.repository()}/manifests/{tag}",
                        accept=oci_layout.MANIFEST_MEDIA_TYPE)[1] == squatter
    assert registry.get(f"/v2/{registry.repository()}/manifests/{TAG}")[0] == 404
    assert _layout_files(registry.storage) == _layout_files(storage_before)
    assert tree_snapshot(dist) == dist_before


def _layout_files(storage: Path | dict[str, Any]) -> list[str]:
    """The registry's blobs and tags (its `_uploads` hold the access check's cancelled
    session, which the registry cleans itself)."""
    names = tree_snapshot(storage) if isinstance(storage, Path) else storage
    return sorted(n for n in names if "/_uploads/" not in n)


def test_an_archive_changed_after_preflight_is_stored_under_no_name(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    """Same size, one byte flipped between preflight and upload: the registry recomputes the
    digest of what it received and refuses it; nothing is tagged."""
    dist = _signed_dist(tmp_path / "dist", releases)
    archive = dist / releases.example.name

    class FlipAByteBeforeUpload(SilentReporter):
        def step(self, text: str) -> None:
            if text.startswith("uploading "):
                data = bytearray(archive.read_bytes())
                data[len(data) // 2] ^= 0x01
                archive.write_bytes(bytes(data))

    with pytest.raises(Refused) as refused:
        publish(PublishRequest(dist_dir=dist), publish_env(registry.destination),
                FlipAByteBeforeUpload())
    assert refused.value.codes() == ["publish.integrity"]
    assert "the registry received other bytes" in str(refused.value)
    assert registry.get(f"/v2/{registry.repository()}/tags/list")[0] == 404


def test_an_archive_cut_short_after_preflight_is_refused_mid_request(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    dist = _signed_dist(tmp_path / "dist", releases)
    archive = dist / releases.example.name

    class TruncateBeforeUpload(SilentReporter):
        def step(self, text: str) -> None:
            if text.startswith("uploading "):
                with archive.open("r+b") as stream:
                    stream.truncate(archive.stat().st_size // 2)

    with pytest.raises(Refused) as refused:
        publish(PublishRequest(dist_dir=dist), publish_env(registry.destination),
                TruncateBeforeUpload())
    assert refused.value.codes() == ["publish.integrity"]
    assert "became shorter since it was checked" in str(refused.value)
    assert registry.get(f"/v2/{registry.repository()}/tags/list")[0] == 404


def test_a_stored_blob_of_the_wrong_size_is_integrity(tmp_path: Path, fresh_registry: Registry,
                                                      releases: Releases) -> None:
    """A blob under the archive's digest left by an interrupted run, since truncated by the
    storage: the HEAD that would let publish skip the upload shows the wrong size."""
    registry = fresh_registry  # its storage is truncated: its own
    dist = _signed_dist(tmp_path / "dist", releases)
    item = _item(dist, releases.example.name)
    client = _client(registry)
    client.push_file(registry.repository(), item.archive, item.digest, item.archive.name)
    sha = item.digest.sha256
    data = registry.storage / "docker/registry/v2/blobs/sha256" / sha[:2] / sha / "data"
    with data.open("r+b") as stream:
        stream.truncate(100)
    result = cli("publish", dist, env=publish_env(registry.destination))
    assert_refused(result, "publish.integrity", status=3)
    assert f"blobs/sha256:{sha} answers digest" in result.stderr
    assert f"expected {item.digest.size} bytes" in result.stderr
    assert registry.get(f"/v2/{registry.repository()}/manifests/{TAG}")[0] == 404


def _earlier_layout(client: RegistryClient, repository: str, item: ReleaseItem) -> bytes:
    """The manifest versions before the referrers layout published: the signature and the
    build record as extra layers after the archive."""
    client.push_blob(repository, item.manifest_bytes)
    client.push_file(repository, item.archive, item.digest, item.archive.name)
    layers = [oci_layout.descriptor(ARCHIVE_MEDIA_TYPE, item.digest, item.archive.name)]
    for side in item.side_files:
        client.push_blob(repository, side.data)
        layers.append(oci_layout.descriptor(side.media_type, side.digest, side.name))
    assert item.manifest is not None
    manifest = oci_layout.encode({
        "schemaVersion": 2, "mediaType": oci_layout.MANIFEST_MEDIA_TYPE,
        "artifactType": oci_layout.ARTIFACT_TYPE,
        "config": oci_layout.descriptor(CONFIG_MEDIA_TYPE, hash_bytes(item.manifest_bytes)),
        "layers": layers,
        "annotations": oci_layout.plugin_annotations(item.manifest, item.digest)})
    client.put_manifest(repository, TAG, manifest)
    return manifest


def test_what_earlier_versions_published_is_still_read(tmp_path: Path, registry: Registry,
                                                       releases: Releases) -> None:
    dist = _signed_dist(tmp_path / "dist", releases)
    old = _earlier_layout(_client(registry), registry.repository(),
                          _item(dist, releases.example.name))
    env = publish_env(registry.destination)
    again = cli("publish", dist, "--json", env=env)
    assert again.status == 0, again.stderr
    assert again.json()["bundles"][0]["status"] == "already-published"
    other = make_dist(tmp_path / "other", releases.example_other_bytes)
    assert_refused(cli("publish", other, env=env), "publish.conflict")
    assert registry.get(f"/v2/{registry.repository()}/manifests/{TAG}",
                        accept=oci_layout.MANIFEST_MEDIA_TYPE)[1] == old

    yanked = cli("yank", "example", "0.1.0", "--reason", "old layout, withdrawn", env=env)
    assert yanked.status == 0, yanked.stderr
    subject = hash_bytes(old)
    _, index = _json(registry, f"/v2/{registry.repository()}/manifests/sha256-{subject.sha256}",
                     INDEX)
    [entry] = index["manifests"]
    assert entry["artifactType"] == oci_layout.YANK_ARTIFACT_TYPE
    _, mark = _json(registry, f"/v2/{registry.repository()}/manifests/yanked.{TAG}",
                    oci_layout.MANIFEST_MEDIA_TYPE)
    assert mark["subject"]["digest"] == "sha256:" + subject.sha256
    assert_refused(cli("publish", dist, env=env), "publish.yanked")
