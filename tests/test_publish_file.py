"""Publishing to a `file://` store: layout, idempotence, immutability, races, yank."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.publish.destination import ABSENT, PUBLISHED, FileAddress
from horon_bundle.publish.file_store import FileStore
from horon_bundle.publish.preflight import check_archive
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.publish_support import (
    Releases,
    make_dist,
    place_signature,
    publish_env,
    releases_fixture,  # noqa: F401 - pytest fixture
)

KEY = ("example", "0.1.0", HOST)


def _store(tmp_path: Path) -> tuple[Path, str]:
    store = tmp_path / "store"
    store.mkdir()
    return store, f"file://{store}"


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_first_publish_then_already_published(tmp_path: Path, releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example, releases.clean)
    store, url = _store(tmp_path)
    first = cli("publish", dist, "--json", env=publish_env(url))
    assert first.status == 0, first.stderr
    receipt = first.json()
    assert receipt["format"] == "horon.publish-receipt.v1"
    assert [(b["id"], b["status"]) for b in receipt["bundles"]] == [
        ("clean", "published"), ("example", "published")]
    assert json.loads((dist / "publish-receipt.json").read_text()) == receipt

    entry = json.loads((store / "index" / "example" / "0.1.0" / f"{HOST}.json").read_text())
    sha = _sha(releases.example)
    assert entry["format"] == "horon.store-entry.v1"
    assert entry["archive"] == {"name": releases.example.name, "sha256": sha,
                                "size": releases.example.stat().st_size}
    blob = store / "blobs" / "sha256" / sha
    assert blob.read_bytes() == releases.example.read_bytes()
    assert (blob.stat().st_mode & 0o777) == 0o444
    record = store / "blobs" / "sha256" / entry["build_record"]["sha256"]
    assert record.read_bytes() == Path(str(releases.example) + ".build.json").read_bytes()
    assert json.loads((store / "horon-store.json").read_text()) == {
        "format": "horon.file-store.v1"}

    before = tree_snapshot(store)
    again = cli("publish", dist, "--json", env=publish_env(url))
    assert again.status == 0, again.stderr
    assert {b["status"] for b in again.json()["bundles"]} == {"already-published"}
    assert "already published example 0.1.0" in again.stderr
    assert tree_snapshot(store) == before


def test_different_bytes_are_a_conflict(tmp_path: Path, releases: Releases) -> None:
    store, url = _store(tmp_path)
    assert cli("publish", make_dist(tmp_path / "a", releases.example),
               env=publish_env(url)).status == 0
    before = tree_snapshot(store)
    other = make_dist(tmp_path / "b", releases.example_other_bytes)
    result = cli("publish", other, env=publish_env(url))
    assert_refused(result, "publish.conflict")
    assert _sha(releases.example) in result.stderr
    assert tree_snapshot(store) == before
    assert not (other / "publish-receipt.json").exists()


def test_dry_run_prints_the_plan_and_writes_nothing(tmp_path: Path, releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    store, url = _store(tmp_path)
    dist_before = tree_snapshot(dist)
    result = cli("publish", dist, "--dry-run", "--json", env=publish_env(url))
    assert result.status == 0, result.stderr
    assert f"would publish example 0.1.0 {HOST}" in result.stderr
    assert result.json()["dry_run"] is True
    assert [b["status"] for b in result.json()["bundles"]] == ["would-publish"]
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == dist_before


def test_one_failing_bundle_among_three_uploads_nothing(tmp_path: Path,
                                                        releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example, releases.clean, releases.example_qa)
    store, url = _store(tmp_path)
    result = cli("publish", dist, env=publish_env(url))
    assert_refused(result, "publish.channel")
    assert releases.example_qa.name in result.stderr
    assert tree_snapshot(store) == {}
    assert not (dist / "publish-receipt.json").exists()


def test_every_reason_is_listed(tmp_path: Path, releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example, releases.clean, releases.example_qa)
    (dist / releases.clean.name).rename(dist / "renamed.zip")
    (dist / (releases.example.name + ".sha256")).write_text("0" * 64 + "  other.zip\n")
    store, url = _store(tmp_path)
    result = cli("publish", dist, env=publish_env(url))
    for code in ("publish.channel", "publish.archive-name", "publish.side-file"):
        assert_refused(result, code)
    assert tree_snapshot(store) == {}


def test_build_record_of_another_archive_is_refused(tmp_path: Path,
                                                    releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    other_record = Path(str(releases.clean) + ".build.json").read_bytes()
    (dist / (releases.example.name + ".build.json")).write_bytes(other_record)
    store, url = _store(tmp_path)
    result = cli("publish", dist, env=publish_env(url))
    assert_refused(result, "publish.side-file")
    assert tree_snapshot(store) == {}


@pytest.mark.parametrize(("prepare", "code", "status"), [
    ("missing", "publish.unreachable", 3),
    ("foreign", "publish.destination", 3),
    ("file", "publish.destination", 3),
])
def test_unusable_store_directories(tmp_path: Path, releases: Releases, prepare: str,
                                    code: str, status: int) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    store = tmp_path / "store"
    if prepare == "foreign":
        store.mkdir()
        (store / "holiday.jpg").write_bytes(b"not a store")
    elif prepare == "file":
        store.write_bytes(b"a file")
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, env=publish_env(f"file://{store}"))
    assert_refused(result, code, status=status)
    assert tree_snapshot(tmp_path) == before


def test_declaration_naming_a_destination_is_refused(tmp_path: Path,
                                                     releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "horon-release.toml").write_text(
        'schema = 1\n[publish]\ndestination = "oci://ghcr.io/acme"\n'
        '[[plugin]]\nid = "example"\nname = "Example"\npackage = "horon-example"\n'
        'features = []\ntargets = ["x86_64-unknown-linux-gnu"]\nprofile = "release"\n'
        'license-file = "LICENSE"\n')
    store, url = _store(tmp_path)
    result = cli("publish", dist, "--workspace", workspace, env=publish_env(url))
    assert_refused(result, "declaration.destination")
    assert tree_snapshot(store) == {}
    # the same declaration beside the archives is found without --workspace
    (dist / "horon-release.toml").write_bytes((workspace / "horon-release.toml").read_bytes())
    assert_refused(cli("publish", dist, env=publish_env(url)), "declaration.destination")
    assert tree_snapshot(store) == {}


def test_yank_marks_withdrawn_keeps_bytes_and_forbids_reuse(tmp_path: Path,
                                                            releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    store, url = _store(tmp_path)
    assert cli("publish", dist, env=publish_env(url)).status == 0
    entry_path = store / "index" / "example" / "0.1.0" / f"{HOST}.json"
    entry = entry_path.read_bytes()
    blobs = tree_snapshot(store / "blobs")

    result = cli("yank", "example", "0.1.0", "--reason", "clock drifts", "--json",
                 env=publish_env(url))
    assert result.status == 0, result.stderr
    assert [(y["target"], y["already"]) for y in result.json()["yanked"]] == [(HOST, False)]
    mark = json.loads((store / "yanks" / "example" / "0.1.0" / f"{HOST}.json").read_text())
    assert mark["format"] == "horon.yank.v1"
    assert mark["reason"] == "clock drifts"
    assert mark["archive_sha256"] == _sha(releases.example)
    assert entry_path.read_bytes() == entry
    assert tree_snapshot(store / "blobs") == blobs

    again = cli("yank", "example", "0.1.0", "--target", HOST, "--reason", "twice",
                env=publish_env(url))
    assert again.status == 0, again.stderr
    assert "already yanked" in again.stderr

    before = tree_snapshot(store)
    assert_refused(cli("publish", dist, env=publish_env(url)), "publish.yanked")
    assert_refused(cli("publish", make_dist(tmp_path / "b", releases.example_other_bytes),
                       env=publish_env(url)), "publish.yanked")
    # even with the index entry deleted by hand, the yank mark forbids reuse
    entry_path.chmod(0o644)
    entry_path.unlink()
    assert_refused(cli("publish", make_dist(tmp_path / "c", releases.example_other_bytes),
                       env=publish_env(url)), "publish.yanked")
    del before[entry_path.relative_to(store).as_posix()]
    assert tree_snapshot(store) == before


def test_yank_refusals(tmp_path: Path) -> None:
    store, url = _store(tmp_path)
    assert_refused(cli("yank", "example", "9.9.9", "--reason", "x", env=publish_env(url)),
                   "yank.not-published")
    assert_refused(cli("yank", "example", "9.9.9", "--target", HOST, "--reason", "x",
                       env=publish_env(url)), "yank.not-published")
    assert_refused(cli("yank", "example", "0.1.0", "--reason", " ", env=publish_env(url)),
                   "yank.reason")
    assert_refused(cli("yank", "example", "0.1.0", "--reason", "a\x1bb", env=publish_env(url)),
                   "yank.reason")
    assert tree_snapshot(store) == {}


def test_exclusive_create_decides_a_race_after_both_passed_preflight(
        tmp_path: Path, releases: Releases) -> None:
    """Both publishers saw the name absent; the index link lets exactly one of them win."""
    dist_a = make_dist(tmp_path / "a", releases.example)
    dist_b = make_dist(tmp_path / "b", releases.example_other_bytes)
    item_a, problems_a = check_archive(dist_a / releases.example.name, None)
    item_b, problems_b = check_archive(dist_b / releases.example.name, None)
    assert item_a is not None and item_b is not None and not problems_a and not problems_b
    store, _url = _store(tmp_path)
    first, second = FileStore(FileAddress(root=store)), FileStore(FileAddress(root=store))
    assert first.state(*KEY).status == ABSENT
    assert second.state(*KEY).status == ABSENT
    first.upload(item_a)
    second.upload(item_b)
    assert first.commit(item_a) == PUBLISHED
    with pytest.raises(Refused) as refused:
        second.commit(item_b)
    assert refused.value.codes() == ["publish.conflict"]
    assert first.state(*KEY).archive_sha256 == item_a.digest.sha256


def test_two_concurrent_publishers_exactly_one_wins(tmp_path: Path,
                                                    releases: Releases) -> None:
    store, url = _store(tmp_path)
    dists = [make_dist(tmp_path / "a", releases.example),
             make_dist(tmp_path / "b", releases.example_other_bytes)]
    env = {**publish_env(url), "COLUMNS": "200"}
    processes = [subprocess.Popen(
        [sys.executable, "-m", "horon_bundle", "publish", str(dist)],
        env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for dist in dists]
    outcomes = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in processes]
    for process in processes:
        for stream in (process.stdout, process.stderr):
            if stream:
                stream.close()
    statuses = sorted(status for status, _ in outcomes)
    assert statuses == [0, 1], outcomes
    loser = next(err for status, err in outcomes if status == 1)
    assert "ERROR publish.conflict" in loser
    assert "Traceback" not in loser
    winner = next(i for i, (status, _) in enumerate(outcomes) if status == 0)
    winning_sha = _sha(dists[winner] / releases.example.name)
    entry = json.loads((store / "index" / "example" / "0.1.0" / f"{HOST}.json").read_text())
    assert entry["archive"]["sha256"] == winning_sha


SIGSTORE_TESTDATA = Path(__file__).resolve().parent / "data" / "sigstore"
STAGING_SIGNER = ("--staging", "--identity", "william@yossarian.net",
                  "--issuer", "https://github.com/login/oauth")


def test_required_signatures_are_checked_before_anything_is_written(
        tmp_path: Path, releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    store, url = _store(tmp_path)
    assert_refused(cli("publish", dist, "--require-signature", env=publish_env(url)),
                   "signature.options", status=2)
    assert_refused(cli("publish", dist, *STAGING_SIGNER, env=publish_env(url)),
                   "signature.options", status=2)
    missing = cli("publish", dist, "--require-signature", *STAGING_SIGNER,
                  env=publish_env(url))
    assert_refused(missing, "signature.missing")
    # a real Sigstore bundle, valid for another file: refused as not signing this archive
    bundle = SIGSTORE_TESTDATA / "bundle_v3.txt.sigstore"
    (dist / (releases.example.name + ".sigstore.json")).write_bytes(bundle.read_bytes())
    invalid = cli("publish", dist, "--require-signature", *STAGING_SIGNER,
                  env=publish_env(url))
    assert_refused(invalid, "signature.invalid")
    assert tree_snapshot(store) == {}


def test_a_signature_of_other_bytes_is_never_published_as_the_archives(
        tmp_path: Path, releases: Releases) -> None:
    """Without a signer required, publish cannot judge who signed, but it can compare
    digests: a `.sigstore.json` left beside a rebuilt archive (it signs the earlier bytes) is
    refused, and nothing is written; one naming this archive's digest is published."""
    dist = make_dist(tmp_path / "dist", releases.example)
    archive = dist / releases.example.name
    store, url = _store(tmp_path)
    bundle = SIGSTORE_TESTDATA / "bundle_v3.txt.sigstore"
    side = archive.with_name(archive.name + ".sigstore.json")
    side.write_bytes(bundle.read_bytes())
    stale = cli("publish", dist, env=publish_env(url))
    assert_refused(stale, "publish.side-file")
    assert f"{side.name}: signs sha256 " in stale.stderr
    assert f"not this archive ({_sha(archive)})" in stale.stderr
    assert tree_snapshot(store) == {}
    document = json.loads(bundle.read_bytes())
    document["messageSignature"]["messageDigest"]["digest"] = "not base64!"
    side.write_text(json.dumps(document))
    malformed = cli("publish", dist, env=publish_env(url))
    assert_refused(malformed, "publish.side-file")
    assert "names no SHA-256 it signs" in malformed.stderr
    assert tree_snapshot(store) == {}
    place_signature(bundle, archive)
    assert cli("publish", dist, env=publish_env(url)).status == 0
    assert _sha(side) in tree_snapshot(store).values() or any(
        _sha(side) in name for name in tree_snapshot(store))  # stored under its digest
