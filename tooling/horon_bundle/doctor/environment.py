"""What traces and contains doctor's child here: the strongest rungs on PATH, proven by the run.

Doctor starts no probe process of its own. It runs the child under the strongest prefix the
tools on PATH offer — strace with the judged calls under `--seccomp-bpf`, then `unshare -rn
--pid --fork --kill-child` — and the child's first act, before anything of the toolchain or
the library is loaded, is one byte on stdout (`load.runner.STARTED`). A run that wrote it
proves that prefix works here. A run without it ran no library code: only then is each rung
probed on its own (`load.host.probe_tracer`, `load.containment.probe_containment`), to say which
is missing and why, and the child run once more under what works.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable

from horon_bundle.load.containment import Containment, probe_containment
from horon_bundle.load.host import Tracer, probe_tracer
from horon_bundle.load.runner import ChildOutcome

Attempt = Callable[[Tracer, Containment], ChildOutcome]


def strongest(syscalls: tuple[str, ...]) -> tuple[Tracer, Containment]:
    """Every rung whose tool is on PATH, not yet proven (no process started)."""
    strace = shutil.which("strace")
    tracer = (Tracer(strace, "", syscalls, seccomp=True) if strace is not None
              else Tracer(None, "strace not found on PATH"))
    unshare = shutil.which("unshare")
    if unshare is None or sys.platform == "win32":
        return tracer, probe_containment()  # says what is missing, without a process
    return tracer, Containment(unshare, True, "", "")


def run_proven(syscalls: tuple[str, ...], attempt: Attempt,
               ) -> tuple[Tracer, Containment, ChildOutcome]:
    """Run `attempt` under the strongest rungs; where the child never started, under the rungs
    that each work here. The rungs returned are the ones the returned outcome ran under."""
    tracer, containment = strongest(syscalls)
    outcome = attempt(tracer, containment)
    if outcome.started or (tracer.strace is None and containment.unshare is None):
        return tracer, containment, outcome
    proven = probe_tracer(syscalls), probe_containment()
    if proven == (tracer, containment):
        return tracer, containment, outcome  # the rungs work: the interpreter itself did not
    return proven[0], proven[1], attempt(*proven)
