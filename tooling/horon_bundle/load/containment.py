"""What contains the child that loads a library, probed on this machine, never assumed.

The strongest available rung wins:

1. `unshare -rn --pid --fork --kill-child` (util-linux): a new user, network and PID
   namespace. The child sees only a loopback that is down, cannot signal anything outside its
   namespace (also not with `kill(-1)`), and when its init or the `unshare` process dies the
   kernel kills every process in it, `setsid()` daemons included;
2. `unshare -rn`: user and network namespace only (where PID namespaces are refused);
3. nothing (no `unshare`, or it is refused: a container without user namespaces, macOS).

Whatever the rung, the child also runs in its own session and process group, with an empty
HOME, a minimal environment, a memory limit and a keeper process in front of the library
(`load.child.keeper`); its reads are bounded by the deadline (`load.runner`).
"""

from __future__ import annotations

import functools
import shutil
import sys
from dataclasses import dataclass

from horon_bundle.core.process import run_quiet

DEFAULT_MEMORY_LIMIT_MIB = 1024
MIN_MEMORY_LIMIT_MIB = 64
MAX_MEMORY_LIMIT_MIB = 1 << 20  # 1 TiB
_PROBE_TIMEOUT = 30
_PID_FLAGS = ("--pid", "--fork", "--kill-child")


@dataclass(frozen=True, slots=True)
class Containment:
    unshare: str | None
    pid_namespace: bool
    network_note: str
    pid_note: str

    @property
    def network_namespace(self) -> bool:
        return self.unshare is not None

    def prefix(self) -> list[str]:
        """The argv prefix that puts the child in its namespaces."""
        if self.unshare is None:
            return []
        return [self.unshare, "-rn", *(_PID_FLAGS if self.pid_namespace else ()), "--"]

    def to_json(self) -> dict[str, object]:
        return {"network_namespace": self.network_namespace, "network_note": self.network_note,
                "pid_namespace": self.pid_namespace, "pid_note": self.pid_note}

    def notes(self) -> list[str]:
        """What is missing, for a report."""
        found = []
        if not self.network_namespace:
            found.append(f"no network namespace ({self.network_note}): the child ran with this "
                         "machine's network")
        if not self.pid_namespace:
            found.append(f"no PID namespace ({self.pid_note}): processes the library starts are "
                         "ended by the child's keeper and by a sweep of processes holding its "
                         "pipes, not by the kernel; a library can signal any process of this "
                         "user")
        return found


def trivial_command() -> list[str]:
    """A program that does nothing, to see whether a wrapper (unshare, strace) works here:
    `true` when there is one (about 1 ms), else this Python without site (about 10 ms). What
    is probed is the wrapper (namespaces, ptrace), never the program it runs."""
    found = shutil.which("true")
    return [found] if found else [sys.executable, "-I", "-S", "-c", "pass"]


def _failure(argv: list[str]) -> str | None:
    done = run_quiet(argv, timeout=_PROBE_TIMEOUT)
    if done.ok:
        return None
    return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]


@functools.lru_cache(maxsize=8)
def _probe(unshare: str | None) -> Containment:
    if unshare is None:
        missing = "unshare (util-linux) not found on PATH"
        return Containment(None, False, missing, missing)
    trivial = ["--", *trivial_command()]
    problem = _failure([unshare, "-rn", *_PID_FLAGS, *trivial])
    if problem is None:
        return Containment(unshare, True, "", "")
    pid_note = f"unshare --pid failed here: {problem}"
    problem = _failure([unshare, "-rn", *trivial])
    if problem is None:
        return Containment(unshare, False, "", pid_note)
    note = f"unshare -rn failed here: {problem}"
    return Containment(None, False, note, pid_note)


def probe_containment() -> Containment:
    """The strongest containment that works here (cached per `unshare` found on PATH)."""
    if sys.platform == "win32":
        return Containment(None, False, "not on Windows", "not on Windows")
    return _probe(shutil.which("unshare"))


def mib(limit_mib: int) -> int:
    return limit_mib << 20
