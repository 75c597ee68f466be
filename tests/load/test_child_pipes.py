"""Reading the child's pipes: once both are at their end, the launcher waits for the exit
itself (no polling in steps), still bounded by the same deadline."""

from __future__ import annotations

import selectors
import subprocess
import time
from typing import Any

import pytest

from horon_bundle.load import runner

pytestmark = pytest.mark.process


def _closing(then: str) -> subprocess.Popen[bytes]:
    """A process that closes its stdout and stderr first, then runs `then`."""
    return subprocess.Popen(["sh", "-c", f"exec >&- 2>&-; {then}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)


def test_an_exit_after_the_pipes_closed_is_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    empty: list[float | None] = []

    class Recording(selectors.DefaultSelector):
        def select(self, timeout: float | None = None) -> Any:
            if not self.get_map():
                empty.append(timeout)  # a sleep that no pipe can end early
            return super().select(timeout)

    monkeypatch.setattr(selectors, "DefaultSelector", Recording)
    with _closing("sleep 0.2; exit 3") as process:
        got = runner._collect(process, time.monotonic() + 30)
        assert not got.timed_out and got.strays is None
        assert process.returncode == 3  # reaped by the wait, not found later
    assert empty == []


def test_a_process_that_closed_its_pipes_still_meets_the_deadline() -> None:
    with _closing("sleep 30") as process:
        try:
            got = runner._collect(process, time.monotonic() + 0.5)
            assert got.timed_out
            assert process.poll() is None  # returned at the deadline, not at the exit
        finally:
            process.kill()
