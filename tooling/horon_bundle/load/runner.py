"""Running the library in a child process: the one launcher the build's probe and doctor share.

The child gets an empty temporary HOME and working directory, a minimal environment and a
timeout; a crash, abort, hang or garbage on stdout becomes a refusal, and the temporary
directory is removed whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import horon_bundle
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import DEVNULL, PIPE, Popen, TimeoutExpired, spawn
from horon_bundle.core.strictjson import read_json

DEFAULT_TIMEOUT = 20.0
MAX_ANSWER_BYTES = 256 << 20
_BOOTSTRAP = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
              "from horon_bundle.load.child.entry import main; sys.exit(main(sys.argv[1:]))")


@dataclass(frozen=True, slots=True)
class ChildOutcome:
    answer: dict[str, Any] | None
    returncode: int | None
    timed_out: bool
    stderr: str
    stdout_problem: str | None

    def describe_end(self) -> str:
        if self.timed_out:
            return "did not finish before the timeout and was killed"
        code = self.returncode
        if code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"was killed by {name}"
        return f"exited with status {code}"


def child_argv(mode: str, library: Path, argument: dict[str, Any] | None) -> list[str]:
    package_parent = str(Path(horon_bundle.__file__).resolve().parent.parent)
    argv = [sys.executable, "-I", "-B", "-c", _BOOTSTRAP, package_parent, mode, str(library)]
    if argument is not None:
        argv.append(json.dumps(argument))
    return argv


def child_environment(home: Path) -> dict[str, str]:
    env = {"HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if sys.platform == "win32":
        env["SYSTEMROOT"] = os.environ.get("SYSTEMROOT", r"C:\Windows")
        env["USERPROFILE"] = str(home)
    return env


def run_child(mode: str, library: Path, *, timeout: float = DEFAULT_TIMEOUT,
              argument: dict[str, Any] | None = None, wrapper: Sequence[str] = (),
              home: Path | None = None, pass_fds: Sequence[int] = ()) -> ChildOutcome:
    """Run one child mode on `library`; never raises for what the child did."""
    with contextlib.ExitStack() as stack:
        if home is None:
            home = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="horon-child-")))
        argv = [*wrapper, *child_argv(mode, library, argument)]
        kwargs: dict[str, Any] = {}
        if sys.platform != "win32":
            kwargs["start_new_session"] = True
            kwargs["pass_fds"] = tuple(pass_fds)  # doctor's progress file
        process = spawn(argv, missing=codes.DOCTOR_ENVIRONMENT, cwd=home,
                        env=child_environment(home), stdin=DEVNULL, stdout=PIPE, stderr=PIPE,
                        **kwargs)
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except TimeoutExpired:
            timed_out = True
            _kill(process)
            stdout, stderr = process.communicate()
        answer, problem = _parse_answer(stdout) if not timed_out else (None, None)
        return ChildOutcome(answer=answer, returncode=process.returncode, timed_out=timed_out,
                            stderr=stderr.decode("utf-8", "replace")[-4000:],
                            stdout_problem=problem)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack does not swallow


def _kill(process: Popen[bytes]) -> None:
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    process.kill()


def _parse_answer(stdout: bytes) -> tuple[dict[str, Any] | None, str | None]:
    if not stdout.strip():
        return None, None
    lines = stdout.splitlines()
    if len(lines) != 1:
        return None, f"{len(lines)} lines on stdout where one JSON answer belongs"
    try:
        answer = read_json(lines[0], source="the child's answer", max_bytes=MAX_ANSWER_BYTES,
                           any_number=True)
    except Refused as exc:
        return None, f"the answer is not strict JSON: {exc.findings[0].message}"
    if not isinstance(answer, dict):
        return None, "stdout is not a JSON object"
    return answer, None


def refusal_for(outcome: ChildOutcome, library: Path, step: str) -> Refused | None:
    """The refusal for a child that crashed, hung or talked garbage; None if it answered."""
    name = library.name
    if outcome.timed_out:
        return Refused.one(codes.ABI_TIMEOUT, f"{name}: the child {outcome.describe_end()} "
                                              f"during {step}")
    if outcome.stdout_problem is not None:
        return Refused.one(codes.ABI_GARBAGE, f"{name}: {outcome.stdout_problem}")
    if outcome.answer is None:
        return Refused.one(codes.ABI_CRASH, f"{name}: the child {outcome.describe_end()} "
                                            f"during {step} without answering")
    return None
