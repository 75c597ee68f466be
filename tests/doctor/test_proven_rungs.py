"""Doctor starts no probe process: the child's own run proves the strongest rungs on PATH (its
start byte), and only a run that never started is followed by probing each rung and running
once more under what works — with the missing rung named, and every check still made."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.doctor.environment import run_proven, strongest
from horon_bundle.doctor.trace import TRACED
from horon_bundle.load.containment import Containment, probe_containment
from horon_bundle.load.host import Tracer, probe_tracer
from horon_bundle.load.runner import ChildOutcome, run_child
from tests.conftest import BuiltExample
from tests.doctor.test_doctor import assert_conformant, doctor, results

pytestmark = [pytest.mark.cargo,
              pytest.mark.skipif(shutil.which("strace") is None or shutil.which("unshare") is None,
                                 reason="needs strace and unshare")]


def _wrapper(directory: Path, tool: str, refused: str, message: str) -> Path:
    """`tool` as on PATH, except that it fails like an old or forbidden one on `refused`."""
    real = shutil.which(tool)
    wrapper = directory / tool
    wrapper.write_text("#!/bin/sh\n"
                       f'for a in "$@"; do [ "$a" = {refused} ] && '
                       f"{{ echo '{message}' >&2; exit 1; }}; done\n"
                       f'exec {real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


def _outcome(started: bool) -> ChildOutcome:
    return ChildOutcome(answer=None, returncode=1, timed_out=False, stderr="",
                        stdout_problem=None, started=started)


def test_a_started_run_is_the_proof_and_nothing_is_probed() -> None:
    seen: list[tuple[Tracer, Containment]] = []

    def attempt(tracer: Tracer, containment: Containment) -> ChildOutcome:
        seen.append((tracer, containment))
        return _outcome(started=True)

    tracer, containment, _ = run_proven(TRACED, attempt)
    assert seen == [(tracer, containment)] == [strongest(TRACED)]
    assert tracer.seccomp and containment.pid_namespace
    # and the strongest rungs are what the probes would have found here
    assert (tracer, containment) == (probe_tracer(TRACED), probe_containment())


def test_a_run_that_never_started_is_run_again_under_what_works(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _wrapper(tmp_path, "unshare", "--pid", "unshare: unshare failed: Operation not permitted")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    seen: list[Containment] = []

    def attempt(tracer: Tracer, containment: Containment) -> ChildOutcome:
        seen.append(containment)
        return _outcome(started=len(seen) > 1)

    tracer, containment, outcome = run_proven(TRACED, attempt)
    assert [c.pid_namespace for c in seen] == [True, False]
    assert outcome.started and containment is seen[-1]
    assert containment.network_namespace and "Operation not permitted" in containment.pid_note
    assert tracer.strace is not None and tracer.seccomp


@pytest.mark.process
def test_the_start_byte_is_written_only_when_the_wrappers_worked(tmp_path: Path) -> None:
    library = tmp_path / "missing.so"
    refused = Containment("/bin/false", True, "", "")  # a wrapper that fails: no interpreter
    outcome = run_child("handshake", library, containment=refused)
    assert not outcome.started and outcome.answer is None
    ran = run_child("handshake", library, containment=Containment(None, False, "x", "x"))
    assert ran.started and ran.answer is not None  # its answer: the load failed


def test_doctor_without_a_pid_namespace_runs_again_and_says_so(
        example_release: BuiltExample, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    _wrapper(tools, "unshare", "--pid", "unshare: unshare failed: Operation not permitted")
    result, document = doctor(example_release.bundle, tmp_path,
                              env={"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"})
    assert_conformant(result, document)
    environment: dict[str, Any] = document["environment"]
    assert environment["pid_namespace"] is False and environment["network_namespace"] is True
    assert "Operation not permitted" in environment["pid_note"]
    assert environment["tracer"] == "strace"


def test_doctor_under_an_strace_without_the_filter_still_judges_side_effects(
        fault_bundle: Any, tmp_path: Path) -> None:
    tools = tmp_path / "tools"
    tools.mkdir()
    _wrapper(tools, "strace", "--seccomp-bpf", "strace: unrecognized option '--seccomp-bpf'")
    result, document = doctor(fault_bundle("fault-home-write"), tmp_path,
                              env={"PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"})
    assert result.status == 1
    assert results(document)["side-effects.write"] == "fail"
    assert "traced with strace" in str(document["checks"])
    assert document["environment"]["tracer"] == "strace"
