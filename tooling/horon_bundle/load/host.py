"""What the doctor's child runs inside: the host triple, a tracer, a network namespace.

Each is probed, never assumed: `rustc -vV` names the host triple (when rustc is missing the
triple is derived from the platform, and the report says so); `strace` must actually trace a
trivial command here (a container may forbid ptrace); `unshare -rn` must actually create a
user and network namespace. What is missing is reported, with the checks it costs.
"""

from __future__ import annotations

import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core.process import run_quiet

_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64",
             "riscv64": "riscv64gc", "ppc64le": "powerpc64le", "s390x": "s390x"}
_PROBE_TIMEOUT = 30


@dataclass(frozen=True, slots=True)
class HostTarget:
    triple: str | None
    source: str  # how it was found, for the report


def host_target() -> HostTarget:
    """The host's target triple: rustc's opinion when rustc runs, else the platform's."""
    rustc = shutil.which("rustc")
    if rustc is not None:
        done = run_quiet([rustc, "-vV"], timeout=_PROBE_TIMEOUT)
        if done.ok:
            for line in done.stdout.splitlines():
                if line.startswith("host: "):
                    return HostTarget(line.removeprefix("host: ").strip(), "rustc -vV")
    derived = triple_from_platform(sys.platform, platform.machine(), platform.libc_ver()[0])
    return HostTarget(derived, "derived from the platform (rustc not available)")


def triple_from_platform(system: str, machine: str, libc: str) -> str | None:
    """`linux`/`x86_64`/`glibc` -> `x86_64-unknown-linux-gnu`; None when unknown."""
    arch = _MACHINES.get(machine.lower())
    if arch is None:
        return None
    if system.startswith("linux"):
        return f"{arch}-unknown-linux-{'gnu' if libc == 'glibc' else 'musl'}"
    if system == "darwin":
        return f"{arch}-apple-darwin"
    if system.startswith("freebsd"):
        return f"{arch}-unknown-freebsd"
    return None


@dataclass(frozen=True, slots=True)
class Sandbox:
    strace: str | None
    strace_note: str
    unshare: str | None
    unshare_note: str

    def wrapper(self, trace_log: Path) -> list[str]:
        """The argv prefix for the child: `unshare -rn` outside, `strace` inside."""
        argv: list[str] = []
        if self.unshare is not None:
            argv += [self.unshare, "-rn"]
        if self.strace is not None:
            argv += [self.strace, "-f", "-qq", "-y", "-s", "4096", "-e", "trace=%file,%network",
                     "-e", "signal=none", "-o", str(trace_log), "--"]
        return argv

    def to_json(self) -> dict[str, object]:
        return {"tracer": "strace" if self.strace else None, "tracer_note": self.strace_note,
                "network_namespace": self.unshare is not None,
                "network_note": self.unshare_note}


def _works(argv: list[str]) -> str | None:
    """None when `argv` ran and exited 0; else what went wrong."""
    done = run_quiet(argv, timeout=_PROBE_TIMEOUT)
    if not done.ok:
        return (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
    return None


def probe_sandbox() -> Sandbox:
    strace = shutil.which("strace")
    if strace is None:
        strace_note = "strace not found on PATH"
    else:
        problem = _works([strace, "-f", "-qq", "-o", "/dev/null", "--", sys.executable, "-c",
                          "pass"])
        strace_note = "" if problem is None else f"strace cannot trace here: {problem}"
        if problem is not None:
            strace = None
    unshare = shutil.which("unshare")
    if unshare is None:
        unshare_note = "unshare (util-linux) not found on PATH"
    else:
        problem = _works([unshare, "-rn", "--", sys.executable, "-c", "pass"])
        unshare_note = "" if problem is None else f"unshare -rn failed here: {problem}"
        if problem is not None:
            unshare = None
    return Sandbox(strace, strace_note, unshare, unshare_note)
