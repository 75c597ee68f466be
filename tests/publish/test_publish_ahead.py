"""`publish --upload-ahead`: an archive's bytes go into an upload session while preflight
verifies it, and are stored only when the whole release passed (a real docker-registry)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.publish.destinations.interface import parse_address
from horon_bundle.publish.destinations.oci_ahead import AheadUploader
from horon_bundle.publish.destinations.oci_client import RegistryClient
from tests.helpers import assert_refused, cli
from tests.publish_support import Registry, Releases, make_dist, publish_env

pytestmark = pytest.mark.registry


def _client(registry: Registry) -> RegistryClient:
    address = parse_address(registry.destination)
    return RegistryClient(address, {})  # type: ignore[arg-type]


def _blob(registry: Registry, sha256: str) -> int:
    status, _ = registry.get(f"/v2/{registry.repository()}/blobs/sha256:{sha256}")
    return status


def _uploads(registry: Registry) -> list[str]:
    return [f"{a.method} {a.status}" for a in registry.accesses()
            if "/blobs/uploads/" in a.path]


def test_the_archive_is_stored_from_the_session_sent_while_it_was_verified(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    result = cli("publish", dist, "--upload-ahead", "--json",
                 env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    [bundle] = result.json()["bundles"]
    assert bundle["status"] == "published"
    sha = hashlib.sha256(releases.example.read_bytes()).hexdigest()
    status, blob = registry.get(f"/v2/{registry.repository()}/blobs/sha256:{sha}")
    assert status == 200 and blob == releases.example.read_bytes()
    # the archive went as one chunk (PATCH), its session closed by the digest alone
    uploads = _uploads(registry)
    assert uploads.count("PATCH 202") == 1, uploads


def test_without_the_option_nothing_is_sent_before_preflight_passes(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    """The default keeps the contract: a release that fails preflight sends no byte."""
    dist = make_dist(tmp_path / "dist", releases.example, releases.example_qa)
    result = cli("publish", dist, env=publish_env(registry.destination))
    assert_refused(result, "publish.channel")
    uploads = _uploads(registry)  # the access check opens a session and cancels it
    assert not any(u.startswith(("PATCH", "PUT")) for u in uploads), uploads


def test_a_refused_release_sent_ahead_stores_nothing_and_cancels_its_session(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example, releases.example_qa)
    result = cli("publish", dist, "--upload-ahead", env=publish_env(registry.destination))
    assert_refused(result, "publish.channel")
    for archive in (releases.example, releases.example_qa):
        assert _blob(registry, hashlib.sha256(archive.read_bytes()).hexdigest()) == 404
    uploads = _uploads(registry)
    assert any(u.startswith("PATCH") for u in uploads), uploads  # bytes were sent ahead …
    # … and every session opened (the access check's too) was cancelled; a body still being
    # sent when preflight refused is broken off (the registry answers that PATCH with 500)
    deletes = [u for u in uploads if u.startswith("DELETE")]
    assert len(deletes) == uploads.count("POST 202"), uploads
    assert not any(a.method == "PUT" for a in registry.accesses()), registry.accesses()


def test_a_session_closed_with_another_digest_is_refused_and_stores_nothing(
        tmp_path: Path, registry: Registry) -> None:
    """What the registry received is checked there against the digest the verify took:
    a file changed after it was sent is stored under no name."""
    path = tmp_path / "archive.zip"
    path.write_bytes(b"the bytes sent ahead")
    uploader = AheadUploader(lambda: _client(registry))
    try:
        uploader.start(path, registry.repository(), path.stat().st_size)
        judged = Digest(hashlib.sha256(b"the bytes judged  !!").hexdigest(), path.stat().st_size)
        with pytest.raises(Refused) as refused:
            uploader.finish(path, registry.repository(), judged)
    finally:
        uploader.close()
    assert refused.value.findings[0].code.name == "publish.integrity"
    assert _blob(registry, judged.sha256) == 404
    assert _blob(registry, hashlib.sha256(path.read_bytes()).hexdigest()) == 404


def test_a_session_that_failed_or_names_another_repository_is_not_used(
        tmp_path: Path, registry: Registry) -> None:
    """Anything wrong ahead is only a missed head start: `finish` says False (the caller
    uploads the archive itself) and the session is cancelled."""
    path = tmp_path / "archive.zip"
    path.write_bytes(b"0123456789")
    digest = Digest(hashlib.sha256(path.read_bytes()).hexdigest(), 10)
    uploader = AheadUploader(lambda: _client(registry))
    try:
        uploader.start(path, registry.repository(), 11)  # the file is shorter than that
        assert not uploader.finish(path, registry.repository(), digest)
        other = tmp_path / "other.zip"
        other.write_bytes(path.read_bytes())
        uploader.start(other, registry.repository("elsewhere"), 10)
        assert not uploader.finish(other, registry.repository(), digest)
        assert not uploader.finish(tmp_path / "never-started.zip", registry.repository(),
                                   digest)
    finally:
        uploader.close()
    assert _blob(registry, digest.sha256) == 404
    uploads = _uploads(registry)
    # both sessions were cancelled: the one whose body broke off (the registry may have
    # dropped it already: 404) and the one sent to another repository (204)
    assert uploads.count("PATCH 202") == 1, uploads
    assert [u for u in uploads if u.startswith("DELETE")] in (["DELETE 204"] * 2,
                                                              ["DELETE 404", "DELETE 204"]), uploads


def test_a_file_store_says_it_takes_no_bytes_ahead(tmp_path: Path,
                                                   releases: Releases) -> None:
    store = tmp_path / "store"
    store.mkdir()
    dist = make_dist(tmp_path / "dist", releases.example)
    result = cli("publish", dist, "--upload-ahead", env=publish_env(f"file://{store}"))
    assert result.status == 0, result.stderr
    assert "--upload-ahead: file://" in result.stderr
    assert "only an oci:// destination takes bytes ahead" in result.stderr
