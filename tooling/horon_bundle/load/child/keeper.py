"""Inside the child, before the library is loaded: resource limits, and a keeper process.

`split()` forks once. The *worker* returns and loads the library; the *keeper* (its parent,
the process the toolchain started) only waits for it, then ends every process the worker's
tree left running, and exits with the worker's status. So:

- a library that signals its parent reaches the keeper, never the toolchain;
- processes the library started (also `setsid()` daemons) cannot outlive the child: on Linux
  the keeper is a child subreaper (`PR_SET_CHILD_SUBREAPER`), so they become its children,
  and it kills them; inside a PID namespace the keeper is its init, and its exit kills them;
- the keeper says that it found some with `STRAY_EXIT` (when the worker itself exited 0).

A keeper that is a PID namespace's init cannot end itself with a signal, so it reports a
worker killed by signal N as exit status 128 + N, the way a shell does (`SIGNAL_EXIT_BASE`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time

STRAY_EXIT = 86
SIGNAL_EXIT_BASE = 128
FILE_SIZE_LIMIT = 1 << 30  # RLIMIT_FSIZE: no file the child writes grows past 1 GiB
_PR_SET_CHILD_SUBREAPER = 36
_KILL_ROUNDS = 500


def limit_resources(memory_limit: object) -> None:
    """No core files, no file above FILE_SIZE_LIMIT (a write past it fails with EFBIG: Python
    ignores SIGXFSZ), at most `memory_limit` bytes of address space (RLIMIT_AS). POSIX."""
    if sys.platform == "win32":
        return
    import resource  # noqa: PLC0415 - POSIX only

    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    if isinstance(memory_limit, int) and not isinstance(memory_limit, bool) and memory_limit > 0:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_limit if hard == resource.RLIM_INFINITY else min(memory_limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def split() -> None:
    """Fork; return in the worker, never in the keeper. Windows has no fork: no keeper."""
    if sys.platform == "win32":
        return
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    sys.stdout.flush()
    sys.stderr.flush()
    worker = os.fork()
    if worker == 0:
        return
    _, status = os.waitpid(worker, 0)
    strays = end_strays()
    os._exit(_relay(status, strays))


def end_strays() -> int:
    """Kill every remaining child (the worker's orphans); how many were still running."""
    found = 0
    for _ in range(_KILL_ROUNDS):
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid != 0:
            continue  # reaped one that had ended (or that we killed)
        if os.getpid() == 1:
            return found + 1  # the init of a PID namespace: its exit kills all of them
        killed = _kill_children()
        found += killed
        if not killed:
            time.sleep(0.01)
    return found


def _kill_children() -> int:
    killed = 0
    with contextlib.suppress(OSError):
        # os, not pathlib: the child imports no pathlib (its start-up)
        for task in os.listdir("/proc/self/task"):  # noqa: PTH208
            with open(f"/proc/self/task/{task}/children") as children:  # noqa: PTH123
                found = children.read().split()
            for text in found:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(int(text), signal.SIGKILL)
                    killed += 1
    return killed


def _relay(status: int, strays: int) -> int:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        if os.getpid() != 1:
            with contextlib.suppress(OSError, ValueError):
                signal.signal(number, signal.SIG_DFL)  # SIGKILL and SIGSTOP have no handler
            with contextlib.suppress(OSError):
                os.kill(os.getpid(), number)
        return SIGNAL_EXIT_BASE + number
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
    return STRAY_EXIT if strays and code == 0 else code
