"""The child that loads a library is contained, and what it says is decoded as hostile data.

Real cdylibs from tests/fixtures/abi-faults, built with the real cargo: a library that starts
a `setsid()` daemon holding the child's pipes, one that kills its parent and its process
group, one that touches 3 GiB, one that forges the child's answer and one that scribbles
into its progress record. Each is run through the real CLI (doctor, and the build's probe),
on this machine's strongest containment and again with no `unshare` and no `strace` on PATH:
each must end in a refusal with its code, exit 1, no traceback, nothing left running,
nothing written, and in far less time than the timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.load.containment import probe_containment
from horon_bundle.load.runner import run_child
from tests.doctor.test_doctor import (
    HAS_STRACE,
    FaultBundle,
    failed_codes,
    messages,
    results,
)
from tests.gate_helpers import ABI_FAULTS, assert_refused_cleanly, build
from tests.helpers import REPO, CliResult, assert_refused, cli, tree_snapshot
from tests.session_builds import built, probe_switched_off

pytestmark = [pytest.mark.cargo, pytest.mark.process]

def _bare_path(tmp_path: Path) -> str:
    """A PATH with no unshare, no strace and no rustc: the weakest containment."""
    directory = tmp_path / "bare-bin"
    directory.mkdir(exist_ok=True)
    return str(directory)


def _run(args: list[str | Path], tmp_path: Path, *, path: str | None = None,
         ) -> tuple[CliResult, float]:
    """The CLI in a session of its own (a library that reached our group would end only
    this process, and the test would fail, not the test run); TMPDIR private."""
    temp = tmp_path / "cli-tmp"
    temp.mkdir(exist_ok=True)
    env = {**os.environ, "COLUMNS": "200", "TMPDIR": str(temp)}
    if path is not None:
        env["PATH"] = path
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "horon_bundle", *map(str, args)],
                          capture_output=True, text=True, check=False, timeout=300, env=env,
                          start_new_session=True)
    took = time.monotonic() - started
    assert list(temp.iterdir()) == [], "temporary files left behind"
    return CliResult(done.returncode, done.stdout, done.stderr), took


def _no_process_holds(where: Path) -> None:
    """No process whose command line names `where` (the temporary directory the library was
    copied into, for this test only) is still alive."""
    mark = str(where).encode()
    deadline = time.monotonic() + 2
    while True:
        alive = []
        for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                if mark in cmdline.read_bytes():
                    alive.append(cmdline.parent.name)
            except OSError:
                continue
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert alive == [], f"processes of the library survived: {alive}"


def _doctor(bundle: Path, tmp_path: Path, *extra: str, path: str | None = None,
            ) -> tuple[CliResult, dict[str, Any], float]:
    before = tree_snapshot(bundle)
    result, took = _run(["doctor", bundle, "--json", *extra], tmp_path, path=path)
    assert "Traceback" not in result.stderr, result.stderr
    assert tree_snapshot(bundle) == before
    document = result.json()
    assert document["exit_status"] == result.status
    return result, document, took


CONTAINMENTS = ["strongest", "bare"]


def _path_for(kind: str, tmp_path: Path) -> str | None:
    return None if kind == "strongest" else _bare_path(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("kind", CONTAINMENTS)
def test_a_setsid_daemon_is_killed_at_once_and_reported(fault_bundle: FaultBundle, tmp_path: Path,
                                                        kind: str) -> None:
    result, document, took = _doctor(fault_bundle("fault-setsid"), tmp_path,
                                     "--timeout", "60", path=_path_for(kind, tmp_path))
    assert_refused(result, "abi.stray-process")
    assert failed_codes(document) == {"abi.stray-process"}, messages(document)
    assert results(document)["child"] == "fail"
    assert results(document)["instance.tool-call"] == "pass"
    assert took < 15, f"doctor took {took:.1f} s with a daemon holding its pipes"
    _no_process_holds(tmp_path / "cli-tmp")


def test_the_build_probe_kills_a_daemon_and_refuses(tmp_path: Path,
                                                    cargo_target_dir: Path) -> None:
    out, temp = tmp_path / "out", tmp_path / "tmp"
    temp.mkdir()
    started = time.monotonic()
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-setsid",
                   env={"TMPDIR": str(temp)})
    assert_refused_cleanly(result, "abi.stray-process", out)
    assert time.monotonic() - started < 60
    assert list(temp.iterdir()) == []
    _no_process_holds(out)


@pytest.mark.slow
def test_a_prebuilt_library_is_probed_contained_too(tmp_path: Path,
                                                   cargo_target_dir: Path) -> None:
    """`build --prebuilt`: a library compiled elsewhere (here with the probe off, as on a
    machine that could not load it) is probed here under the same containment."""
    compiled = tmp_path / "compiled"
    with probe_switched_off():
        built(cli("compile", ABI_FAULTS, "--plugin", "fault-setsid", "--out", compiled,
                  "--target-dir", cargo_target_dir))
    [directory] = list(compiled.iterdir())
    [library] = [p for p in directory.iterdir() if p.suffix == ".so"]
    out, temp = tmp_path / "out", tmp_path / "tmp"
    temp.mkdir()
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-setsid", "--prebuilt",
                   library, "--record", directory / "record.json", env={"TMPDIR": str(temp)})
    assert_refused_cleanly(result, "abi.stray-process", out)
    assert list(temp.iterdir()) == []
    _no_process_holds(out)


@pytest.mark.slow
@pytest.mark.parametrize("kind", CONTAINMENTS)
def test_a_library_killing_its_parent_and_group_cannot_reach_doctor(
        fault_bundle: FaultBundle, tmp_path: Path, kind: str) -> None:
    result, document, _ = _doctor(fault_bundle("fault-kill-parent"), tmp_path,
                                  path=_path_for(kind, tmp_path))
    assert_refused(result, "abi.crash")  # doctor lived to print its report
    assert "SIGKILL during the handshake phase" in messages(document)
    assert results(document)["load"] == "pass"


@pytest.mark.slow
def test_the_build_probe_survives_a_library_killing_its_group(tmp_path: Path,
                                                             cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "horon_bundle", "build", str(ABI_FAULTS),
                           "--plugin", "fault-kill-parent", "--out", str(out), "--target-dir",
                           str(cargo_target_dir)], capture_output=True, text=True,
                          check=False, timeout=600, start_new_session=True,
                          env={**os.environ, "COLUMNS": "200"})
    result = CliResult(done.returncode, done.stdout, done.stderr)
    assert_refused_cleanly(result, "abi.crash", out)
    assert "was killed by SIGKILL during the handshake" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize(("extra", "limit"), [((), 1024), (("--memory-limit", "256"), 256)])
def test_a_library_touching_3_gib_fails_to_allocate(fault_bundle: FaultBundle, tmp_path: Path,
                                                    extra: tuple[str, ...], limit: int) -> None:
    result, document, _ = _doctor(fault_bundle("fault-memory"), tmp_path, *extra)
    assert_refused(result, "abi.crash")
    assert document["environment"]["memory_limit_mib"] == limit
    assert "SIGABRT during the handshake phase" in messages(document)
    assert f"its address space was limited to {limit} MiB" in messages(document)


@pytest.mark.slow
@pytest.mark.parametrize("limit_mib", [256, 1024])
def test_the_memory_limit_is_what_the_child_gets(fault_bundle: FaultBundle, tmp_path: Path,
                                                 limit_mib: int) -> None:
    """The same launcher in process, on the real library: it fails below the limit."""
    library = next((fault_bundle("fault-memory") / "lib").iterdir())
    outcome = run_child("handshake", library, memory_limit=limit_mib << 20, timeout=60)
    assert outcome.answer is None
    line = next(line for line in outcome.stderr.splitlines() if "allocation failed" in line)
    reached = int(line.split("after ")[1].split(" MiB")[0])
    assert limit_mib - 256 < reached < limit_mib, line


@pytest.mark.slow
def test_the_build_probe_limits_memory_too(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-memory")
    assert_refused_cleanly(result, "abi.crash", out)
    assert "its address space was limited to 1024 MiB" in result.stderr


@pytest.mark.slow
@pytest.mark.parametrize("kind", CONTAINMENTS)
def test_a_forged_answer_is_refused_never_conformant(fault_bundle: FaultBundle, tmp_path: Path,
                                                     kind: str) -> None:
    result, document, _ = _doctor(fault_bundle("fault-forged-answer"), tmp_path,
                                  path=_path_for(kind, tmp_path))
    assert_refused(result, "abi.answer")
    assert document["ok"] is False
    assert "conformant" not in result.stderr
    assert results(document)["child"] == "fail"
    assert "disagree" in messages(document), messages(document)


def test_the_build_probe_refuses_a_forged_answer(tmp_path: Path,
                                                 cargo_target_dir: Path) -> None:
    out = tmp_path / "out"
    result = build(ABI_FAULTS, out, cargo_target_dir, "--plugin", "fault-forged-answer")
    assert_refused_cleanly(result, "abi.answer", out)


@pytest.mark.slow
def test_garbage_in_the_progress_record_is_refused(fault_bundle: FaultBundle,
                                                   tmp_path: Path) -> None:
    result, document, _ = _doctor(fault_bundle("fault-progress-garbage"), tmp_path)
    assert_refused(result, "abi.answer")
    assert failed_codes(document) == {"abi.answer"}, messages(document)
    assert "progress line 4" in messages(document)


@pytest.mark.slow
@pytest.mark.skipif(not HAS_STRACE, reason="needs strace (installed by .ci/run)")
def test_writes_into_the_instance_directory_while_loaded_or_described(
        fault_bundle: FaultBundle, tmp_path: Path) -> None:
    """Writing inside the instance directory is allowed in operations only: not while the
    library loads, handshakes or describes."""
    result, document, _ = _doctor(fault_bundle("fault-instance-write"), tmp_path)
    assert_refused(result, "doctor.side-effect-write")
    assert failed_codes(document) == {"doctor.side-effect-write"}, messages(document)
    text = messages(document)
    assert "during load: openat $INSTANCE_DIR/.written-at-load" in text, text
    assert "during describe: openat $INSTANCE_DIR/.written-in-describe" in text, text


@pytest.mark.slow
def test_one_byte_past_the_table_is_an_overrun(fault_bundle: FaultBundle, tmp_path: Path) -> None:
    result, document, _ = _doctor(fault_bundle("fault-overrun-one"), tmp_path)
    assert_refused(result, "abi.out-overrun")
    checks = results(document)
    assert checks["handshake.exact-write"] == "fail"
    assert checks["refusals.out-untouched"] == "fail"
    text = messages(document)
    assert "the handshake wrote up to byte 104 with out_capacity 104" in text
    assert "a newer host: struct_size 32, host_api_minor 7, out_capacity 256: wrote up to " \
           "byte 104; a v1 table is 104 bytes" in text


@pytest.mark.slow
def test_the_report_says_what_contained_the_child(fault_bundle: FaultBundle,
                                                  tmp_path: Path) -> None:
    _, document, _ = _doctor(fault_bundle("fault-overrun-one"), tmp_path)
    environment = document["environment"]
    here = probe_containment()
    assert environment["pid_namespace"] is here.pid_namespace
    assert environment["network_namespace"] is here.network_namespace
    assert environment["own_session"] is True
    assert environment["memory_limit_mib"] == 1024
    _, document, _ = _doctor(fault_bundle("fault-overrun-one"), tmp_path,
                             path=_bare_path(tmp_path))
    environment = document["environment"]
    assert (environment["pid_namespace"], environment["network_namespace"]) == (False, False)
    assert any(note.startswith("no PID namespace (unshare (util-linux) not found on PATH)")
               for note in document["notes"])


@pytest.mark.parametrize("value", ["0", "63", "abc", "1.5", "2000000"])
def test_a_bad_memory_limit_is_a_usage_error(value: str, tmp_path: Path) -> None:
    result, _ = _run(["doctor", tmp_path, "--memory-limit", value], tmp_path)
    assert result.status == 2
    assert "--memory-limit" in result.stderr
    assert "Traceback" not in result.stderr


def test_strongest_containment_here_is_recorded() -> None:
    """On this machine (root, util-linux 2.38): user, network and PID namespaces. Where the
    kernel refuses them the probe falls back a rung and says why (tests above run both)."""
    here = probe_containment()
    if shutil.which("unshare") is None:
        pytest.skip("no unshare on this machine")
    assert here.network_namespace, here
    assert here.prefix()[:2] == [str(shutil.which("unshare")), "-rn"]
    assert REPO.is_dir()


@pytest.mark.slow
def test_a_library_larger_than_the_limit_still_loads(tmp_path: Path,
                                                     cargo_target_dir: Path) -> None:
    """The limit is on what the library asks for, on top of the file it maps: a 400 MiB
    library (a blob linked into .rodata) loads under a 256 MiB limit, and the note says so."""
    from benchmarks.fixtures import sized_workspace  # noqa: PLC0415 - the bench's own maker

    workspace = sized_workspace(tmp_path, 400 << 20)
    subprocess.run(["cargo", "build", "--release", "--quiet", "--target-dir",
                    str(cargo_target_dir / "large")], cwd=workspace, check=True, timeout=600)
    [library] = (cargo_target_dir / "large" / "release").glob("libhoron_example.so")
    assert library.stat().st_size > 400 << 20
    outcome = run_child("handshake", library, memory_limit=256 << 20, timeout=120)
    assert outcome.answer is not None and "error" not in outcome.answer, outcome.answer
    assert outcome.returncode == 0
    assert f"beyond the {library.stat().st_size}-byte library it maps" in outcome.memory_note
