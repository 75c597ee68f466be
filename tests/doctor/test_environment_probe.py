"""The tracer and containment probe doctor runs beside the verify: one process chain when both
rungs work, each rung on its own (and named) when the chain fails."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

import pytest

from horon_bundle.doctor.environment import EnvironmentProbe
from horon_bundle.doctor.trace import TRACED
from horon_bundle.load.containment import probe_containment
from horon_bundle.load.host import probe_tracer

pytestmark = [pytest.mark.process,
              pytest.mark.skipif(shutil.which("strace") is None or shutil.which("unshare") is None,
                                 reason="needs strace and unshare")]


def test_the_chain_finds_what_each_probe_finds() -> None:
    with EnvironmentProbe(TRACED) as probe:
        tracer, containment = probe.result()
    assert (tracer, containment) == (probe_tracer(TRACED), probe_containment())
    assert tracer.seccomp and tracer.syscalls == TRACED


def test_a_failing_chain_is_probed_rung_by_rung(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """An unshare refused a PID namespace: the tracer still works, the network namespace too,
    and the missing rung is named, not the whole chain called broken."""
    real = shutil.which("unshare")
    wrapper = tmp_path / "unshare"
    wrapper.write_text("#!/bin/sh\n"
                       'for a in "$@"; do [ "$a" = --pid ] && '
                       "{ echo 'unshare: unshare failed: Operation not permitted' >&2; exit 1; }; "
                       "done\n"
                       f'exec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with EnvironmentProbe(TRACED) as probe:
        tracer, containment = probe.result()
    assert tracer.strace is not None and tracer.seccomp
    assert containment.unshare == str(wrapper)
    assert containment.network_namespace and not containment.pid_namespace
    assert "Operation not permitted" in containment.pid_note


def test_a_probe_left_unread_is_ended() -> None:
    probe = EnvironmentProbe(TRACED)
    process = probe._process
    assert process is not None
    probe.close()
    assert process.returncode is not None
    probe.close()  # twice is harmless
