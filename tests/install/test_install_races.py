"""Concurrent writers of one agent home: the lock serialises them, the state file survives.

Every process is a real `horon-bundle` started at the same moment; the 2-core machine makes
their verification overlap, the lock decides the order of their writes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.helpers import HOST, assert_refused, tree_snapshot
from tests.install_support import (
    Bundles,
    copy_location,
    debris,
    hb,
)

pytestmark = [pytest.mark.cargo, pytest.mark.process, pytest.mark.slow]


def _start(args: Sequence[str | Path]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "horon_bundle", *map(str, args)],
                            env={**os.environ, "COLUMNS": "200"}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _finish(processes: list[subprocess.Popen[str]]) -> list[tuple[int, str, str]]:
    results = []
    for process in processes:
        out, err = process.communicate(timeout=600)
        results.append((process.returncode, out, err))
    return results


def test_eight_concurrent_installs_of_one_bundle_install_it_once(bundles: Bundles,
                                                                 tmp_path: Path) -> None:
    home = tmp_path / "home"  # missing: the racers also race to create it
    results = _finish([_start(["install", bundles.v1, "--home", home, "--json"])
                       for _ in range(8)])
    assert [status for status, _out, _err in results] == [0] * 8, results
    statuses = sorted(json.loads(out)["status"] for _status, out, _err in results)
    assert statuses == ["already-installed"] * 7 + ["installed"]
    assert tree_snapshot(copy_location(home, "0.1.0")) == tree_snapshot(bundles.v1_dir)
    assert debris(home) == []
    assert sorted(p.name for p in (home / "native-plugins").iterdir()) == ["example"]
    assert hb("status", "--verify", home=home).status == 0


def test_two_concurrent_installs_of_other_bytes_under_one_version_have_one_winner(
        bundles: Bundles, tmp_path: Path) -> None:
    home = tmp_path / "home"
    results = _finish([_start(["install", source, "--home", home, "--json"])
                       for source in (bundles.v1, bundles.v1_other)])
    statuses = sorted(status for status, _out, _err in results)
    assert statuses == [0, 1], results
    loser = next(r for r in results if r[0] == 1)
    assert "ERROR install.version-conflict" in loser[2] and "Traceback" not in loser[2]
    winner = json.loads(next(out for status, out, _err in results if status == 0))
    v1_digest = hashlib.sha256(bundles.v1.read_bytes()).hexdigest()
    installed = bundles.v1 if winner["archive_sha256"] == v1_digest else bundles.v1_other
    assert hb("check", "example", "0.1.0", home=home).status == 0
    assert hb("install", installed, "--json", home=home).json()["status"] == "already-installed"
    assert debris(home) == []


def test_concurrent_enable_and_disable_never_corrupt_the_state_file(bundles: Bundles,
                                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    assert hb("install", bundles.v2, home=home).status == 0
    script = ("import sys\nfrom horon_bundle.cli.main import main\n"
              "home, rounds, *command = sys.argv[1:]\n"
              "for _ in range(int(rounds)):\n"
              "    status = main([*command, '--home', home])\n"
              "    if status != 0:\n        sys.exit(status)\n")
    commands = [["enable", "example", "0.1.0"], ["enable", "example", "0.2.0"],
                ["disable", "example"], ["status", "--verify"]] * 2
    processes = [subprocess.Popen([sys.executable, "-c", script, str(home), "6", *command],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for command in commands]
    results = _finish(processes)
    assert [status for status, _out, _err in results] == [0] * len(commands), results
    document = json.loads((home / "state.json").read_text())
    enabled = document["native_plugins"]["example"]["enabled"]
    assert enabled in ({}, {HOST: "0.1.0"}, {HOST: "0.2.0"})
    assert set(document["native_plugins"]["example"]["installed"]) == {"0.1.0", "0.2.0"}
    assert debris(home) == []
    assert hb("list", home=home).status == 0


def test_a_writer_waits_for_the_lock_and_gives_up_after_its_timeout(bundles: Bundles,
                                                                    tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    before = tree_snapshot(home)
    with (home / "install.lock").open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        result = hb("install", bundles.v2, "--lock-timeout", "0.5", home=home)
        assert_refused(result, "install.busy", status=3)
        assert_refused(hb("enable", "example", "--lock-timeout", "0.5", home=home),
                       "install.busy", status=3)
        assert hb("list", home=home).status == 0  # readers never wait
    assert tree_snapshot(home) == before
    assert hb("install", bundles.v2, "--lock-timeout", "0.5", home=home).status == 0


def test_a_lock_file_replaced_while_a_writer_waits_is_locked_again(bundles: Bundles,
                                                                   tmp_path: Path) -> None:
    """A writer that got the lock of a file no longer in place locks the one now there, so
    two writers never hold two different lock files."""
    home = tmp_path / "home"
    assert hb("install", bundles.v1, home=home).status == 0
    lock = home / "install.lock"
    with lock.open("rb") as old:
        fcntl.flock(old.fileno(), fcntl.LOCK_EX)
        waiting = _start(["install", bundles.v2, "--home", home, "--lock-timeout", "4"])
        _wait_until_open(waiting.pid, lock)  # it waits on the old file's lock now
        fresh = home / "fresh.lock"
        fresh.write_bytes(b"")
        fresh.replace(lock)
        with lock.open("rb") as new:
            fcntl.flock(new.fileno(), fcntl.LOCK_EX)
            fcntl.flock(old.fileno(), fcntl.LOCK_UN)
            [(status, _out, err)] = _finish([waiting])
    assert status == 3 and "ERROR install.busy" in err, err
    assert not copy_location(home, "0.2.0").exists()


def _wait_until_open(pid: int, path: Path) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError):
            for fd in Path(f"/proc/{pid}/fd").iterdir():
                with contextlib.suppress(OSError):
                    if fd.readlink() == path:
                        return
        time.sleep(0.01)
    raise AssertionError(f"{pid} never opened {path}")
