"""What traces and contains doctor's child here: probed once, while the bundle is verified.

The child runs as `strace OPTIONS -- unshare -rn --pid --fork --kill-child -- python …`. That
whole prefix is tried on a trivial command (`load.containment.trivial_command`) in one process
chain, started before the bundle is verified and collected after: when it works, both rungs
work together exactly as the child will use them, and the probe cost no time of its own (it
ran beside the verify). When it does not, each is probed on its own, as `load.host` and
`load.containment` always do, to say which rung is missing and why. A bundle refused by verify
ends the probe unread.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
from types import TracebackType

from horon_bundle.core.errors import Refused
from horon_bundle.core.process import DEVNULL, Popen, TimeoutExpired, spawn
from horon_bundle.load.containment import Containment, probe_containment, trivial_command
from horon_bundle.load.host import Tracer, probe_tracer

PROBE_TIMEOUT = 30.0


class EnvironmentProbe:
    """`with EnvironmentProbe(syscalls) as probe: …; tracer, containment = probe.result()`."""

    def __init__(self, syscalls: tuple[str, ...]) -> None:
        self.syscalls = syscalls
        self._process: Popen[bytes] | None = None
        self._together: tuple[Tracer, Containment] | None = None
        strace, unshare = shutil.which("strace"), shutil.which("unshare")
        if strace is None or unshare is None or not sys.platform.startswith("linux"):
            return
        tracer = Tracer(strace, "", syscalls, seccomp=True)
        containment = Containment(unshare, True, "", "")
        argv = [strace, *tracer.options(), "-o", "/dev/null", "--", *containment.prefix(),
                *trivial_command()]
        with contextlib.suppress(Refused):
            self._process = spawn(argv, stdin=DEVNULL, stdout=DEVNULL, stderr=DEVNULL)
            self._together = (tracer, containment)

    def __enter__(self) -> EnvironmentProbe:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def result(self) -> tuple[Tracer, Containment]:
        """The tracer and the containment that work here: both from the probe started in
        the background when it passed, else each probed on its own."""
        process, together = self._process, self._together
        if process is not None and together is not None:
            try:
                passed = process.wait(timeout=PROBE_TIMEOUT) == 0
            except TimeoutExpired:
                passed = False
            self.close()
            if passed:
                return together
        return probe_tracer(self.syscalls), probe_containment()

    def close(self) -> None:
        """End the background probe if it still runs (a bundle verify refused)."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        with contextlib.suppress(TimeoutExpired):
            process.wait(timeout=PROBE_TIMEOUT)
