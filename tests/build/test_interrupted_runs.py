"""No debris: what a killed `build` or `publish` left, the next run removes — never what a
concurrent live run is using.

Real runs of the real CLI are killed with SIGKILL mid-way at a named step (the test-only
hook `HORON_TEST_CHECKPOINT=kill:STEP`, core/checkpoint.py) or held there alive
(`pause:STEP`) while a second run works in the same directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from horon_bundle.build.output import remove_debris
from horon_bundle.core.checkpoint import CHECKPOINT
from tests.conftest import BuiltExample
from tests.gate_helpers import ABI_FAULTS
from tests.helpers import HOST, TEMPLATE, cli, tree_snapshot
from tests.publish_support import make_dist, publish_env

pytestmark = [pytest.mark.cargo, pytest.mark.process]

NAME = f"example-0.1.0-{HOST}"


def _debris(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name.startswith(".")
                  and p.name != ".cargo-target")


def _until(found: Callable[[], bool], what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not found():
        assert time.monotonic() < deadline, f"{what} never happened"
        time.sleep(0.05)


@pytest.fixture
def paused() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """Start the CLI held alive at a checkpoint; killed (by PID) at the end of the test."""
    started: list[subprocess.Popen[str]] = []

    def start(step: str, *args: str | Path, env: dict[str, str] | None = None,
              ) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            [sys.executable, "-m", "horon_bundle", *map(str, args)],
            env={**os.environ, "COLUMNS": "200", **(env or {}), CHECKPOINT: f"pause:{step}"},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=30)


def _kill(process: subprocess.Popen[str]) -> None:
    process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL


# --- publish -------------------------------------------------------------------------------


def test_a_killed_publish_leaves_temp_files_the_next_run_removes(
        tmp_path: Path, example_release: BuiltExample) -> None:
    dist = make_dist(tmp_path / "dist", example_release.archive)
    store = tmp_path / "store"
    store.mkdir()
    url = f"file://{store}"
    killed = cli("publish", dist, env={**publish_env(url), CHECKPOINT: "kill:publish.temp"})
    assert killed.status == -signal.SIGKILL, killed.stderr
    assert [p.name[:2] for p in (store / ".tmp").iterdir()] == ["w-"]
    again = cli("publish", dist, "--json", env=publish_env(url))
    assert again.status == 0, again.stderr
    assert [b["status"] for b in again.json()["bundles"]] == ["published"]
    assert list((store / ".tmp").iterdir()) == []
    blob = store / "blobs" / "sha256" / again.json()["bundles"][0]["archive"]["sha256"]
    assert blob.read_bytes() == example_release.archive.read_bytes()


@pytest.mark.slow
def test_a_live_publisher_keeps_its_temp_files(tmp_path: Path, example_release: BuiltExample,
                                               paused: Callable[..., subprocess.Popen[str]],
                                               ) -> None:
    dist = make_dist(tmp_path / "dist", example_release.archive)
    store = tmp_path / "store"
    store.mkdir()
    url = f"file://{store}"
    live = paused("publish.temp", "publish", dist, env=publish_env(url))
    temps = store / ".tmp"
    _until(lambda: temps.is_dir() and any(temps.iterdir()), "the paused publisher's temp file")
    [held] = list(temps.iterdir())
    beside = cli("publish", dist, env=publish_env(url))  # a second publisher, concurrently
    assert beside.status == 0, beside.stderr
    assert held.exists(), "a concurrent run removed the live publisher's temp file"
    _kill(live)
    after = cli("publish", dist, env=publish_env(url))
    assert after.status == 0, after.stderr
    assert "already published" in after.stdout
    assert list(temps.iterdir()) == []


# --- build ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(("step", "left"), [
    ("build.staged", (".horon-scratch-", f".{NAME}.staging-")),
    ("build.archive", (".horon-scratch-", f".{NAME}.zip.partial")),
])
def test_a_killed_build_leaves_debris_the_next_build_removes(
        tmp_path: Path, cargo_target_dir: Path, step: str, left: tuple[str, ...]) -> None:
    out = tmp_path / "out"
    killed = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir,
                 env={CHECKPOINT: f"kill:{step}"})
    assert killed.status == -signal.SIGKILL, killed.stderr
    debris = _debris(out)
    assert sorted(prefix for prefix in left if any(n.startswith(prefix) for n in debris)) == \
        sorted(left), debris
    rebuilt = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir)
    assert rebuilt.status == 0, rebuilt.stderr
    assert "removed what an interrupted run left" in rebuilt.stderr
    assert _debris(out) == []
    assert cli("verify", out / NAME).status == 0
    assert cli("verify", out / f"{NAME}.zip").status == 0


@pytest.mark.slow
def test_a_build_killed_while_swapping_bundles_loses_neither(
        tmp_path: Path, cargo_target_dir: Path) -> None:
    """Killed between renaming the old bundle aside and the new one into place: the next run
    puts the old one back before it does anything else."""
    out = tmp_path / "out"
    assert cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir).status == 0
    before = tree_snapshot(out / NAME)
    killed = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir,
                 env={CHECKPOINT: "kill:build.swapping", "SOURCE_DATE_EPOCH": "1700000000"})
    assert killed.status == -signal.SIGKILL, killed.stderr
    assert not (out / NAME).exists()
    [aside] = [name for name in _debris(out) if name.startswith(f".{NAME}.old-")]
    removed = remove_debris(out)  # what the next run does first, holding the directory
    assert out / aside in removed
    assert tree_snapshot(out / NAME) == before
    assert _debris(out) == []


@pytest.mark.slow
def test_a_live_build_keeps_its_scratch_and_staging(
        tmp_path: Path, cargo_target_dir: Path,
        paused: Callable[..., subprocess.Popen[str]]) -> None:
    out = tmp_path / "out"
    common = ("--out", out, "--target-dir", cargo_target_dir)
    live = paused("build.staged", "build", ABI_FAULTS, "--plugin", "fault-none", *common)
    _until(lambda: out.is_dir() and any(".staging-" in n for n in _debris(out)),
           "the paused build's staging directory")
    held = _debris(out)
    beside = cli("build", ABI_FAULTS, "--plugin", "fault-order", *common)
    assert beside.status == 0, beside.stderr
    assert "removed what an interrupted run left" not in beside.stderr
    assert [name for name in held if not (out / name).exists()] == [], \
        "a concurrent build removed the live build's files"
    _kill(live)
    again = cli("build", ABI_FAULTS, "--plugin", "fault-none", *common)
    assert again.status == 0, again.stderr
    assert _debris(out) == []
    assert cli("verify", out / f"fault-none-0.1.0-{HOST}").status == 0


def test_debris_names_are_ours_only(tmp_path: Path) -> None:
    """Files that merely look alike are never touched."""
    out = tmp_path / "out"
    out.mkdir()
    mine = [".horon-scratch-abc", f".{NAME}.staging-x1y2", f".{NAME}.zip.partial",
            f".{NAME}.zip.sha256.k3j4.horon-tmp"]
    theirs = ["notes.partial", ".bashrc", "staging-x", f"{NAME}.zip", ".cargo-target",
              f".{NAME}.old-notapid", "horon-scratch-abc"]
    for name in mine + theirs:
        (out / name).mkdir() if "scratch" in name or "staging" in name else \
            (out / name).write_text("x")
    (out / ".horon-scratch-link").symlink_to(tmp_path)
    removed = remove_debris(out)
    assert sorted(p.name for p in removed) == sorted(mine)
    assert sorted(p.name for p in out.iterdir()) == sorted([*theirs, ".horon-scratch-link"])
    assert tmp_path.is_dir()
    shutil.rmtree(out)


# --- one cargo target directory, two builds --------------------------------------------------
def _flock_lines(path: Path) -> list[list[str]]:
    """The lines of /proc/locks about `path`'s inode: the flock held, and any waiting."""
    inode = str(path.stat().st_ino)
    return [line.split() for line in Path("/proc/locks").read_text().splitlines()
            if "FLOCK" in line and line.split()[-3].rsplit(":", 1)[-1] == inode]


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/locks").is_file(), reason="needs Linux /proc/locks")
def test_a_build_waits_while_another_uses_its_target_directory(
        tmp_path: Path, cargo_target_dir: Path,
        paused: Callable[..., subprocess.Popen[str]]) -> None:
    """cargo writes both builds' libraries to one path of a shared target directory: a
    second build waits until the first has taken its copy, and a first build killed there
    never blocks it (the kernel drops the lock)."""
    from horon_bundle.build.library import TARGET_LOCK  # noqa: PLC0415

    lock = cargo_target_dir / TARGET_LOCK
    first = paused("build.compiled", "build", ABI_FAULTS, "--plugin", "fault-none",
                   "--out", tmp_path / "a", "--target-dir", cargo_target_dir)
    _until(lambda: lock.is_file() and any(
        fields[4] == str(first.pid) for fields in _flock_lines(lock) if "->" not in fields),
        "the first build holding the target directory")
    second = subprocess.Popen(
        [sys.executable, "-m", "horon_bundle", "build", str(ABI_FAULTS), "--plugin",
         "fault-order", "--out", str(tmp_path / "b"), "--target-dir", str(cargo_target_dir)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _until(lambda: any("->" in fields and str(second.pid) in fields
                           for fields in _flock_lines(lock)),
               "the second build waiting for the target directory")
        assert second.poll() is None
        _kill(first)
        assert second.wait(timeout=300) == 0, second.stderr.read() if second.stderr else ""
    finally:
        if second.poll() is None:
            second.kill()
        second.wait(timeout=30)
        if second.stderr is not None:
            second.stderr.close()
    assert cli("verify", tmp_path / "b" / f"fault-order-0.1.0-{HOST}").status == 0
