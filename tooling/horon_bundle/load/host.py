"""What doctor needs of the host: its target triple and a tracer (containment: `containment`).

Each is probed, never assumed: `rustc -vV` names the host triple (when rustc is missing the
triple is derived from the platform, and the report says so); `strace` must actually trace a
trivial command here (a container may forbid ptrace). What is missing is reported, with the
checks it costs.
"""

from __future__ import annotations

import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core.process import run_quiet
from horon_bundle.load.containment import trivial_command

_MACHINES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64",
             "riscv64": "riscv64gc", "ppc64le": "powerpc64le", "s390x": "s390x"}
_PROBE_TIMEOUT = 30


@dataclass(frozen=True, slots=True)
class HostTarget:
    triple: str | None
    source: str  # how it was found, for the report


def host_target() -> HostTarget:
    """The host's target triple: the platform's, as the interpreter that will load the
    library sees it (no process started); rustc's opinion only for a platform this cannot
    name."""
    derived = triple_from_platform(sys.platform, platform.machine(), platform.libc_ver()[0])
    if derived is not None:
        return HostTarget(derived, "derived from the platform (the loading interpreter's)")
    rustc = shutil.which("rustc")
    if rustc is not None:
        done = run_quiet([rustc, "-vV"], timeout=_PROBE_TIMEOUT)
        if done.ok:
            for line in done.stdout.splitlines():
                if line.startswith("host: "):
                    return HostTarget(line.removeprefix("host: ").strip(), "rustc -vV")
    return HostTarget(None, "unknown platform, and rustc not available")


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
class Tracer:
    strace: str | None
    note: str

    def argv(self, trace_log: Path) -> list[str]:
        """The argv prefix that traces the child (outside its namespaces, so the tracer also
        sees processes the library starts, under their real PIDs)."""
        if self.strace is None:
            return []
        return [self.strace, "-f", "-qq", "-y", "-s", "4096", "-e", "trace=%file,%network",
                "-e", "signal=none", "-o", str(trace_log), "--"]

    def to_json(self) -> dict[str, object]:
        return {"tracer": "strace" if self.strace else None, "tracer_note": self.note}


def probe_tracer() -> Tracer:
    strace = shutil.which("strace")
    if strace is None:
        return Tracer(None, "strace not found on PATH")
    done = run_quiet([strace, "-f", "-qq", "-o", "/dev/null", "--", *trivial_command()],
                     timeout=_PROBE_TIMEOUT)
    if not done.ok:
        problem = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        return Tracer(None, f"strace cannot trace here: {problem}")
    return Tracer(strace, "")
