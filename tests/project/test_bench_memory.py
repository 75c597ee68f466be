"""The bench's memory figures are the tool's own: a memory-hungry child is reported as such,
and a small child stays small while the driver holding it is large (Linux's `ru_maxrss` of a
child would carry the driver's pages over `exec`: that figure could never fail)."""

from __future__ import annotations

import sys

import pytest
from benchmarks.measure import run
from benchmarks.run import memory_row

MIB = 1 << 20
_HUNGRY = "data = b'x' * (160 << 20)\nprint(len(data))"


@pytest.mark.process
def test_a_hungry_child_is_reported_and_its_row_fails() -> None:
    hungry = run([sys.executable, "-c", _HUNGRY])
    assert hungry.peak_kib >= 160 * 1024, hungry.peak_kib
    assert hungry.cpu_seconds > 0  # writing 160 MiB takes CPU time, as GNU time reports it
    row = memory_row("a deliberately hungry child", [(1 * MIB, hungry.peak_kib)])
    assert row.met is False
    assert row.owned


@pytest.mark.process
def test_a_small_child_is_small_while_the_driver_is_large() -> None:
    ballast = b"y" * (160 * MIB)  # the driver's pages: not the child's figure
    small = run([sys.executable, "-c", "pass"])
    assert len(ballast) == 160 * MIB
    assert 0 < small.peak_kib < 48 * 1024, small.peak_kib
    assert memory_row("python -c pass", [(1 * MIB, small.peak_kib)]).met is True
