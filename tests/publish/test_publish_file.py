"""Publishing to a `file://` store: layout, idempotence, immutability, races, yank."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.model.sidefiles import BUILD_RECORD_FORMAT
from horon_bundle.publish import preflight
from horon_bundle.publish.destinations.file_store import FileStore
from horon_bundle.publish.destinations.interface import ABSENT, PUBLISHED, FileAddress
from horon_bundle.publish.preflight import (
    PublishRequest,
    check_archive,
    check_harness_archive,
    declaration_findings,
)
from horon_bundle.verify import check_table
from tests.conftest import BuiltExample
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.publish_support import (
    Releases,
    make_dist,
    place_signature,
    publish_env,
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
    assert "already yanked" in again.stdout

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


@pytest.mark.slow
@pytest.mark.process
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


SIGSTORE_TESTDATA = Path(__file__).resolve().parent.parent / "data" / "sigstore"
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


# --- a harness zip and the files beside it ---------------------------------------------------
HARNESS_ZIP = "guard-kit-1.2.0.zip"
SIGNATURE_BUNDLE = SIGSTORE_TESTDATA / "bundle_v3.txt.sigstore"


@pytest.fixture(name="harness_build", scope="module")
def harness_build_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One harness zip built by the real CLI, its ref beside it (no cargo needed)."""
    from tests.harness_support import built_zip  # noqa: PLC0415 - harness tests only

    archive = built_zip(tmp_path_factory.mktemp("harness"))
    assert archive.name == HARNESS_ZIP
    return archive


def _harness_dist(root: Path, archive: Path) -> Path:
    """A release directory of the harness zip, its ref, and every other file beside it, each
    describing this zip: `.sha256`, `.build.json`, `.sigstore.json` (a real bundle naming its
    digest) and `.provenance.sigstore.json` (a real bundle, structure checked only)."""
    root.mkdir(parents=True)
    zipped = root / archive.name
    zipped.write_bytes(archive.read_bytes())
    ref = archive.name + ".ref.json"
    (root / ref).write_bytes(archive.with_name(ref).read_bytes())
    sha = _sha(zipped)
    (root / (archive.name + ".sha256")).write_text(f"{sha}  {archive.name}\n")
    (root / (archive.name + ".build.json")).write_text(json.dumps(
        {"format": BUILD_RECORD_FORMAT, "archive": {"name": archive.name, "sha256": sha}}))
    place_signature(SIGNATURE_BUNDLE, zipped)
    (root / (archive.name + ".provenance.sigstore.json")).write_bytes(
        SIGNATURE_BUNDLE.read_bytes())
    return root


def test_a_harness_zip_is_published_with_every_file_beside_it(tmp_path: Path,
                                                              harness_build: Path) -> None:
    dist = _harness_dist(tmp_path / "dist", harness_build)
    archive = dist / HARNESS_ZIP
    item, problems = check_archive(archive, None)
    assert problems == []
    assert item is not None and item.harness is not None
    assert item.digest.sha256 == _sha(archive)
    assert (item.harness.name, item.harness.version) == ("guard-kit", "1.2.0")
    assert item.harness.description == "Guards for agents"  # its OCI description annotation
    assert {f.role: f.name for f in item.side_files} == {
        "signature": f"{HARNESS_ZIP}.sigstore.json",
        "provenance-signature": f"{HARNESS_ZIP}.provenance.sigstore.json",
        "build-record": f"{HARNESS_ZIP}.build.json", "ref": f"{HARNESS_ZIP}.ref.json"}

    store, url = _store(tmp_path)
    result = cli("publish", dist, env=publish_env(url))
    assert result.status == 0, result.stderr
    entry = json.loads((store / "harness" / "index" / "guard-kit" / "1.2.0.json").read_text())
    assert entry["archive"]["sha256"] == _sha(archive)
    assert {f["role"]: f["sha256"] for f in entry["files"]} == {
        "signature": _sha(dist / f"{HARNESS_ZIP}.sigstore.json"),
        "provenance-signature": _sha(dist / f"{HARNESS_ZIP}.provenance.sigstore.json"),
        "build-record": _sha(dist / f"{HARNESS_ZIP}.build.json"),
        "ref": _sha(dist / f"{HARNESS_ZIP}.ref.json")}


def _wrong_sha256(dist: Path) -> str:
    (dist / f"{HARNESS_ZIP}.sha256").write_text("0" * 64 + f"  {HARNESS_ZIP}\n")
    return f"{HARNESS_ZIP}.sha256: does not state sha256 {_sha(dist / HARNESS_ZIP)}"


def _record_of_other_bytes(dist: Path) -> str:
    (dist / f"{HARNESS_ZIP}.build.json").write_text(json.dumps(
        {"format": BUILD_RECORD_FORMAT, "archive": {"name": HARNESS_ZIP, "sha256": "0" * 64}}))
    return f"{HARNESS_ZIP}.build.json: archive is not {{name: {HARNESS_ZIP}, sha256: " \
           f"{_sha(dist / HARNESS_ZIP)}}}"


def _record_of_another_format(dist: Path) -> str:
    (dist / f"{HARNESS_ZIP}.build.json").write_text(json.dumps({"format": "other"}))
    return f"{HARNESS_ZIP}.build.json: not a {BUILD_RECORD_FORMAT} document"


def _signature_of_other_bytes(dist: Path) -> str:
    (dist / f"{HARNESS_ZIP}.sigstore.json").write_bytes(SIGNATURE_BUNDLE.read_bytes())
    return f"{HARNESS_ZIP}.sigstore.json: signs sha256 "


def _provenance_signature_not_sigstore(dist: Path) -> str:
    (dist / f"{HARNESS_ZIP}.provenance.sigstore.json").write_text('{"mediaType": "text/plain"}')
    return f"{HARNESS_ZIP}.provenance.sigstore.json: not a Sigstore bundle"


def _ref_a_directory(dist: Path) -> str:
    ref = dist / f"{HARNESS_ZIP}.ref.json"
    ref.unlink()
    ref.mkdir()
    return f"{ref.name}: a directory, not a regular file"


def _ref_of_other_bytes(dist: Path) -> str:
    ref = dist / f"{HARNESS_ZIP}.ref.json"
    ref.write_text(json.dumps({"name": "guard-kit", "sha256": "0" * 64}))
    return f"{HARNESS_ZIP}: sha256 {_sha(dist / HARNESS_ZIP)} != {ref.name} {'0' * 64}"


@pytest.mark.parametrize(("spoil", "code"), [
    (_wrong_sha256, "publish.side-file"),
    (_record_of_other_bytes, "publish.side-file"),
    (_record_of_another_format, "publish.side-file"),
    (_signature_of_other_bytes, "publish.side-file"),
    (_provenance_signature_not_sigstore, "publish.side-file"),
    (_ref_a_directory, "publish.side-file"),
    (_ref_of_other_bytes, "ref.digest"),
], ids=["sha256", "build-record-digest", "build-record-format", "stale-signature",
        "provenance-signature", "ref-directory", "ref-digest"])
def test_a_wrong_file_beside_a_harness_zip_publishes_nothing(
        tmp_path: Path, harness_build: Path, spoil: Callable[[Path], str], code: str) -> None:
    dist = _harness_dist(tmp_path / "dist", harness_build)
    said = spoil(dist)
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    assert_refused(result, code)
    assert set(result.codes) == {code}, result.stderr
    assert said in result.stderr
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


def _assert_only_signature_invalid(tmp_path: Path, dist: Path) -> None:
    """Publishing `dist` with the staging signer required is refused as signature.invalid
    alone, and nothing is written."""
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, "--require-signature", *STAGING_SIGNER, env=publish_env(url))
    assert_refused(result, "signature.invalid")
    assert set(result.codes) == {"signature.invalid"}, result.stderr
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


def test_a_required_signer_judges_a_harness_zips_signature_alone(tmp_path: Path,
                                                                 harness_build: Path) -> None:
    """With a signer required, a signature of other bytes is `signature.invalid` (its digest
    is checked by its verification), not also a side file left from an earlier build."""
    dist = _harness_dist(tmp_path / "dist", harness_build)
    _signature_of_other_bytes(dist)
    _assert_only_signature_invalid(tmp_path, dist)


def test_a_harness_zip_that_is_no_longer_a_regular_file_is_refused(
        tmp_path: Path, harness_build: Path) -> None:
    """What `check_harness_archive` says when the zip `check_archive` found a regular file is
    gone, or a symbolic link, by the time it is judged: the archive's own refusal, no item."""
    dist = _harness_dist(tmp_path / "dist", harness_build)
    link = dist / "linked-1.2.0.zip"
    link.symlink_to(dist / HARNESS_ZIP)
    item, problems = check_harness_archive(link, None)
    assert item is None
    assert [(f.code.name, f.message) for f in problems] == [
        ("input.not-a-file", f"archive {link}: a symbolic link")]


def test_a_harness_zip_gone_before_it_is_judged_is_unreadable(tmp_path: Path) -> None:
    item, problems = check_harness_archive(tmp_path / "gone-1.2.0.zip", None)
    assert item is None
    assert [(f.code.name, f.message) for f in problems] == [
        ("input.unreadable", "gone-1.2.0.zip: No such file or directory")]


def test_a_declaration_found_twice_is_judged_once(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The release directory, the working directory and a --workspace that are one directory
    hold one declaration: its refusals are listed once, not once per way it was found, each
    naming the file, with the reader's hint kept."""
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "horon-release.toml").write_text(
        'schema = 1\n[publish]\ndestination = "oci://ghcr.io/acme"\ndestinaton = "x"\n'
        '[[plugin]]\nid = "example"\nname = "Example"\npackage = "horon-example"\n'
        'features = []\ntargets = ["x86_64-unknown-linux-gnu"]\nprofile = "release"\n'
        'license-file = "LICENSE"\n')
    monkeypatch.chdir(dist)
    findings = declaration_findings(PublishRequest(dist_dir=dist, workspaces=(dist, dist)))
    declaration = dist / "horon-release.toml"
    assert [(f.code.name, f.message, f.hint) for f in findings] == [
        ("declaration.unknown-key",
         f"{declaration}: horon-release.toml: publish.destinaton: unknown key",
         "Did you mean `destination`? An unknown key is refused, never ignored."),
        ("declaration.destination",
         f"{declaration}: horon-release.toml: publish.destination: 'oci://ghcr.io/acme': "
         "a committed declaration must say 'unconfigured'", "")]


def _touched_while_checked(monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
    """Another process sets `path`'s times (same bytes) after its judge has read it and
    before the checks end: the moment is made certain by doing it when the checks ask which
    proving checks passed (a thread touching it now and then was a race the checks could
    win on a fast or a loaded machine)."""
    real = check_table.unproven

    def unproven_after_a_touch(*args: Any, **kwargs: Any) -> Any:
        later = path.stat().st_mtime_ns + 1_000_000_000
        os.utime(path, ns=(later, later))
        return real(*args, **kwargs)

    monkeypatch.setattr(preflight, "unproven", unproven_after_a_touch)


def test_a_harness_zip_touched_while_it_is_checked_is_integrity(
        tmp_path: Path, harness_build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process keeps setting the zip's times while it is judged (same bytes): its
    identity after the checks is not the one before, so what was judged is not known to be
    what would be uploaded."""
    dist = _harness_dist(tmp_path / "dist", harness_build)
    archive = dist / HARNESS_ZIP
    _touched_while_checked(monkeypatch, archive)
    item, problems = check_harness_archive(archive, None)
    assert [(f.code.name, f.message) for f in problems] == [
        ("publish.integrity", f"{HARNESS_ZIP}: changed while it was being checked")]
    assert item is not None and item.digest.sha256 == _sha(archive)


# --- a native archive and the files beside it ------------------------------------------------
def _native_dist(root: Path, example: BuiltExample) -> Path:
    """The example release's archive with what build wrote beside it (`.sha256`,
    `.build.json`), a `.sigstore.json` naming its digest and a `.provenance.sigstore.json`."""
    dist = make_dist(root, example.archive)
    archive = dist / example.archive.name
    place_signature(SIGNATURE_BUNDLE, archive)
    (dist / (archive.name + ".provenance.sigstore.json")).write_bytes(
        SIGNATURE_BUNDLE.read_bytes())
    return dist


def test_a_native_archive_is_published_with_every_file_beside_it(
        tmp_path: Path, example_release: BuiltExample) -> None:
    dist = _native_dist(tmp_path / "dist", example_release)
    archive = dist / example_release.archive.name
    name = archive.name
    item, problems = check_archive(archive, None)
    assert problems == []
    assert item is not None and item.harness is None and item.archive == archive
    assert item.digest.sha256 == _sha(archive) and item.digest.size == archive.stat().st_size
    assert item.manifest is not None and item.native_key == KEY
    with zipfile.ZipFile(archive) as opened:
        assert item.manifest_bytes == opened.read("plugin.json")
    assert {f.role: f.name for f in item.side_files} == {
        "signature": f"{name}.sigstore.json",
        "provenance-signature": f"{name}.provenance.sigstore.json",
        "build-record": f"{name}.build.json"}

    store, url = _store(tmp_path)
    result = cli("publish", dist, env=publish_env(url))
    assert result.status == 0, result.stderr
    entry = json.loads((store / "index" / "example" / "0.1.0" / f"{HOST}.json").read_text())
    assert entry["archive"]["sha256"] == _sha(archive)
    assert entry["plugin_json"]["sha256"] == hashlib.sha256(item.manifest_bytes).hexdigest()
    assert entry["signature"]["sha256"] == _sha(dist / f"{name}.sigstore.json")
    assert entry["build_record"]["sha256"] == _sha(dist / f"{name}.build.json")
    blobs = store / "blobs" / "sha256"
    assert (blobs / _sha(dist / f"{name}.provenance.sigstore.json")).is_file()


def _native_spoil(dist: Path, name: str, case: str) -> str:
    sha = _sha(dist / name)
    if case == "sha256":
        (dist / f"{name}.sha256").write_text("0" * 64 + f"  {name}\n")
        return f"{name}.sha256: does not state sha256 {sha} for {name}"
    if case == "build-record-digest":
        (dist / f"{name}.build.json").write_text(json.dumps(
            {"format": BUILD_RECORD_FORMAT, "archive": {"name": name, "sha256": "0" * 64}}))
        return f"{name}.build.json: archive is not {{name: {name}, sha256: {sha}}}"
    if case == "build-record-format":
        (dist / f"{name}.build.json").write_text(json.dumps({"format": "other"}))
        return f"{name}.build.json: not a {BUILD_RECORD_FORMAT} document"
    if case == "stale-signature":
        (dist / f"{name}.sigstore.json").write_bytes(SIGNATURE_BUNDLE.read_bytes())
        return f"{name}.sigstore.json: signs sha256 "
    assert case == "provenance-signature"
    (dist / f"{name}.provenance.sigstore.json").write_text('{"mediaType": "text/plain"}')
    return f"{name}.provenance.sigstore.json: not a Sigstore bundle"


@pytest.mark.parametrize("case", ["sha256", "build-record-digest", "build-record-format",
                                  "stale-signature", "provenance-signature"])
def test_a_wrong_file_beside_a_native_archive_publishes_nothing(
        tmp_path: Path, example_release: BuiltExample, case: str) -> None:
    dist = _native_dist(tmp_path / "dist", example_release)
    said = _native_spoil(dist, example_release.archive.name, case)
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    assert_refused(result, "publish.side-file")
    assert set(result.codes) == {"publish.side-file"}, result.stderr
    assert said in result.stderr
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


def test_a_required_signer_judges_a_native_archives_signature_alone(
        tmp_path: Path, example_release: BuiltExample) -> None:
    dist = _native_dist(tmp_path / "dist", example_release)
    _native_spoil(dist, example_release.archive.name, "stale-signature")
    _assert_only_signature_invalid(tmp_path, dist)


def test_a_native_archive_touched_while_it_is_checked_is_integrity(
        tmp_path: Path, example_release: BuiltExample, monkeypatch: pytest.MonkeyPatch) -> None:
    dist = _native_dist(tmp_path / "dist", example_release)
    archive = dist / example_release.archive.name
    _touched_while_checked(monkeypatch, archive)
    item, problems = check_archive(archive, None)
    assert [(f.code.name, f.message) for f in problems] == [
        ("publish.integrity", f"{archive.name}: changed while it was being checked")]
    assert item is not None and item.digest.sha256 == _sha(archive)


def test_an_archive_that_is_not_a_regular_file_is_never_opened(
        tmp_path: Path, example_release: BuiltExample) -> None:
    dist = _native_dist(tmp_path / "dist", example_release)
    link = dist / "linked.zip"
    link.symlink_to(dist / example_release.archive.name)
    fifo = dist / "fifo.zip"
    os.mkfifo(fifo)
    for path, kind in ((link, "a symbolic link"), (fifo, "a FIFO, not a regular file")):
        item, problems = check_archive(path, None)
        assert item is None
        assert [(f.code.name, f.message) for f in problems] == [
            ("input.not-a-file", f"archive {path}: {kind}")]
    item, problems = check_archive(dist / "gone.zip", None)
    assert item is None
    assert [(f.code.name, f.message) for f in problems] == [
        ("input.unreadable", "gone.zip: No such file or directory")]


def test_a_zip_without_a_plugin_is_refused_by_its_judge_alone(tmp_path: Path) -> None:
    """A well-formed zip that holds neither plugin.json nor a harness catalogue: hashed and
    judged, refused for what it lacks, with no publish check run on a manifest it lacks."""
    dist = tmp_path / "dist"
    dist.mkdir()
    archive = dist / "example-0.1.0-x86_64-unknown-linux-gnu.zip"
    with zipfile.ZipFile(archive, "w") as written:
        entry = zipfile.ZipInfo("README.md", date_time=(2026, 1, 1, 0, 0, 0))
        entry.external_attr = 0o100644 << 16
        written.writestr(entry, "no plugin here\n")
    item, problems = check_archive(archive, None)
    assert item is None
    assert [(f.code.name, f.message) for f in problems] == [
        ("layout.missing", f"{archive.name}: plugin.json is missing"),
        ("layout.missing", f"{archive.name}: SHA256SUMS is missing")]
    store, url = _store(tmp_path)
    before = tree_snapshot(dist)
    result = cli("publish", dist, env=publish_env(url))
    assert_refused(result, "layout.missing")
    assert set(result.codes) == {"layout.missing"}, result.stderr
    assert tree_snapshot(store) == {}
    assert tree_snapshot(dist) == before


# --- the files beside a native archive as they are read ---------------------------------------
def _side_linked(dist: Path, name: str) -> list[tuple[str, str]]:
    """Each side file a symbolic link to a copy of what it should hold: never followed."""
    problems = []
    for suffix in (".sha256", ".build.json", ".sigstore.json"):
        side = dist / f"{name}{suffix}"
        real = dist / f".real{suffix}"
        side.rename(real)
        side.symlink_to(real)
        problems.append(("publish.side-file", f"side file {side}: a symbolic link"))
    return problems


def _side_not_json(dist: Path, name: str) -> list[tuple[str, str]]:
    for suffix in (".build.json", ".sigstore.json"):
        (dist / f"{name}{suffix}").write_bytes(b'{"format": ')
    return [("json.syntax", f"{name}{suffix}: Expecting value (line 1, column 12)")
            for suffix in (".build.json", ".sigstore.json")]


def _side_not_objects(dist: Path, name: str) -> list[tuple[str, str]]:
    for suffix in (".build.json", ".sigstore.json"):
        (dist / f"{name}{suffix}").write_bytes(b"[]\n")
    return [("publish.side-file", f"{name}.build.json: not a {BUILD_RECORD_FORMAT} document"),
            ("publish.side-file", f"{name}.sigstore.json: not a Sigstore bundle "
                                  "(mediaType 'None')")]


def _side_large(dist: Path, name: str) -> list[tuple[str, str]]:
    """Side files over strict JSON's default limit (1 MiB) and under theirs (4 MiB): valid."""
    for suffix in (".build.json", ".sigstore.json"):
        side = dist / f"{name}{suffix}"
        side.write_bytes(side.read_bytes() + b" " * (2 << 20))
    return []


@pytest.mark.parametrize("spoil", [_side_linked, _side_not_json, _side_not_objects, _side_large],
                         ids=["linked", "not-json", "not-objects", "large"])
def test_the_files_beside_a_native_archive_are_read_as_themselves(
        tmp_path: Path, example_release: BuiltExample,
        spoil: Callable[[Path, str], list[tuple[str, str]]]) -> None:
    """A side file that is a symbolic link is refused (even to the right bytes), one that is
    not JSON is refused naming it, one that is JSON but no object is refused as no document of
    its kind, and one of 2 MiB is read whole: each problem listed once, as it is."""
    dist = _native_dist(tmp_path / "dist", example_release)
    name = example_release.archive.name
    expected = spoil(dist, name)
    item, problems = check_archive(dist / name, None)
    assert [(f.code.name, f.message) for f in problems] == expected
    assert item is not None and item.digest.sha256 == _sha(dist / name)
    if not expected:
        assert {f.role: f.data for f in item.side_files} == {
            "signature": (dist / f"{name}.sigstore.json").read_bytes(),
            "provenance-signature": (dist / f"{name}.provenance.sigstore.json").read_bytes(),
            "build-record": (dist / f"{name}.build.json").read_bytes()}


def test_side_files_whose_names_are_too_long_are_unreadable(
        tmp_path: Path, example_release: BuiltExample) -> None:
    """An archive whose name leaves no room for a side file's suffix: each side file cannot
    be opened (ENAMETOOLONG), `input.unreadable`, not a side file found wanting."""
    dist = tmp_path / "dist"
    dist.mkdir()
    archive = dist / ("e" * 247 + ".zip")  # 251 bytes: + ".sha256" is past NAME_MAX (255)
    archive.write_bytes(example_release.archive.read_bytes())
    _item, problems = check_archive(archive, None)
    unreadable = [f.message for f in problems if f.code.name == "input.unreadable"]
    assert unreadable == [f"side file {archive}{suffix}: File name too long" for suffix in (
        ".sha256", ".build.json", ".sigstore.json", ".provenance.sigstore.json")]
    assert {f.code.name for f in problems} == {"input.unreadable", "publish.archive-name"}
