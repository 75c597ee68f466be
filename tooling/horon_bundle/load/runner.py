"""Running the library in a child process: the one launcher the build's probe and doctor share.

The child runs contained (`load.containment`: user, network and PID namespaces where the
machine allows), in its own session and process group, with an empty temporary HOME and
working directory, a minimal environment, an address-space limit and a keeper in front of the
library (`load.child.keeper`). Every read of its pipes is bounded by one deadline and by a
byte cap: a child still running at the deadline, or still running five seconds after it
answered, is killed with its whole tree, and so is every process still holding its pipes
(never a wait for an end-of-file a grandchild holds open). A crash, a hang, garbage on stdout
or a process left behind becomes a refusal; the temporary directory is removed whatever
happened.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import stat
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import horon_bundle
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import DEVNULL, PIPE, Popen, TimeoutExpired, spawn
from horon_bundle.core.strictjson import read_json
from horon_bundle.load.bytecode import compile_child
from horon_bundle.load.child.keeper import SIGNAL_EXIT_BASE, STRAY_EXIT
from horon_bundle.load.containment import (
    DEFAULT_MEMORY_LIMIT_MIB,
    Containment,
    mib,
    probe_containment,
)

DEFAULT_TIMEOUT = 20.0
MAX_TIMEOUT = 86400.0
MAX_ANSWER_BYTES = 256 << 20
STDERR_TAIL = 64 << 10
ANSWER_GRACE = 5.0  # seconds a child may take to end after its answer
EXIT_GRACE = 1.0  # seconds its pipes may stay open after it ended
_READ = 1 << 16
# The bootstrap's first act, before anything is loaded: no wrapper writes it, nothing after it
# takes it back out of the pipe. With it the wrappers worked; without it no library code ran.
STARTED = b"."
_BOOTSTRAP = ("import os, sys; os.write(1, b'.'); sys.path.insert(0, sys.argv.pop(1)); "
              "from horon_bundle.load.child.entry import main; sys.exit(main(sys.argv[1:]))")


@dataclass(frozen=True, slots=True)
class ChildOutcome:
    answer: dict[str, Any] | None
    returncode: int | None
    timed_out: bool
    stderr: str
    stdout_problem: str | None
    strays: str | None = None  # how processes the library started outlived the child
    memory_limit: int = mib(DEFAULT_MEMORY_LIMIT_MIB)
    image_bytes: int = 0  # the library file's size, added to the limit (its mapping)
    started: bool = True  # the child's interpreter ran (its wrappers worked): `STARTED`

    def describe_end(self) -> str:
        if self.timed_out:
            return "did not finish before the timeout and was killed"
        code = self.returncode
        if code is not None and code < 0:
            return f"was killed by {_signal_name(-code)}"
        if code is not None and SIGNAL_EXIT_BASE < code <= SIGNAL_EXIT_BASE + 64 \
                and code != STRAY_EXIT:
            return f"was killed by {_signal_name(code - SIGNAL_EXIT_BASE)}"
        return f"exited with status {code}"

    @property
    def memory_note(self) -> str:
        return (f"its address space was limited to {self.memory_limit >> 20} MiB beyond the "
                f"{self.image_bytes}-byte library it maps")


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def child_argv(mode: str, library: Path, argument: dict[str, Any], *,
               site: bool = False) -> list[str]:
    """`python -I -S -B`: isolated (no PYTHON* variables, no user site, no script directory),
    without the site module (the child needs only the standard library and this package,
    whose parent directory the bootstrap puts first on its path), writing no bytecode (the
    parent compiles the child's modules: `load.bytecode`). `site` only so that coverage.py's
    start-up hook (a `.pth` file) runs: our own test suite, never under a tracer."""
    package_parent = str(Path(horon_bundle.__file__).resolve().parent.parent)
    flags = ["-I", "-B"] if site else ["-I", "-S", "-B"]
    return [sys.executable, *flags, "-c", _BOOTSTRAP, package_parent, mode, str(library),
            json.dumps(argument)]


def child_environment(home: Path, *, traced: bool = False) -> dict[str, str]:
    """HOME, TMPDIR, LANG and PATH; nothing else of ours reaches the library. The one
    exception is for our own test suite: coverage.py's `COVERAGE_*` variables, so the child is
    measured too, but never under a tracer (its data file would be judged a side effect)."""
    env = {"HOME": str(home), "TMPDIR": str(home), "LANG": "C.UTF-8",
           "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if not traced:
        env.update({k: v for k, v in os.environ.items() if k.startswith("COVERAGE_")})
    if sys.platform == "win32":
        env["SYSTEMROOT"] = os.environ.get("SYSTEMROOT", r"C:\Windows")
        env["USERPROFILE"] = str(home)
    return env


@contextlib.contextmanager
def private_directory(prefix: str) -> Iterator[Path]:
    """A 0700 temporary directory, removed on exit even when a library made it hard."""
    path = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield path
    finally:
        remove_everything(path)


def remove_everything(path: Path) -> None:
    """rmtree that also gets through directories a library made unreadable or unwritable."""
    for _ in range(3):
        with contextlib.suppress(OSError):
            shutil.rmtree(path)
        if not path.exists() and not path.is_symlink():
            return
        for directory, names, _files in os.walk(path):
            for name in [".", *names]:
                with contextlib.suppress(OSError):
                    (Path(directory) / name).chmod(stat.S_IRWXU)


def run_child(mode: str, library: Path, *, timeout: float = DEFAULT_TIMEOUT,
              memory_limit: int = mib(DEFAULT_MEMORY_LIMIT_MIB),
              argument: dict[str, Any] | None = None, tracer: Sequence[str] = (),
              home: Path | None = None, pass_fds: Sequence[int] = (),
              containment: Containment | None = None) -> ChildOutcome:
    """Run one child mode on `library`; never raises for what the child did."""
    containment = containment or probe_containment()
    image = _image_bytes(library)
    with contextlib.ExitStack() as stack:
        if home is None:
            home = stack.enter_context(private_directory("horon-child-"))
        env = child_environment(home, traced=bool(tracer))
        compile_child()
        argv = [*tracer, *containment.prefix(),
                *child_argv(mode, library, {**(argument or {}),
                                            "memory_limit": memory_limit + image},
                            site=any(name.startswith("COVERAGE_") for name in env))]
        kwargs: dict[str, Any] = {}
        if sys.platform != "win32":
            kwargs["start_new_session"] = True
            kwargs["pass_fds"] = tuple(pass_fds)  # doctor's progress file
        deadline = time.monotonic() + min(timeout, MAX_TIMEOUT)
        process = spawn(argv, missing=codes.DOCTOR_ENVIRONMENT, cwd=home, env=env, stdin=DEVNULL,
                        stdout=PIPE, stderr=PIPE, **kwargs)
        try:
            collected = (_collect_windows(process, deadline) if sys.platform == "win32"
                         else _collect(process, deadline))
        finally:
            held = _end_tree(process, home, pass_fds, sweep=not containment.pid_namespace)
        if held:
            collected.strays = collected.strays or "processes it started still held its pipes"
        started = bytes(collected.stdout[:1]) == STARTED
        del collected.stdout[:1 if started else 0]
        answer, problem = (None, None) if collected.timed_out else _parse_answer(collected)
        strays = collected.strays
        if process.returncode == STRAY_EXIT:
            strays = strays or "processes it started were still running when it ended"
        return ChildOutcome(answer=answer, returncode=process.returncode,
                            timed_out=collected.timed_out,
                            stderr=bytes(collected.stderr).decode("utf-8", "replace")[-4000:],
                            stdout_problem=problem, strays=strays, memory_limit=memory_limit,
                            image_bytes=image, started=started)
    raise AssertionError("unreachable")  # pragma: no cover - ExitStack does not swallow


def _image_bytes(library: Path) -> int:
    """The library's size: mapping it takes that much address space, which is not memory the
    library asked for, so the limit comes on top of it (a 1 GiB library must still load
    under the default limit). Bounded by the bundle limits (`verify.limits`)."""
    try:
        return max(0, library.stat().st_size)
    except OSError:
        return 0  # the child reports what is wrong with the path


@dataclass(slots=True)
class _Collected:
    stdout: bytearray
    stderr: bytearray
    timed_out: bool = False
    overflow: bool = False
    strays: str | None = None


def _collect(process: Popen[bytes], deadline: float) -> _Collected:
    """Read both pipes until the child ended and closed them, or a deadline passed."""
    got = _Collected(bytearray(), bytearray())
    assert process.stdout is not None and process.stderr is not None
    streams = {process.stdout.fileno(): got.stdout, process.stderr.fileno(): got.stderr}
    selector = selectors.DefaultSelector()
    for fd in streams:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    answered = ended = None
    try:
        while True:
            now = time.monotonic()
            if ended is None and process.poll() is not None:
                ended = now
            if not selector.get_map() and ended is not None:
                return got
            limit = deadline
            if answered is not None:
                limit = min(limit, answered + ANSWER_GRACE)
            if ended is not None:
                limit = min(limit, ended + EXIT_GRACE)
            if now >= limit:
                break
            if not selector.get_map():  # both pipes at their end: only the exit is left
                with contextlib.suppress(TimeoutExpired):
                    process.wait(timeout=limit - now)
                continue
            for key, _ in selector.select(timeout=min(limit - now, 0.05)):
                try:
                    chunk = os.read(key.fd, _READ)
                except (BlockingIOError, InterruptedError):
                    continue
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                buffer = streams[key.fd]
                buffer += chunk
                if buffer is got.stderr:
                    del buffer[:-STDERR_TAIL]
                elif len(buffer) > MAX_ANSWER_BYTES + len(STARTED):
                    got.overflow = True
                    return got
                elif answered is None and b"\n" in chunk:
                    answered = time.monotonic()
    finally:
        selector.close()
    if ended is not None:
        got.strays = "processes it started still held its pipes after it ended"
    elif answered is not None:
        got.strays = (f"it answered but had not ended {ANSWER_GRACE:g} s later (a process it "
                      "started, or a library destructor, kept it running)")
    else:
        got.timed_out = True
    return got


def _collect_windows(process: Popen[bytes], deadline: float) -> _Collected:
    """Windows pipes cannot be polled: communicate() in threads, bounded by the deadline."""
    got = _Collected(bytearray(), bytearray())
    try:
        stdout, stderr = process.communicate(timeout=max(deadline - time.monotonic(), 0.01))
    except TimeoutExpired:
        got.timed_out = True
        process.kill()
        try:
            stdout, stderr = process.communicate(timeout=EXIT_GRACE)
        except TimeoutExpired:  # a grandchild holds the pipes: give up on them
            stdout, stderr = b"", b""
    got.stdout += stdout[:MAX_ANSWER_BYTES + len(STARTED) + 1]
    got.stderr += stderr[-STDERR_TAIL:]
    got.overflow = len(stdout) > MAX_ANSWER_BYTES + len(STARTED)
    return got


def _end_tree(process: Popen[bytes], home: Path, pass_fds: Sequence[int], *,
              sweep: bool) -> bool:
    """Kill the child's process group and wait for it; then, where no PID namespace ended
    them, every process still holding its pipes, progress file or HOME. True if one did."""
    if sys.platform != "win32":
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(ProcessLookupError):
        process.kill()
    with contextlib.suppress(Exception):
        process.wait(timeout=10)
    held = False
    pipes = [stream for stream in (process.stdout, process.stderr) if stream is not None]
    if sys.platform.startswith("linux"):
        marks = set()
        for fd in [stream.fileno() for stream in pipes] + list(pass_fds):
            with contextlib.suppress(OSError):
                info = os.fstat(fd)
                marks.add((info.st_dev, info.st_ino))
        pipe_open = any(_still_open(stream.fileno()) for stream in pipes)
        if sweep or pipe_open:
            held = _sweep(marks, home) > 0 or pipe_open
    for stream in pipes:
        with contextlib.suppress(OSError):
            stream.close()
    return held


def _still_open(fd: int) -> bool:
    """True when the write end of pipe `fd` is still held by some process."""
    selector = selectors.DefaultSelector()
    try:
        selector.register(fd, selectors.EVENT_READ)
        if not selector.select(timeout=0):
            return True
        try:
            return os.read(fd, _READ) != b""
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False
    finally:
        selector.close()


def _sweep(marks: set[tuple[int, int]], home: Path) -> int:
    """SIGKILL every process of ours holding one of `marks` open or working inside `home`."""
    mine = os.getpid()
    killed = 0
    root = str(home)
    for _ in range(20):
        found = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == mine:
                continue
            if _holds(entry, marks, root):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(entry.name), signal.SIGKILL)
                    found += 1
        killed += found
        if not found:
            break
        time.sleep(0.02)
    return killed


def _holds(process: Path, marks: set[tuple[int, int]], root: str) -> bool:
    with contextlib.suppress(OSError):
        cwd = str((process / "cwd").readlink())
        if cwd == root or cwd.startswith(root + "/"):
            return True
    with contextlib.suppress(OSError):
        for fd in (process / "fd").iterdir():
            with contextlib.suppress(OSError):
                info = fd.stat()
                if (info.st_dev, info.st_ino) in marks:
                    return True
    return False


def _parse_answer(got: _Collected) -> tuple[dict[str, Any] | None, str | None]:
    if got.overflow:
        return None, f"more than {MAX_ANSWER_BYTES >> 20} MiB on stdout"
    stdout = bytes(got.stdout)
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
    """The refusal for a child that crashed, hung, talked garbage or left processes behind;
    None if it answered and ended cleanly."""
    name = library.name
    if outcome.timed_out:
        return Refused.one(codes.ABI_TIMEOUT, f"{name}: the child {outcome.describe_end()} "
                                              f"during {step}")
    if outcome.stdout_problem is not None:
        return Refused.one(codes.ABI_GARBAGE, f"{name}: {outcome.stdout_problem}")
    if outcome.answer is None:
        return Refused.one(codes.ABI_CRASH, f"{name}: the child {outcome.describe_end()} "
                                            f"during {step} without answering "
                                            f"({outcome.memory_note})")
    if outcome.strays is not None:
        return Refused.one(codes.ABI_STRAY_PROCESS,
                           f"{name}: the child left processes behind: {outcome.strays}; "
                           "they were killed")
    return None
