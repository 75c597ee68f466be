"""`horon-bundle doctor`: load a bundle's library in a child process and check ABI v1.

In order: verify the bundle (a refused bundle stops here, with verify's findings); compare
its target with the host's from the metadata alone (nothing is loaded for another target);
copy the library out (an archive entry is streamed from the validated archive, never
extracted wholesale) and check its digest again; run the child (`load.child`, mode `doctor`)
contained by `load.runner` (namespaces where the machine allows, its own session, a timeout,
a memory limit, an empty HOME and working directory), under `strace -f` when it works (the
run proves the rungs: `doctor.environment`); decode
what the child reported strictly and reconcile its answer with its progress record and the
trace (`load.transcript`); judge it phase by phase (`doctor.phases`) and what the tracer saw.
The temporary directory is removed whatever happened. POSIX only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from pathlib import Path, PurePosixPath

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import CHUNK
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.doctor.effects import ChildDirs, judge_snapshots, judge_trace, snapshot
from horon_bundle.doctor.environment import run_proven
from horon_bundle.doctor.handshake import expect_rows, refusal_rows
from horon_bundle.doctor.phases import PHASE_CHECKS, judge_phases
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.doctor.trace import TRACED, Offence, offences, parse_calls
from horon_bundle.load.answers import Expect
from horon_bundle.load.containment import (
    DEFAULT_MEMORY_LIMIT_MIB,
    MAX_MEMORY_LIMIT_MIB,
    MIN_MEMORY_LIMIT_MIB,
    Containment,
    mib,
)
from horon_bundle.load.host import Tracer, host_target
from horon_bundle.load.runner import (
    DEFAULT_TIMEOUT,
    MAX_TIMEOUT,
    ChildOutcome,
    private_directory,
    run_child,
)
from horon_bundle.load.transcript import MAX_PROGRESS_BYTES, Transcript, read_progress, reconcile
from horon_bundle.model.manifest import Manifest
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.reading.open import open_bundle

__all__ = ["PHASE_CHECKS", "doctor_path", "extract_library", "phase_results"]

CONFIG_BLOB = "{}"
FRAME_LIMIT = 256
INSPECT_LIMIT = 1 << 20


def doctor_path(path: Path, *, timeout: float = DEFAULT_TIMEOUT,
                memory_limit_mib: int = DEFAULT_MEMORY_LIMIT_MIB,
                reporter: Reporter | None = None) -> DoctorReport:
    """Run every check on a bundle directory or archive; the report says pass/fail/skip."""
    if os.name != "posix" or sys.platform == "win32":
        raise Refused.one(codes.DOCTOR_UNSUPPORTED,
                          f"doctor loads libraries only on POSIX hosts; this is {sys.platform}")
    if not 0 < timeout <= MAX_TIMEOUT:
        raise Refused.one(codes.DOCTOR_ENVIRONMENT,
                          f"--timeout {timeout}: must be above 0 and at most {MAX_TIMEOUT:g} s")
    if not MIN_MEMORY_LIMIT_MIB <= memory_limit_mib <= MAX_MEMORY_LIMIT_MIB:
        raise Refused.one(codes.DOCTOR_ENVIRONMENT,
                          f"--memory-limit {memory_limit_mib}: must be {MIN_MEMORY_LIMIT_MIB} "
                          f"to {MAX_MEMORY_LIMIT_MIB} MiB")
    reporter = reporter or SilentReporter()
    report = DoctorReport(path=str(path))
    reporter.step(f"verifying {path}")
    verified = verify_path(path)
    if not verified.ok or verified.manifest is None:
        report.failed_with("verify", verified.findings, expected="a bundle that verifies",
                           got=f"{len(verified.findings)} finding(s)")
        return report
    manifest = verified.manifest
    report.passed("verify", expected="a bundle that verifies", got="verified")
    report.bundle = {"id": manifest.id, "version": manifest.version, "target": manifest.target,
                     "channel": manifest.channel, "library": manifest.library.path,
                     "features": list(manifest.features)}
    host = host_target()
    report.host, report.host_source = host.triple, host.source
    if host.triple is None:
        raise Refused.one(codes.DOCTOR_ENVIRONMENT,
                          f"cannot tell this host's target triple ({sys.platform}) and rustc is "
                          "not available")
    if manifest.target != host.triple:
        report.failed("target", codes.TARGET_MISMATCH,
                      f"{Path(path).name}: the bundle is for {manifest.target}, this host is "
                      f"{host.triple} ({host.source}); nothing was loaded",
                      expected=host.triple, got=manifest.target)
        return report
    report.passed("target", expected=host.triple, got=manifest.target, note=host.source)
    try:
        with private_directory("horon-doctor-") as temp:
            _doctor_library(path, manifest, temp, timeout=timeout, report=report,
                            reporter=reporter, memory_limit=mib(memory_limit_mib))
    except OSError as exc:
        raise Refused.one(codes.DOCTOR_ENVIRONMENT,
                          f"doctor's temporary directory: {exc.strerror or exc}") from None
    return report


def extract_library(path: Path, manifest: Manifest, directory: Path) -> Path:
    """Stream the declared library out of the bundle and check its digest once more."""
    destination = directory / PurePosixPath(manifest.library.path).name
    hasher = hashlib.sha256()
    size = 0
    with open_bundle(path) as source:
        stream = source.open(manifest.library.path)
        try:
            with destination.open("xb") as writer:
                while chunk := stream.read(CHUNK):
                    hasher.update(chunk)
                    writer.write(chunk)
                    size += len(chunk)
        finally:
            stream.close()
    if hasher.hexdigest() != manifest.library.sha256 or size != manifest.library.size:
        raise Refused.one(codes.CHECKSUM_MISMATCH,
                          f"{manifest.library.path}: changed after verify (sha256 "
                          f"{hasher.hexdigest()}, {size} bytes; plugin.json "
                          f"{manifest.library.sha256}, {manifest.library.size} bytes)")
    return destination


def _doctor_library(path: Path, manifest: Manifest, root: Path, *, timeout: float,
                    memory_limit: int, report: DoctorReport, reporter: Reporter) -> None:
    dirs = ChildDirs(home=root / "home", instance=root / "instance", config=root / "config")
    for directory in (dirs.home, dirs.instance, dirs.config, root / "lib"):
        directory.mkdir(mode=0o700)
    try:
        library = extract_library(path, manifest, root / "lib")
    except Refused as exc:
        report.failed_with("library", list(exc.findings), expected=manifest.library.sha256,
                           got="a different file")
        return
    report.passed("library", expected=manifest.library.sha256, got=manifest.library.sha256,
                  note=f"{manifest.library.path} copied out and re-hashed")
    rows = refusal_rows(manifest.features)
    expect = expect_rows(rows, inspect_limit=INSPECT_LIMIT, frame_limit=FRAME_LIMIT)
    before = {"$HOME": snapshot(dirs.home), "$CONFIG_DIR": snapshot(dirs.config)}
    runs: list[tuple[Path, Path, float]] = []  # progress record, trace log, seconds

    def attempt(tracer: Tracer, containment: Containment) -> ChildOutcome:
        prefix = f"{len(runs)}-" if runs else ""
        progress, trace_log = root / f"{prefix}progress.jsonl", root / f"{prefix}trace.log"
        fd = os.open(progress, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
        argument = {"progress_fd": fd, "instance_dir": str(dirs.instance),
                    "config_dir": str(dirs.config), "features": ",".join(manifest.features),
                    "tool": f"{manifest.id}__whoami", "config": CONFIG_BLOB,
                    "rows": [row.to_child() for row in rows], "frame_limit": FRAME_LIMIT,
                    "inspect_limit": INSPECT_LIMIT}
        how = ", ".join(filter(None, ("under strace" if tracer.strace else "",
                                      "without network" if containment.network_namespace
                                      else "")))
        reporter.step(f"loading {library.name} in a child process"
                      f"{' (' + how + ')' if how else ''}")
        started = time.monotonic()
        try:
            return run_child("doctor", library, timeout=timeout, memory_limit=memory_limit,
                             argument=argument, tracer=tracer.argv(trace_log), home=dirs.home,
                             pass_fds=(fd,), containment=containment)
        finally:
            os.close(fd)
            runs.append((progress, trace_log, time.monotonic() - started))

    tracer, containment, outcome = run_proven(TRACED, attempt)
    progress_path, trace_log, seconds = runs[-1]
    report.environment = {"timeout_s": timeout, "memory_limit_mib": memory_limit >> 20,
                          **tracer.to_json(), **containment.to_json(),
                          "own_session": sys.platform != "win32",
                          "child_ms": round(seconds * 1000), "child_end": outcome.describe_end()}
    _environment_notes(report, tracer, containment)
    transcript = phase_results(outcome, progress_path, expect)
    if tracer.strace is None:
        judge_phases(report, manifest, library, transcript=transcript, outcome=outcome,
                     rows=rows)
        judge_snapshots(report, dirs, before, tracer.note)
        return
    found, why = _read_trace(trace_log, dirs, transcript)
    judge_phases(report, manifest, library, transcript=transcript, outcome=outcome, rows=rows)
    if found is None:
        report.skipped("side-effects.write", why)
        report.skipped("side-effects.network", why)
    else:
        judge_trace(report, found, dirs)


def _environment_notes(report: DoctorReport, tracer: Tracer, containment: Containment) -> None:
    report.notes += containment.notes()
    if tracer.strace is None:
        report.notes.append(f"no tracer ({tracer.note}): side effects are judged from "
                            "$HOME and $CONFIG_DIR before/after only; connections are not "
                            "checked")


def phase_results(outcome: ChildOutcome, progress: Path, expect: Expect | None = None,
                  ) -> Transcript:
    """What the child reported, decoded strictly: its answer where sound and in agreement with
    its progress record, else what the progress record says it finished."""
    expect = expect or Expect()
    with progress.open("rb") as stream:
        data = stream.read(MAX_PROGRESS_BYTES + 1)
    recorded = read_progress(data[:MAX_PROGRESS_BYTES], expect)
    if len(data) > MAX_PROGRESS_BYTES:
        recorded.problems.append(Finding(codes.ABI_ANSWER, f"the progress record is above "
                                                           f"{MAX_PROGRESS_BYTES >> 20} MiB"))
    answer = outcome.answer
    if isinstance(answer, dict) and set(answer) == {"child_error"}:
        raise Refused.one(codes.ABI_CHILD_ERROR,
                          f"the doctor child failed: {str(answer['child_error'])[:300]}")
    return reconcile(answer, recorded, expect)


def _read_trace(trace_log: Path, dirs: ChildDirs, transcript: Transcript,
                ) -> tuple[list[Offence] | None, str]:
    """The offences in the trace, or None and why not (it shows no phase at all). A phase the
    transcript reports but the trace never saw begin is a contradiction (`abi.answer`)."""
    if not trace_log.is_file():
        return None, "strace wrote no log"
    markers: list[str] = []
    with trace_log.open(encoding="utf-8", errors="replace") as lines:
        found = offences(parse_calls(lines, markers, judged_only=True), cwd=str(dirs.home))
    unseen = [name for name in transcript.phases if name not in markers]
    if unseen and not transcript.problems:
        transcript.problems.append(Finding(
            codes.ABI_ANSWER, f"the child reports phase {unseen[0]!r}, which the trace never "
                              "saw begin"))
    if "load" not in markers:
        return None, "the trace shows no phase marker: the child never reached the library"
    return found, ""
