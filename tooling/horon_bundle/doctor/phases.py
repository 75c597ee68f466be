"""Judging the child's run phase by phase, from its reconciled transcript (`load.transcript`).

A phase the child finished is judged by its judge; the phase it died in fails with the way
it died; later phases are skipped as not reached. Whatever is wrong with the child itself —
a garbage or contradictory answer, a death after answering, processes left behind — fails the
final `child` check, so a run can never pass with one of those.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from horon_bundle.abi.wire import parse_list
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.doctor.handshake import Row, judge_handshake, judge_refusals
from horon_bundle.doctor.instance import (
    judge_buffers,
    judge_create,
    judge_describe,
    judge_teardown,
    judge_tool_call,
)
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.load.answers import Handshake, Load, Refusals, Step, Table
from horon_bundle.load.runner import ChildOutcome, refusal_for
from horon_bundle.load.transcript import Transcript
from horon_bundle.model.manifest import Manifest

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


def child_problems(outcome: ChildOutcome, library: Path, transcript: Transcript
                   ) -> tuple[Refused | None, list[Finding]]:
    """How the child died (if it did), and what else is wrong with it (the `child` check)."""
    died_in = transcript.died_in
    death = refusal_for(outcome, library, f"the {died_in} phase" if died_in else "the run")
    problems = list(transcript.problems)
    if death is not None and died_in is None:
        problems += death.findings
        death = None
    if outcome.answer is not None and outcome.returncode not in (0, None) and \
            outcome.strays is None:
        problems.append(Finding(codes.ABI_CRASH, f"{library.name}: the child answered, then "
                                                 f"{outcome.describe_end()}"))
    return death, problems


def judge_phases(report: DoctorReport, manifest: Manifest, library: Path, *,
                 transcript: Transcript, outcome: ChildOutcome, rows: list[Row]) -> None:
    phases = transcript.phases
    died_in = transcript.died_in
    death, problems = child_problems(outcome, library, transcript)
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
        if isinstance(result, Load):
            if result.error is not None:
                report.failed("load", codes.ABI_LOAD, f"{library.name}: {result.error}",
                              expected="loads and exports the symbol", got=result.error)
                stopped = "the library did not load"
            else:
                report.passed("load", expected="loads and exports the symbol",
                              got="loaded", note=f"{result.ms:g} ms")
        elif isinstance(result, Handshake):
            judge_handshake(report, result, manifest)
            judge_section(report, library, result.table, manifest.target)
        elif isinstance(result, Refusals):
            judge_refusals(report, result, rows)
        elif isinstance(result, Step):
            described = _judge_step(report, manifest, phase, result, phases=phases,
                                   described=described)
    if problems:
        report.failed_with("child", problems, expected="one sound JSON answer, exit 0, "
                           "nothing left running", got=outcome.describe_end())


def _judge_step(report: DoctorReport, manifest: Manifest, phase: str, result: Step, *,
                phases: dict[str, Any], described: list[str] | None) -> list[str] | None:
    if phase == "create":
        judge_create(report, result, ",".join(manifest.features))
    elif phase == "describe":
        return judge_describe(report, result, manifest)
    elif phase == "tool-call":
        judge_tool_call(report, result, f"{manifest.id}__whoami", described)
    else:
        judge_teardown(report, phase, result)
        if phase == "destroy":
            judge_buffers(report, phases)
    return described


def judge_section(report: DoctorReport, library: Path, table: Table | None,
                  target: str) -> None:
    """The static .horon_abi section against what the handshake table said."""
    if table is None:
        report.skipped("section", "no handshake table to compare with")
        return
    from horon_bundle.abi.section import read_section_file  # noqa: PLC0415 - only here

    try:
        section = read_section_file(library, target=target)
    except Refused as exc:
        report.failed_with("section", list(exc.findings), expected="a readable section",
                           got="refused")
        return
    if section is None:
        report.skipped("section", "the library has no .horon_abi section")
        return
    features = table.features
    observed = {"abi_major": table.abi_major, "abi_minor": table.abi_minor,
                "wire_schema": table.wire_schema, "plugin_id": table.plugin_id,
                "features": list(parse_list(features)) if features is not None else None}
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
