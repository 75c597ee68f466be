"""Running the library in a child process: the one implementation the build and doctor share.

The child gets an empty temporary HOME and working directory, a minimal environment and a
timeout; a crash, abort, hang or garbage on stdout becomes a refusal, and the temporary
directory is removed whatever happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import horon_bundle
from horon_bundle import codes
from horon_bundle.errors import Refused
from horon_bundle.evidence import Advertised
from horon_bundle.features import parse_list

DEFAULT_TIMEOUT = 20.0
_BOOTSTRAP = ("import sys; sys.path.insert(0, sys.argv.pop(1)); "
              "from horon_bundle.abi_child import main; sys.exit(main(sys.argv[1:]))")


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
        process = subprocess.Popen(argv, cwd=home, env=child_environment(home),
                                   stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, **kwargs)
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(process)
            stdout, stderr = process.communicate()
        answer, problem = _parse_answer(stdout) if not timed_out else (None, None)
        return ChildOutcome(answer=answer, returncode=process.returncode, timed_out=timed_out,
                            stderr=stderr.decode("utf-8", "replace")[-4000:],
                            stdout_problem=problem)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack does not swallow


def _kill(process: subprocess.Popen[bytes]) -> None:
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
        answer = json.loads(lines[0])
    except ValueError:
        return None, f"stdout is not JSON: {stdout[:80]!r}"
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


def probe_advertised(library: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Advertised:
    """Load the library in a child, perform a correct handshake, return what it advertises."""
    outcome = run_child("handshake", library, timeout=timeout)
    refusal = refusal_for(outcome, library, "the handshake")
    if refusal is not None:
        raise refusal
    answer = outcome.answer or {}
    if "error" in answer:
        raise Refused.one(codes.ABI_LOAD, f"{library.name}: {answer['error']}")
    status = answer.get("status")
    if status != 0:
        raise Refused.one(codes.ABI_STATUS,
                          f"{library.name}: a correct request was answered with status {status}")
    table = answer["table"]
    problems = []
    if table["struct_size"] < 104:
        problems.append(f"struct_size {table['struct_size']} < 104")
    for key in ("wire_schema", "features", "plugin_id"):
        if table[key] is None:
            problems.append(f"{key} is NULL")
    if problems:
        raise Refused.one(codes.ABI_METADATA, f"{library.name}: " + "; ".join(problems))
    return Advertised(abi_major=table["abi_major"], abi_minor=table["abi_minor"],
                      wire_schema=table["wire_schema"], features=parse_list(table["features"]),
                      plugin_id=table["plugin_id"], observed_by=("probe",))
