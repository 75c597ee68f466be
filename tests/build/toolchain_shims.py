"""`cargo` and `rustc` shims that log each call, then run the real tool: how a test counts the
toolchain processes a build starts (only those started by this test process, not cargo's own
rustc calls)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def toolchain_shims(root: Path) -> tuple[Path, Path]:
    """A directory to put first on PATH, and the log its shims append to ("PPID ARGV0 ARGS")."""
    shims, log = root / "toolchain-shims", root / "toolchain-calls.log"
    shims.mkdir()
    for tool in ("cargo", "rustc"):
        real = shutil.which(tool)
        assert real is not None, tool
        shim = shims / tool
        shim.write_text(f'#!/bin/sh\nprintf "%s %s %s\\n" "$PPID" "{tool}" "$*" >> "{log}"\n'
                        f'exec "{real}" "$@"\n')
        shim.chmod(0o755)
    return shims, log


def asked_by_us(log: Path) -> list[str]:
    """The calls this process made ("TOOL ARGS"), in order; `--target-dir …` and the message
    format dropped from cargo build's arguments is left to the caller."""
    calls = [line.split(" ", 1) for line in log.read_text().splitlines()]
    return [call for parent, call in calls if int(parent) == os.getpid()]
