"""Publishing to a real OCI registry (Debian's docker-registry on loopback)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.reporter import SilentReporter
from horon_bundle.publish.destinations.interface import ABSENT, PUBLISHED, OciAddress, parse_address
from horon_bundle.publish.destinations.oci_layout import (
    ARTIFACT_TYPE,
    MANIFEST_MEDIA_TYPE,
    YANK_ARTIFACT_TYPE,
)
from horon_bundle.publish.destinations.oci_registry import OciRegistry
from horon_bundle.publish.preflight import PublishRequest, check_archive
from horon_bundle.publish.publisher import publish
from horon_bundle.publish.release import ARCHIVE_MEDIA_TYPE, CONFIG_MEDIA_TYPE
from tests.helpers import HOST, assert_refused, cli
from tests.publish_support import (
    Registry,
    Releases,
    make_dist,
    publish_env,
)

TAG = f"0.1.0__{HOST}"
WRITES = ("POST", "PUT", "PATCH", "DELETE")


def _manifest(registry: Registry, plugin_id: str, tag: str) -> tuple[int, bytes]:
    return registry.get(f"/v2/{registry.repository(plugin_id)}/manifests/{tag}",
                        accept=MANIFEST_MEDIA_TYPE)


def _writes(registry: Registry, since: int = 0) -> list[str]:
    return [f"{a.method} {a.path}" for a in registry.accesses()[since:] if a.method in WRITES]


def test_publish_pull_back_and_compare(tmp_path: Path, registry: Registry,
                                       releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    result = cli("publish", dist, "--json", env=publish_env(registry.destination))
    assert result.status == 0, result.stderr
    [bundle] = result.json()["bundles"]
    assert bundle["status"] == "published"
    assert bundle["location"] == f"oci://{registry.host}/{registry.namespace}/example:{TAG}"

    status, body = _manifest(registry, "example", TAG)
    assert status == 200
    assert bundle["manifest"] == "sha256:" + hashlib.sha256(body).hexdigest()
    manifest = json.loads(body)
    assert manifest["artifactType"] == ARTIFACT_TYPE
    assert manifest["config"]["mediaType"] == CONFIG_MEDIA_TYPE
    annotations = manifest["annotations"]
    assert annotations["dev.horon.plugin.id"] == "example"
    assert annotations["dev.horon.plugin.target"] == HOST
    assert annotations["dev.horon.plugin.features"] == "clock,greeting"
    assert annotations["dev.horon.plugin.archive.sha256"] == bundle["archive"]["sha256"]

    # the archive is the manifest's one layer; the build record is a referrer
    # (tests/publish/test_publish_referrers.py)
    [layer] = manifest["layers"]
    assert layer["mediaType"] == ARCHIVE_MEDIA_TYPE
    assert layer["annotations"]["org.opencontainers.image.title"] == releases.example.name
    assert layer["digest"] == "sha256:" + bundle["archive"]["sha256"]
    status, blob = registry.get(f"/v2/{registry.repository()}/blobs/{layer['digest']}")
    assert status == 200
    assert blob == releases.example.read_bytes()
    config_digest = manifest["config"]["digest"]
    status, config = registry.get(f"/v2/{registry.repository()}/blobs/{config_digest}")
    plugin = json.loads(config)
    assert (plugin["id"], plugin["version"], plugin["target"]) == ("example", "0.1.0", HOST)

    # an independent client: oras-py pulls the archive by its title
    import oras.client  # type: ignore[import-untyped]  # noqa: PLC0415 - only this test

    pulled = oras.client.OrasClient(hostname=registry.host, insecure=True).pull(
        target=f"{registry.host}/{registry.repository()}:{TAG}",
        outdir=str(tmp_path / "pulled"))
    assert {Path(p).name: Path(p).read_bytes() for p in pulled} == {
        releases.example.name: releases.example.read_bytes()}


def test_rerun_is_already_published_without_writes(tmp_path: Path, registry: Registry,
                                                   releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example, releases.clean)
    assert cli("publish", dist, env=publish_env(registry.destination)).status == 0
    since = len(registry.accesses())
    again = cli("publish", dist, "--json", env=publish_env(registry.destination))
    assert again.status == 0, again.stderr
    assert {b["status"] for b in again.json()["bundles"]} == {"already-published"}
    # only the access check's upload session (opened and cancelled) writes nothing
    ours = (f"POST /v2/{registry.namespace}/", f"DELETE /v2/{registry.namespace}/")
    assert all(w.startswith(ours) and "/blobs/uploads/" in w
               for w in _writes(registry, since))


def test_different_bytes_are_a_conflict(tmp_path: Path, registry: Registry,
                                        releases: Releases) -> None:
    assert cli("publish", make_dist(tmp_path / "a", releases.example),
               env=publish_env(registry.destination)).status == 0
    _, original = _manifest(registry, "example", TAG)
    since = len(registry.accesses())
    result = cli("publish", make_dist(tmp_path / "b", releases.example_other_bytes),
                 env=publish_env(registry.destination))
    assert_refused(result, "publish.conflict")
    assert _manifest(registry, "example", TAG)[1] == original
    assert not [w for w in _writes(registry, since) if w.startswith("PUT")]


def test_dry_run_and_a_failing_bundle_upload_nothing(tmp_path: Path, registry: Registry,
                                                     releases: Releases) -> None:
    good = make_dist(tmp_path / "good", releases.example, releases.clean)
    dry = cli("publish", good, "--dry-run", env=publish_env(registry.destination))
    assert dry.status == 0, dry.stderr
    assert f"would publish example 0.1.0 {HOST}" in dry.stdout
    assert "would publish clean" in dry.stdout
    assert not (good / "publish-receipt.json").exists()

    bad = make_dist(tmp_path / "bad", releases.example, releases.clean, releases.example_qa)
    assert_refused(cli("publish", bad, env=publish_env(registry.destination)),
                   "publish.channel")
    assert not [w for w in _writes(registry) if w.startswith(("PUT", "PATCH"))]
    for plugin_id in ("example", "clean"):
        assert registry.get(f"/v2/{registry.namespace}/{plugin_id}/tags/list")[0] == 404


@pytest.mark.slow
def test_registry_stopped_mid_release_then_rerun_completes(tmp_path: Path, fresh_registry: Registry,
                                                           releases: Releases) -> None:
    registry = fresh_registry  # stopped and restarted: its own
    dist = make_dist(tmp_path / "dist", releases.example, releases.clean)

    class StopRegistryAfterFirstCommit(SilentReporter):
        def step(self, text: str) -> None:
            if text.startswith("published "):
                registry.stop()

    env = publish_env(registry.destination)
    with pytest.raises(Refused) as refused:
        publish(PublishRequest(dist_dir=dist), env, StopRegistryAfterFirstCommit())
    assert refused.value.codes() == ["publish.unreachable"]
    assert refused.value.exit_status == 3
    assert "1 of 2 new bundles were published" in str(refused.value)
    assert not (dist / "publish-receipt.json").exists()

    registry.start()
    assert _manifest(registry, "clean", (_clean_tag(releases)))[0] == 200
    assert _manifest(registry, "example", TAG)[0] == 404
    rerun = cli("publish", dist, "--json", env=env)
    assert rerun.status == 0, rerun.stderr
    assert [(b["id"], b["status"]) for b in rerun.json()["bundles"]] == [
        ("clean", "already-published"), ("example", "published")]
    assert _manifest(registry, "example", TAG)[0] == 200


def _clean_tag(releases: Releases) -> str:
    version = releases.clean.name[len("clean-"):-len(f"-{HOST}.zip")]
    return f"{version.replace('+', '_')}__{HOST}"


def test_unreachable_registry_is_exit_3(tmp_path: Path, fresh_registry: Registry,
                                        releases: Releases) -> None:
    registry = fresh_registry  # stopped and restarted: its own
    registry.stop()
    result = cli("publish", make_dist(tmp_path / "dist", releases.example),
                 env=publish_env(registry.destination))
    assert_refused(result, "publish.unreachable", status=3)
    assert "run the same command again" in result.stderr


def test_yank_keeps_the_manifest_and_forbids_reuse(tmp_path: Path, registry: Registry,
                                                   releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    env = publish_env(registry.destination)
    assert cli("publish", dist, env=env).status == 0
    _, original = _manifest(registry, "example", TAG)
    result = cli("yank", "example", "0.1.0", "--reason", "clock drifts", env=env)
    assert result.status == 0, result.stderr
    status, mark = _manifest(registry, "example", f"yanked.{TAG}")
    assert status == 200
    yank = json.loads(mark)
    assert yank["artifactType"] == YANK_ARTIFACT_TYPE
    assert yank["subject"]["digest"] == "sha256:" + hashlib.sha256(original).hexdigest()
    assert yank["annotations"]["dev.horon.plugin.yank.reason"] == "clock drifts"
    assert _manifest(registry, "example", TAG)[1] == original
    assert "already yanked" in cli("yank", "example", "0.1.0", "--reason", "again",
                                   env=env).stdout
    assert_refused(cli("publish", dist, env=env), "publish.yanked")
    assert_refused(cli("yank", "clean", "0.1.0", "--reason", "x", env=env),
                   "yank.not-published")


def test_credentials_are_never_printed_or_recorded(tmp_path: Path, registry: Registry,
                                                   releases: Releases) -> None:
    secret = "s3cr3t-" + os.urandom(6).hex()
    dist = make_dist(tmp_path / "dist", releases.example)
    env = {**publish_env(registry.destination), "HORON_REGISTRY_USERNAME": "ci",
           "HORON_REGISTRY_PASSWORD": secret}
    result = cli("publish", dist, "--json", env=env)
    assert result.status == 0, result.stderr
    assert secret not in result.stdout + result.stderr
    assert secret not in (dist / "publish-receipt.json").read_text()
    leaked = cli("publish", dist, env={**publish_env(
        f"oci://ci:{secret}@{registry.host}/horon")})
    assert_refused(leaked, "publish.destination", status=3)
    assert secret not in leaked.stdout + leaked.stderr


def test_a_publisher_that_checked_too_early_is_refused_at_commit(
        tmp_path: Path, registry: Registry, releases: Releases) -> None:
    """Both publishers saw the tag absent; the second is stopped by the check before its
    write (the registry itself would have let it overwrite the tag)."""
    address = parse_address(registry.destination)
    assert isinstance(address, OciAddress)
    first, second = OciRegistry(address, {}), OciRegistry(address, {})
    item_a, _ = check_archive(make_dist(tmp_path / "a", releases.example)
                              / releases.example.name, None)
    item_b, _ = check_archive(make_dist(tmp_path / "b", releases.example_other_bytes)
                              / releases.example.name, None)
    assert item_a is not None and item_b is not None
    key = ("example", "0.1.0", HOST)
    assert first.state(*key).status == second.state(*key).status == ABSENT
    first.upload(item_a)
    second.upload(item_b)
    assert first.commit(item_a) == PUBLISHED
    with pytest.raises(Refused) as refused:
        second.commit(item_b)
    assert refused.value.codes() == ["publish.conflict"]
    assert first.state(*key).archive_sha256 == item_a.digest.sha256
