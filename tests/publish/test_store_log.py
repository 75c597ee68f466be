"""A `file://` store published with HORON_PUBLISH_LOG_KEY keeps a C2SP tlog-tiles log
(publish/destinations/store_log.py): one leaf per publication, the exact bytes of the index
entry (or yank) the run wrote; Go's reference code (note.Open, tlog.TreeHash, ReadTileData,
CheckRecord) accepts what we write."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from horon_bundle.core.checkpoint import CHECKPOINT
from tests.harness_support import built_zip
from tests.helpers import HOST, assert_refused, cli, tree_snapshot
from tests.install_support import Paused
from tests.publish_support import Registry, Releases, make_dist, publish_env
from tests.tlog_support import GoChecker, key_file


def _setup(tmp_path: Path) -> tuple[Path, dict[str, str], str]:
    store = tmp_path / "store"
    store.mkdir()
    key, signer = key_file(tmp_path)
    env = {**publish_env(f"file://{store}"), "HORON_PUBLISH_LOG_KEY": str(key)}
    return store, env, signer.verifier.text


def _entries(store: Path, *places: str) -> list[bytes]:
    return [(store / place).read_bytes() for place in places]


def test_each_publication_is_a_leaf_go_reads(tmp_path: Path, releases: Releases,
                                             go_checker: GoChecker) -> None:
    store, env, verifier = _setup(tmp_path)
    dist = make_dist(tmp_path / "dist", releases.example, releases.clean)
    first = cli("publish", dist, "--json", env=env)
    assert first.status == 0, first.stderr
    log = first.json()["log"]
    places = sorted(str(p.relative_to(store)) for p in (store / "index").rglob("*.json"))
    assert log["status"] == "appended" and log["size"] == 2
    assert [a["entry"] for a in log["added"]] == places
    verdict = go_checker.check(store / "log", verifier)
    assert verdict.ok, verdict.error
    assert verdict.leaves == _entries(store, *places)
    assert (store / "log" / "checkpoint").read_text().startswith("example.com/plugins\n2\n")
    assert "log appended 2 new leaves, 2 in all" in first.stderr

    before = tree_snapshot(store)
    again = cli("publish", dist, "--json", env=env)
    assert again.status == 0, again.stderr
    assert again.json()["log"]["status"] == "unchanged"
    assert tree_snapshot(store) == before

    yanked = cli("yank", "example", "0.1.0", "--reason", "broken", "--json", env=env)
    assert yanked.status == 0, yanked.stderr
    assert yanked.json()["log"]["size"] == 3
    verdict = go_checker.check(store / "log", verifier)
    assert verdict.ok, verdict.error
    yank = store / "yanks" / "example" / "0.1.0" / f"{HOST}.json"
    assert verdict.leaves[2] == yank.read_bytes()


def test_a_harness_zip_is_a_leaf_and_a_keyless_publish_leaves_the_log(
        tmp_path: Path, releases: Releases, go_checker: GoChecker) -> None:
    store, env, verifier = _setup(tmp_path)
    harness = built_zip(tmp_path / "harness")
    assert cli("publish", make_dist(tmp_path / "d1", harness), env=env).status == 0
    verdict = go_checker.check(store / "log", verifier)
    assert verdict.ok, verdict.error
    [harness_entry] = (store / "harness" / "index").rglob("*.json")
    assert verdict.leaves == [harness_entry.read_bytes()]

    log_before = tree_snapshot(store / "log")
    keyless = {k: v for k, v in env.items() if k != "HORON_PUBLISH_LOG_KEY"}
    dist = make_dist(tmp_path / "d2", releases.example)
    result = cli("publish", dist, "--json", env=keyless)
    assert result.status == 0, result.stderr
    assert result.json()["log"]["status"] == "not-kept"
    assert "log not extended: HORON_PUBLISH_LOG_KEY is not set" in result.stderr
    assert tree_snapshot(store / "log") == log_before
    # the same command with the key adds what the keyless run wrote
    keyed = cli("publish", dist, "--json", env=env)
    assert keyed.json()["log"]["size"] == 2, keyed.stderr
    assert go_checker.check(store / "log", verifier).ok


@pytest.mark.slow
def test_the_first_keyed_publish_logs_what_the_store_held(
        tmp_path: Path, releases: Releases, go_checker: GoChecker) -> None:
    store, env, verifier = _setup(tmp_path)
    keyless = {k: v for k, v in env.items() if k != "HORON_PUBLISH_LOG_KEY"}
    assert cli("publish", make_dist(tmp_path / "d1", releases.example), env=keyless).status == 0
    assert not (store / "log").exists()
    result = cli("publish", make_dist(tmp_path / "d2", releases.clean), "--json", env=env)
    assert [a["entry"] for a in result.json()["log"]["added"]] == [
        f"index/clean/0.1.0/{HOST}.json", f"index/example/0.1.0/{HOST}.json"]
    verdict = go_checker.check(store / "log", verifier)
    assert verdict.ok and verdict.size == 2, verdict.error


@pytest.mark.parametrize("mode", [0o644, 0o640])
def test_a_signer_file_others_may_read_is_refused(tmp_path: Path, releases: Releases,
                                                  mode: int) -> None:
    store, env, _ = _setup(tmp_path)
    Path(env["HORON_PUBLISH_LOG_KEY"]).chmod(mode)
    before = tree_snapshot(store)
    result = cli("publish", make_dist(tmp_path / "dist", releases.example), env=env)
    assert_refused(result, "log.key-file", status=3)
    assert f"mode {mode:04o}" in result.stderr
    assert tree_snapshot(store) == before


def test_a_checkpoint_of_another_key_is_never_extended(tmp_path: Path,
                                                       releases: Releases) -> None:
    store, env, _ = _setup(tmp_path)
    assert cli("publish", make_dist(tmp_path / "d1", releases.example), env=env).status == 0
    (tmp_path / "other").mkdir()
    other, _ = key_file(tmp_path / "other")
    before = tree_snapshot(store / "log")
    result = cli("publish", make_dist(tmp_path / "d2", releases.clean),
                 env={**env, "HORON_PUBLISH_LOG_KEY": str(other)})
    assert_refused(result, "log.signature")
    assert tree_snapshot(store / "log") == before


@pytest.mark.process
@pytest.mark.slow
@pytest.mark.parametrize("step", ["publish.log-tiles", "publish.log-checkpoint"])
def test_a_kill_leaves_the_old_checkpoint_valid_and_the_next_run_completes(
        tmp_path: Path, releases: Releases, go_checker: GoChecker, step: str) -> None:
    store, env, verifier = _setup(tmp_path)
    assert cli("publish", make_dist(tmp_path / "d1", releases.clean), env=env).status == 0
    old = (store / "log" / "checkpoint").read_bytes()
    dist = make_dist(tmp_path / "d2", releases.example)
    killed = cli("publish", dist, env={**env, CHECKPOINT: f"kill:{step}"})
    assert killed.status == -signal.SIGKILL
    assert (store / "log" / "checkpoint").read_bytes() == old
    verdict = go_checker.check(store / "log", verifier)
    assert verdict.ok and verdict.size == 1, verdict.error
    again = cli("publish", dist, "--json", env=env)
    assert again.json()["log"]["size"] == 2, again.stderr
    assert go_checker.check(store / "log", verifier).ok


@pytest.mark.process
@pytest.mark.slow
def test_two_concurrent_publishers_never_fork_the_log(tmp_path: Path, releases: Releases,
                                                      go_checker: GoChecker) -> None:
    """A holds the log's lock, its tiles written and its checkpoint next; B, which committed
    its entry meanwhile, waits for the lock, then extends A's checkpoint."""
    store, env, verifier = _setup(tmp_path)
    first = Paused(["publish", make_dist(tmp_path / "a", releases.example)],
                   "publish.log-checkpoint", tmp_path / "marker", env=env)
    second = subprocess.Popen(
        [sys.executable, "-m", "horon_bundle", "publish",
         str(make_dist(tmp_path / "b", releases.clean))],
        env={**os.environ, **env}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (store / "index" / "clean").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)
    assert second.poll() is None  # waiting for the lock A holds
    assert first.resume().status == 0
    _out, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    verdict = go_checker.check(store / "log", verifier)
    assert verdict.ok and verdict.size == 2, verdict.error
    assert verdict.leaves == _entries(store, f"index/example/0.1.0/{HOST}.json",
                                      f"index/clean/0.1.0/{HOST}.json")


def test_a_registry_keeps_no_log_and_the_run_says_so(tmp_path: Path, registry: Registry,
                                                      releases: Releases) -> None:
    key, _ = key_file(tmp_path)
    env = {**publish_env(registry.destination), "HORON_PUBLISH_LOG_KEY": str(key)}
    result = cli("publish", make_dist(tmp_path / "dist", releases.example), "--json", env=env)
    assert result.status == 0, result.stderr
    assert "log" not in result.json()
    assert "keeps no transparency log (only a file:// store does)" in result.stderr
