"""Running external programs (cargo, rustc, git, strace, the child): the one subprocess seam.

Nothing else in the toolchain imports `subprocess`. `run_text` runs a tool to completion and
turns every failure into a refusal; `run_quiet` runs a probe whose failure is an answer
(`git rev-parse` outside a repository, `strace` forbidden by a container); `spawn` starts a
process whose output is streamed (cargo's JSON messages, the library's child process).
A program that cannot be started is a refusal with the caller's `missing` code.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Refused

PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
TimeoutExpired = subprocess.TimeoutExpired
Popen = subprocess.Popen
_ERROR_LINES = 80
_LINE_CHARS = 300
_TAIL_LINES = 12


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


_PROGRESS = re.compile(r"^\s+(Compiling|Checking|Updating|Locking|Downloading|Downloaded|"
                       r"Fresh|Running|Blocking|Adding|Finished|Packaging|Building)\b")


def error_lines(stderr: str) -> list[str]:
    """What a failed tool said, complete but bounded: from its first `error` line (cargo,
    rustc) to the end with the context it printed (`--> file:line:col`, the source line, the
    caret, `help:`), progress lines dropped; its last lines when it printed no `error`."""
    lines = [line.rstrip() for line in stderr.splitlines()]
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("error")), None)
    if start is None:
        chosen = [line for line in lines if line.strip()][-_TAIL_LINES:]
    else:
        chosen = []
        for line in lines[start:]:
            progress = _PROGRESS.match(line)  # prefix match: a progress line, by its start
            if progress or (not line.strip() and (not chosen or not chosen[-1])):
                continue
            chosen.append(line)
    while chosen and not chosen[-1].strip():
        chosen.pop()
    shown = [line if len(line) <= _LINE_CHARS else line[:_LINE_CHARS - 1] + "…"
             for line in chosen[:_ERROR_LINES]]
    if len(chosen) > _ERROR_LINES:
        shown.append(f"… {len(chosen) - _ERROR_LINES} more lines")
    return shown


def error_excerpt(stderr: str) -> str:
    """The first line of `error_lines`: what a one-line message quotes."""
    lines = error_lines(stderr)
    return lines[0].strip() if lines else "(no output)"


def failed_refusal(argv: Sequence[str], status: int, stderr: str, *, code: Code,
                   hint: str = "") -> Refused:
    """A tool's failure: the whole command, its first error line, and everything it said
    around its errors as the finding's detail."""
    return Refused.one(code, f"`{command_line(argv)}` exited {status}: {error_excerpt(stderr)}",
                       hint, detail=error_lines(stderr))


FailureExplainer = Callable[[Sequence[str], int, str], Refused]


def run_text(argv: Sequence[str], *, cwd: Path | None = None,
             env: Mapping[str, str] | None = None, missing: Code = codes.TOOLCHAIN_MISSING,
             failed: Code = codes.CARGO_FAILED, timeout: float = 600,
             hint: str = "", explain: FailureExplainer | None = None) -> str:
    """Run a tool to completion and return its stdout; a failure becomes a refusal naming the
    whole command and what the tool said (`explain` turns it into one that fits the tool)."""
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
        if explain is not None:
            raise explain(argv, done.returncode, done.stderr)
        raise failed_refusal(argv, done.returncode, done.stderr, code=failed, hint=hint)
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


__all__ = ["DEVNULL", "PIPE", "Completed", "FailureExplainer", "Popen", "TimeoutExpired",
           "command_line", "error_excerpt", "error_lines", "failed_refusal", "run_quiet",
           "run_text", "spawn"]
