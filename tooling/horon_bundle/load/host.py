"""What doctor needs of the host: its target triple and a tracer (containment: `containment`).

Each is found, never assumed: the host triple is the platform's as the interpreter that loads
the library sees it (no process started; `rustc -vV` only on a platform the table below cannot
name, and the report says which); `strace` must actually trace a trivial command here, with
the options the child will be traced with (a container may forbid ptrace). What is missing is
reported, with the checks it costs.
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
    """strace, as probed here. With `syscalls`, exactly those calls are traced (a name this
    architecture or this strace does not know is skipped: `?name`), else every file and
    network call; with `seccomp`, the traced processes stop only for those calls
    (`--seccomp-bpf`: strace's filter traces every call of an architecture it cannot tell,
    so nothing escapes by a 32-bit entry), not for every system call they make."""

    strace: str | None
    note: str
    syscalls: tuple[str, ...] = ()
    seccomp: bool = False

    def options(self) -> list[str]:
        """strace's options, without the log and the command."""
        selected = ",".join(f"?{name}" for name in self.syscalls) or "%file,%network"
        return [*(["--seccomp-bpf"] if self.seccomp else []), "-f", "-qq", "-y", "-s", "4096",
                "-e", f"trace={selected}", "-e", "signal=none"]

    def argv(self, trace_log: Path) -> list[str]:
        """The argv prefix that traces the child (outside its namespaces, so the tracer also
        sees processes the library starts, under their real PIDs)."""
        if self.strace is None:
            return []
        return [self.strace, *self.options(), "-o", str(trace_log), "--"]

    def to_json(self) -> dict[str, object]:
        return {"tracer": "strace" if self.strace else None, "tracer_note": self.note}


def probe_tracer(syscalls: tuple[str, ...] = ()) -> Tracer:
    """strace with the options the child will be traced with, tried on a trivial command:
    `syscalls` under `--seccomp-bpf` first, then (an strace too old for those options) every
    file and network call, stopping at each system call."""
    strace = shutil.which("strace")
    if strace is None:
        return Tracer(None, "strace not found on PATH")
    command = trivial_command()
    problem = ""
    for tracer in ((Tracer(strace, "", syscalls, seccomp=True), Tracer(strace, ""))
                   if syscalls else (Tracer(strace, ""),)):
        done = run_quiet([strace, *tracer.options(), "-o", "/dev/null", "--", *command],
                         timeout=_PROBE_TIMEOUT)
        if done.ok:
            return tracer
        problem = (done.stderr.strip().splitlines()
                   or [f"exit status {done.returncode}"])[-1]
    return Tracer(None, f"strace cannot trace here: {problem}")
