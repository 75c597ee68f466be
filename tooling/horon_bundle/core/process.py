"""Running external programs (cargo, rustc, git, strace, the child): the one subprocess seam.

Nothing else in the toolchain imports `subprocess`. `run_text` runs a tool to completion and
turns every failure into a refusal; `run_quiet` runs a probe whose failure is an answer
(`git rev-parse` outside a repository, `strace` forbidden by a container); `spawn` starts a
process whose output is streamed (cargo's JSON messages, the library's child process).
A program that cannot be started is a refusal with the caller's `missing` code.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Refused

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
TimeoutExpired = subprocess.TimeoutExpired
Popen = subprocess.Popen
_ERROR_LINES = 40
_ERROR_CHARS = 4000


@dataclass(frozen=True, slots=True)
class Completed:
    """A finished probe: exit status (127 when it could not start) and its output."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def command_line(argv: Sequence[str]) -> str:
    """The whole command, as a user would type it (for refusal messages)."""
    return " ".join(argv)


def error_excerpt(stderr: str) -> str:
    """What a failed tool said, complete but bounded: its `error:` lines with their context
    when it printed any (cargo, rustc), else its last lines; folded onto one line."""
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("error")), None)
    chosen = lines[start:start + _ERROR_LINES] if start is not None else lines[-6:]
    text = " | ".join(chosen) or "(no output)"
    return text if len(text) <= _ERROR_CHARS else text[:_ERROR_CHARS - 3] + "..."


def run_text(argv: Sequence[str], *, cwd: Path | None = None,
             env: Mapping[str, str] | None = None, missing: Code = codes.TOOLCHAIN_MISSING,
             failed: Code = codes.CARGO_FAILED, timeout: float = 600,
             hint: str = "") -> str:
    """Run a tool to completion and return its stdout; a failure becomes a refusal naming the
    whole command and what the tool said."""
    try:
        done = subprocess.run(list(argv), cwd=cwd, env=None if env is None else dict(env),
                              capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise Refused.one(missing, f"{argv[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise Refused.one(failed, f"`{command_line(argv)}`: no answer in {timeout:.0f} s",
                          hint) from None
    except OSError as exc:
        raise Refused.one(missing, f"{argv[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        raise Refused.one(failed, f"`{command_line(argv)}` exited {done.returncode}: "
                                  f"{error_excerpt(done.stderr)}", hint)
    return done.stdout


def run_quiet(argv: Sequence[str], *, cwd: Path | None = None,
              env: Mapping[str, str] | None = None, timeout: float = 60) -> Completed:
    """Run a probe; never raises: a program that is missing, fails or hangs is an answer."""
    try:
        done = subprocess.run(list(argv), cwd=cwd, env=None if env is None else dict(env),
                              capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=timeout, check=False,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return Completed(124, "", f"{argv[0]}: no answer in {timeout:.0f} s")
    except OSError as exc:
        return Completed(127, "", f"{argv[0]}: {exc.strerror or exc}")
    return Completed(done.returncode, done.stdout, done.stderr)


def spawn(argv: Sequence[str], *, missing: Code = codes.TOOLCHAIN_MISSING,
          **options: Any) -> subprocess.Popen[Any]:
    """Start a process whose output the caller streams; one that cannot start is refused."""
    try:
        return subprocess.Popen(list(argv), **options)
    except OSError as exc:
        raise Refused.one(missing, f"{argv[0]}: {exc.strerror or exc}") from None


__all__ = ["DEVNULL", "PIPE", "Completed", "Popen", "TimeoutExpired", "command_line",
           "error_excerpt", "run_quiet", "run_text", "spawn"]
