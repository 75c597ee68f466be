"""Shared by the install tests: real bundles of several versions, home snapshots that see
every write, and a way to stop an install at a chosen step (the test-only pause point)."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.helpers import HOST, CliResult, cli, tree_snapshot

DEBRIS = re.compile(r"(^|/)(\.staging-|\.trash-|\.state\.json\..*\.tmp$)")


@dataclass(frozen=True)
class Bundles:
    """Real builds of the example plugin: 0.1.0 (archive and directory), 0.2.0, and 0.1.0
    with other bytes (a narrower feature claim, so another library)."""

    v1: Path
    v1_dir: Path
    v2: Path
    v2_dir: Path
    v1_other: Path


def hb(*args: str | Path, home: Path, env: dict[str, str] | None = None) -> CliResult:
    """`horon-bundle ARGS --home HOME`."""
    return cli(*args, "--home", home, env=env)


def home_state(home: Path) -> dict[str, tuple[object, ...]]:
    """Every entry of the home with what any write changes: content, inode, mode, mtime and
    ctime (the home itself included, so a created or removed entry shows too)."""
    snapshot: dict[str, tuple[object, ...]] = {}
    if not home.exists():
        return snapshot
    content = tree_snapshot(home)
    for path in [home, *sorted(home.rglob("*"))]:
        relative = path.relative_to(home).as_posix()
        info = path.lstat()
        snapshot[relative] = (content.get(relative, "dir"), info.st_ino,
                              stat.S_IMODE(info.st_mode), info.st_mtime_ns, info.st_ctime_ns)
    return snapshot


def debris(home: Path) -> list[str]:
    return [p for p in tree_snapshot(home) if DEBRIS.search(p)]


def without_debris(snapshot: dict[str, str]) -> dict[str, str]:
    return {p: v for p, v in snapshot.items() if not DEBRIS.search(p)}


def copy_location(home: Path, version: str, target: str = HOST) -> Path:
    return home / "native-plugins" / "example" / version / target


class Paused:
    """`horon-bundle ARGS` started in the background and stopped at `step`."""

    def __init__(self, args: Sequence[str | Path], step: str, marker: Path,
                 env: dict[str, str] | None = None) -> None:
        self.marker = marker
        full_env = {**os.environ, "COLUMNS": "200", "HORON_INSTALL_PAUSE_AT": step,
                    "HORON_INSTALL_PAUSE_FILE": str(marker), **(env or {})}
        self.process = subprocess.Popen([sys.executable, "-m", "horon_bundle", *map(str, args)],
                                        env=full_env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not marker.exists():
            if self.process.poll() is not None:
                _out, err = self.process.communicate()
                raise AssertionError(f"ended before pausing at {step}: {err}")
            if time.monotonic() > deadline:
                self.process.kill()
                raise AssertionError(f"never paused at {step}")
            time.sleep(0.02)

    def kill(self) -> None:
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.communicate(timeout=60)
        assert self.process.returncode == -signal.SIGKILL
        self.marker.unlink(missing_ok=True)

    def resume(self) -> CliResult:
        self.marker.unlink()
        out, err = self.process.communicate(timeout=300)
        return CliResult(self.process.returncode, out, err)
