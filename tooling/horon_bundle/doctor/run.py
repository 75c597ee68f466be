"""`horon-bundle doctor`: load a bundle's library in a child process and check ABI v1.

In order: verify the bundle (a refused bundle stops here, with verify's findings); compare
its target with the host's from the metadata alone (nothing is loaded for another target);
copy the library out (an archive entry is streamed from the validated archive, never
extracted wholesale) and check its digest again; run the child (`load.child`, mode `doctor`)
with a timeout, an empty HOME and working directory, in a network namespace when `unshare`
works, under `strace -f` when it works; judge what the child saw phase by phase and what the
tracer saw. The temporary directory is removed whatever happened. POSIX only.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import time
from pathlib import Path, PurePosixPath
from typing import Any

from horon_bundle.abi.wire import parse_list
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import CHUNK
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.core.strictjson import read_json
from horon_bundle.doctor.effects import Places, judge_snapshots, judge_trace, snapshot
from horon_bundle.doctor.handshake import Row, judge_handshake, judge_refusals, refusal_rows
from horon_bundle.doctor.instance import (
    judge_buffers,
    judge_create,
    judge_describe,
    judge_teardown,
    judge_tool_call,
)
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.doctor.trace import offences, parse_calls
from horon_bundle.load.host import Sandbox, host_target, probe_sandbox
from horon_bundle.load.runner import DEFAULT_TIMEOUT, ChildOutcome, refusal_for, run_child
from horon_bundle.model.manifest import Manifest
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.source import open_bundle

PHASE_CHECKS: dict[str, tuple[str, ...]] = {
    "load": ("load",),
    "handshake": ("handshake.status", "handshake.struct-size", "handshake.abi-version",
                  "handshake.wire-schema", "handshake.plugin-id", "handshake.features",
                  "handshake.entries", "handshake.exact-write", "section"),
    "refusals": ("refusals.single", "refusals.order", "refusals.out-untouched"),
    "create": ("instance.create",),
    "describe": ("instance.describe",),
    "tool-call": ("instance.tool-call", "frames.format", "frames.seq", "frames.terminal",
                  "frames.size"),
    "release": ("instance.release",),
    "shutdown": ("instance.shutdown",),
    "destroy": ("instance.destroy", "buffers"),
    "unload": ("unload",),
}
CONFIG_BLOB = "{}"
FRAME_LIMIT = 256
INSPECT_LIMIT = 1 << 20
_PROGRESS_LIMIT = 256 << 20


def doctor_path(path: Path, *, timeout: float = DEFAULT_TIMEOUT,
                reporter: Reporter | None = None) -> DoctorReport:
    """Run every check on a bundle directory or archive; the report says pass/fail/skip."""
    if os.name != "posix" or sys.platform == "win32":
        raise Refused.one(codes.DOCTOR_UNSUPPORTED,
                          f"doctor loads libraries only on POSIX hosts; this is {sys.platform}")
    if not timeout > 0:
        raise Refused.one(codes.DOCTOR_ENVIRONMENT, f"--timeout {timeout}: must be above 0")
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
        with tempfile.TemporaryDirectory(prefix="horon-doctor-") as temp:
            _doctor_library(path, manifest, Path(temp), timeout=timeout, report=report,
                            reporter=reporter)
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
                    report: DoctorReport, reporter: Reporter) -> None:
    places = Places(home=root / "home", instance=root / "instance", config=root / "config")
    for directory in (places.home, places.instance, places.config, root / "lib"):
        directory.mkdir(mode=0o700)
    try:
        library = extract_library(path, manifest, root / "lib")
    except Refused as exc:
        report.failed_with("library", list(exc.findings), expected=manifest.library.sha256,
                           got="a different file")
        return
    report.passed("library", expected=manifest.library.sha256, got=manifest.library.sha256,
                  note=f"{manifest.library.path} copied out and re-hashed")
    sandbox = probe_sandbox()
    report.environment = {"timeout_s": timeout, **sandbox.to_json()}
    _environment_notes(report, sandbox)
    rows = refusal_rows(manifest.features)
    before = {"$HOME": snapshot(places.home), "$CONFIG_DIR": snapshot(places.config)}
    trace_log = root / "trace.log"
    progress_path = root / "progress.jsonl"
    fd = os.open(progress_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o600)
    argument = {"progress_fd": fd, "instance_dir": str(places.instance),
                "config_dir": str(places.config), "features": ",".join(manifest.features),
                "tool": f"{manifest.id}__whoami", "config": CONFIG_BLOB,
                "rows": [row.to_child() for row in rows], "frame_limit": FRAME_LIMIT,
                "inspect_limit": INSPECT_LIMIT}
    how = ", ".join(filter(None, ("under strace" if sandbox.strace else "",
                                  "without network" if sandbox.unshare else "")))
    reporter.step(f"loading {library.name} in a child process{' (' + how + ')' if how else ''}")
    started = time.monotonic()
    try:
        outcome = run_child("doctor", library, timeout=timeout, argument=argument,
                            wrapper=sandbox.wrapper(trace_log), home=places.home,
                            pass_fds=(fd,))
    finally:
        os.close(fd)
    report.environment["child_ms"] = round((time.monotonic() - started) * 1000)
    report.environment["child_end"] = outcome.describe_end()
    phases, died_in = phase_results(outcome, progress_path)
    _judge_phases(report, manifest, library, phases=phases, died_in=died_in,
                  outcome=outcome, rows=rows)
    if sandbox.strace is not None:
        _judge_trace_file(report, trace_log, places)
    else:
        judge_snapshots(report, places, before, sandbox.strace_note)


def _environment_notes(report: DoctorReport, sandbox: Sandbox) -> None:
    if sandbox.unshare is None:
        report.notes.append(f"no network namespace ({sandbox.unshare_note}): the child ran "
                            "with this machine's network")
    if sandbox.strace is None:
        report.notes.append(f"no tracer ({sandbox.strace_note}): side effects are judged from "
                            "$HOME and $CONFIG_DIR before/after only; connections are not "
                            "checked")


def phase_results(outcome: ChildOutcome, progress: Path,
                   ) -> tuple[dict[str, dict[str, Any]], str | None]:
    """Per-phase results: the child's answer, or what its progress file says it finished."""
    begun: list[str] = []
    finished: dict[str, dict[str, Any]] = {}
    with progress.open("rb") as stream:
        data = stream.read(_PROGRESS_LIMIT)
    for line in data.splitlines():
        try:
            entry = read_json(line, source="progress", max_bytes=_PROGRESS_LIMIT,
                              any_number=True)
        except Refused:
            continue  # the library may write into any descriptor: keep what parses
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("begin"), str):
            begun.append(entry["begin"])
        elif isinstance(entry.get("phase"), str) and isinstance(entry.get("result"), dict):
            finished[entry["phase"]] = entry["result"]
    answer = outcome.answer
    if answer is not None and "child_error" in answer:
        raise Refused.one(codes.ABI_CHILD_ERROR,
                          f"the doctor child failed: {str(answer['child_error'])[:300]}")
    if answer is not None and isinstance(answer.get("phases"), dict):
        finished = answer["phases"]
    died_in = next((name for name in reversed(begun) if name not in finished), None)
    return finished, died_in


def _judge_phases(report: DoctorReport, manifest: Manifest, library: Path, *,
                  phases: dict[str, dict[str, Any]], died_in: str | None,
                  outcome: ChildOutcome, rows: list[Row]) -> None:
    where = f"the {died_in} phase" if died_in else "the run"
    death = refusal_for(outcome, library, where)
    if death is None and outcome.returncode not in (0, None):
        death = Refused.one(codes.ABI_CRASH, f"{library.name}: the child answered, then "
                                             f"{outcome.describe_end()}")
    stopped: str | None = None
    described: list[str] | None = None
    for phase, names in PHASE_CHECKS.items():
        if stopped is not None:
            for name in names if phase != "unload" else ():
                report.skipped(name, stopped)
            continue
        if phase not in phases:
            if phase == died_in and death is not None:
                report.failed_with(names[0], list(death.findings), expected="an answer",
                                   got=outcome.describe_end())
                for name in names[1:]:
                    report.skipped(name, f"the child died during {phase}")
                stopped = f"not reached: the child died during {phase}"
            elif phase != "unload":
                for name in names:
                    report.skipped(name, "not run")
            continue
        result = phases[phase]
        if phase == "load":
            if "error" in result:
                report.failed("load", codes.ABI_LOAD, f"{library.name}: {result['error']}",
                              expected="loads and exports the symbol", got=result["error"])
                stopped = "the library did not load"
            else:
                report.passed("load", expected="loads and exports the symbol",
                              got="loaded", note=f"{result.get('ms', 0)} ms")
        elif phase == "handshake":
            judge_handshake(report, result, manifest)
            judge_section(report, library, result.get("table") or {}, manifest.target)
        elif phase == "refusals":
            judge_refusals(report, result, rows)
        elif phase == "create":
            judge_create(report, result, ",".join(manifest.features))
        elif phase == "describe":
            described = judge_describe(report, result, manifest)
        elif phase == "tool-call":
            judge_tool_call(report, result, f"{manifest.id}__whoami", described)
        elif phase == "destroy":
            judge_teardown(report, {"destroy": result})
            judge_buffers(report, phases)
        elif phase in ("release", "shutdown"):
            judge_teardown(report, {phase: result})
    if death is not None and died_in is None:
        report.failed_with("child", list(death.findings), expected="one JSON answer, exit 0",
                           got=outcome.describe_end())


def judge_section(report: DoctorReport, library: Path, table: dict[str, Any],
                  target: str) -> None:
    """The static .horon_abi section against what the handshake table said."""
    if not table:
        report.skipped("section", "no handshake table to compare with")
        return
    try:
        from horon_bundle.abi.section import read_section_file  # noqa: PLC0415 - optional
    except ImportError:
        report.skipped("section", "no section reader (horon_bundle.abi.section) installed")
        return
    try:
        section = read_section_file(library, target=target)
    except Refused as exc:
        report.failed_with("section", list(exc.findings), expected="a readable section",
                           got="refused")
        return
    if section is None:
        report.skipped("section", "the library has no .horon_abi section")
        return
    features = table.get("features")
    observed = {"abi_major": table.get("abi_major"), "abi_minor": table.get("abi_minor"),
                "wire_schema": table.get("wire_schema"), "plugin_id": table.get("plugin_id"),
                "features": list(parse_list(features)) if isinstance(features, str) else None}
    recorded = {"abi_major": section.abi_major, "abi_minor": section.abi_minor,
                "wire_schema": section.wire_schema, "plugin_id": section.plugin_id,
                "features": list(section.features)}
    findings = [Finding(codes.ABI_SECTION_MISMATCH,
                        f"{library.name}: .horon_abi says {key} {recorded[key]!r}, the "
                        f"handshake table {observed[key]!r}")
                for key in recorded if recorded[key] != observed[key]]
    report.judged("section", findings, expected=_summary(recorded), got=_summary(observed))


def _summary(metadata: dict[str, Any]) -> str:
    return (f"{metadata['plugin_id']} abi {metadata['abi_major']}.{metadata['abi_minor']} "
            f"{metadata['wire_schema']} [{','.join(metadata['features'] or [])}]")


def _judge_trace_file(report: DoctorReport, trace_log: Path, places: Places) -> None:
    if not trace_log.is_file():
        report.skipped("side-effects.write", "strace wrote no log")
        report.skipped("side-effects.network", "strace wrote no log")
        return
    markers: list[str] = []
    with trace_log.open(encoding="utf-8", errors="replace") as lines:
        found = offences(parse_calls(lines, markers), cwd=str(places.home))
    if "load" not in markers:
        why = "the trace shows no phase marker: the child never reached the library"
        report.skipped("side-effects.write", why)
        report.skipped("side-effects.network", why)
        return
    judge_trace(report, found, places)
