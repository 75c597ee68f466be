"""Judging an instance's life: create, describe, one whoami call through start/next, teardown.

Buffers the child copied out (base64, up to its inspection limit) are read here with the
toolchain's strict JSON reader; frames must be objects `{"seq":N,"kind":…}` numbered from 0
without a gap, with exactly one terminal frame (`done` or `error`) as the last one, each
under 64 MiB, and every buffer handed out must have gone back through `free_buffer`.
"""

from __future__ import annotations

from typing import Any

from horon_bundle.abi import types as t
from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.strictjson import read_json
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.load.answers import Buffer, Phase, Step
from horon_bundle.load.transcript import buffers_of
from horon_bundle.model.manifest import Manifest

TERMINAL = ("done", "error")
KINDS = ("tool_envelope", *TERMINAL)
_INSPECT = 1 << 20


def _status_check(report: DoctorReport, name: str, entry: str, result: Step) -> bool:
    if result.skipped is not None:
        report.skipped(name, result.skipped)
        return False
    if result.status != 0:
        report.failed(name, codes.ABI_INSTANCE, f"{entry} answered {result.status} to a valid "
                                                "call", expected=0, got=result.status)
        return False
    report.passed(name, expected=0, got=0)
    return True


def judge_create(report: DoctorReport, result: Step, features: str) -> None:
    if result.skipped is not None:
        report.skipped("instance.create", result.skipped)
        return
    status, made = result.status, result.instance
    if status != 0 or not made:
        report.failed("instance.create", codes.ABI_INSTANCE,
                      f"create answered {status} (instance {'set' if made else 'NULL'}) for "
                      f"config {{}}, two fresh directories and features {features!r}",
                      expected="0 and an instance", got=status)
    else:
        report.passed("instance.create", expected="0 and an instance", got="0 and an instance",
                      note=f"features {features!r}")


def judge_describe(report: DoctorReport, result: Step, manifest: Manifest) -> list[str] | None:
    """The describe check; returns the tool names described (None when unknown)."""
    if result.skipped is not None:
        report.skipped("instance.describe", result.skipped)
        return None
    expected = {"id": manifest.id, "version": manifest.version,
                "features": list(manifest.features)}
    if result.status != 0 or result.buffer is None:
        report.failed("instance.describe", codes.ABI_DESCRIBE,
                      f"describe answered {result.status}", expected=expected, got=result.status)
        return None
    info = result.buffer
    length = info.length
    if length > t.MAX_FRAME_BYTES:
        report.failed("instance.describe", codes.ABI_FRAME_SIZE,
                      f"describe handed out {length} bytes, above the 64 MiB limit",
                      expected=expected, got=f"{length} bytes")
        return None
    data = info.data
    if data is None:
        why = (f"a NULL buffer of {length} bytes" if info.null
               else f"{length} bytes, above the doctor's {_INSPECT >> 20} MiB inspection limit")
        report.failed("instance.describe", codes.ABI_DESCRIBE, f"describe answered {why}",
                      expected=expected, got=why)
        return None
    try:
        document = read_json(data, source="describe", max_bytes=_INSPECT)
    except Refused as exc:
        report.failed("instance.describe", codes.ABI_DESCRIBE,
                      [f"describe is not strict JSON: {f.code.name}: {f.message}"
                       for f in exc.findings], expected=expected, got=None)
        return None
    if not isinstance(document, dict):
        report.failed("instance.describe", codes.ABI_DESCRIBE, "describe is not a JSON object",
                      expected=expected, got=type(document).__name__)
        return None
    got = {key: document.get(key) for key in expected}
    problems = [f"describe {key} is {got[key]!r}, plugin.json says {value!r}"
                for key, value in expected.items() if got[key] != value]
    tools = document.get("tools")
    names = [tool.get("name") for tool in tools if isinstance(tool, dict)] \
        if isinstance(tools, list) else None
    if names is None:
        problems.append("describe has no `tools` list")
    report.judged("instance.describe", [Finding(codes.ABI_DESCRIBE, p) for p in problems],
                  expected=expected, got=got)
    return [n for n in names if isinstance(n, str)] if names is not None else None


def judge_tool_call(report: DoctorReport, result: Step, tool: str,
                    described: list[str] | None) -> None:
    frame_checks = ("frames.format", "frames.seq", "frames.terminal", "frames.size")
    if result.skipped is not None:
        report.skipped("instance.tool-call", result.skipped)
        for name in frame_checks:
            report.skipped(name, "no tool call")
        return
    start = result.status
    if start != 0:
        if described is not None and tool not in described:
            why = f"describe does not list {tool}: no tool to call (start answered {start})"
            report.skipped("instance.tool-call", why)
        else:
            report.failed("instance.tool-call", codes.ABI_INSTANCE,
                          f"start answered {start} to {{\"kind\":\"tool_call\",\"name\":"
                          f"\"{tool}\",\"arguments\":{{}}}}", expected=0, got=start)
        for name in frame_checks:
            report.skipped(name, "no operation was started")
        return
    frames = result.frames
    end = result.end
    position = len(report.checks)  # the tool-call line goes before the frame lines
    parsed: list[dict[str, Any] | None] = []
    formats: list[Finding] = []
    sizes: list[Finding] = []
    for index, info in enumerate(frames):
        if info.length > t.MAX_FRAME_BYTES:
            sizes.append(Finding(codes.ABI_FRAME_SIZE, f"frame {index}: {info.length} bytes, "
                                                       "above the 64 MiB limit"))
            parsed.append(None)
            continue
        frame, problem = _frame(info)
        if problem is not None:
            formats.append(Finding(codes.ABI_FRAME_FORMAT, f"frame {index}: {problem}"))
        parsed.append(frame)
    report.judged("frames.format", formats, expected="JSON objects {seq, kind}",
                  got=f"{len(frames)} frame(s)")
    seqs = [f.get("seq") if f is not None else None for f in parsed]
    # A frame that was not read (above 64 MiB) or is not JSON has no known seq: that is its
    # frames.size / frames.format finding, not a second one here.
    seq_findings = [Finding(codes.ABI_FRAME_SEQ, f"frame {i} has seq {s}, expected {i}"
                            + (" (a gap)" if isinstance(s, int) and s > i else ""))
                    for i, (s, f) in enumerate(zip(seqs, parsed, strict=True))
                    if f is not None and s != i]
    report.judged("frames.seq", seq_findings[:1], expected=list(range(len(seqs))), got=seqs)
    kinds = [f.get("kind") if f is not None else None for f in parsed]
    report.judged("frames.terminal", _terminal_findings(kinds, end),
                  expected="exactly one terminal frame, last, then next = 1",
                  got={"kinds": kinds, "next_after": end})
    report.judged("frames.size", sizes, expected="every frame <= 64 MiB",
                  got=f"largest {max((f.length for f in frames), default=0)} bytes")
    terminal = [f for f in parsed if f is not None and f.get("kind") in TERMINAL]
    if terminal and terminal[0].get("kind") == "error":
        report.failed("instance.tool-call", codes.ABI_INSTANCE,
                      f"{tool} ended with an error frame: {terminal[0].get('body')!r}",
                      expected="done", got="error")
    else:
        report.passed("instance.tool-call", expected=f"{tool} ends with done",
                      got=f"{len(frames)} frame(s)")
    report.checks.insert(position, report.checks.pop())


def _frame(info: Buffer) -> tuple[dict[str, Any] | None, str | None]:
    if info.null:
        return None, f"a NULL buffer of {info.length} bytes"
    data = info.data
    if data is None:
        summary = info.summary
        if summary is None or not summary.is_object:
            return None, "not a JSON object"
        value: object = {"seq": summary.seq, "kind": summary.kind}
    else:
        try:
            value = read_json(data, source="frame", max_bytes=_INSPECT)
        except Refused as exc:
            return None, f"not strict JSON ({exc.findings[0].message})"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    seq, kind = value.get("seq"), value.get("kind")
    if not isinstance(seq, int) or isinstance(seq, bool):
        return value, f"seq is {seq!r}, not an integer"
    if kind not in KINDS:
        return value, f"kind {kind!r} is not one of {', '.join(KINDS)}"
    return value, None


def _terminal_findings(kinds: list[Any], end: object) -> list[Finding]:
    positions = [i for i, kind in enumerate(kinds) if kind in TERMINAL]
    findings: list[Finding] = []
    if not positions:
        how = ("the frame limit was reached" if end is None
               else f"next answered {end} after {len(kinds)} frame(s)")
        findings.append(Finding(codes.ABI_FRAME_TERMINAL, f"no terminal frame: {how}"))
    elif len(positions) > 1:
        findings.append(Finding(codes.ABI_FRAME_TERMINAL,
                                f"{len(positions)} terminal frames (frames "
                                f"{', '.join(map(str, positions))})"))
    elif positions[0] != len(kinds) - 1:
        findings.append(Finding(codes.ABI_FRAME_TERMINAL,
                                f"{len(kinds) - 1 - positions[0]} frame(s) after the terminal "
                                "frame"))
    if positions and end != 1:
        findings.append(Finding(codes.ABI_FRAME_TERMINAL,
                                f"after the terminal frame next answered {end}, expected 1 "
                                "(no more frames)"))
    return findings


def judge_buffers(report: DoctorReport, phases: dict[str, Phase]) -> None:
    infos = buffers_of(phases)
    if not infos:
        report.skipped("buffers", "no buffer was handed out")
        return
    findings = []
    for where, info in infos:
        if not info.returned:
            findings.append(Finding(codes.ABI_BUFFER_LEAK,
                                    f"{where}: {info.length} bytes handed out, cannot be "
                                    "returned: free_buffer is NULL or beyond struct_size"))
        elif info.null and info.length:
            findings.append(Finding(codes.ABI_BUFFER_LEAK,
                                    f"{where}: a NULL pointer with length {info.length}"))
    returned = sum(1 for _, info in infos if info.returned)
    report.judged("buffers", findings, expected=f"{len(infos)} returned through free_buffer",
                  got=f"{returned} returned")


def judge_teardown(report: DoctorReport, name: str, result: Step) -> None:
    _status_check(report, f"instance.{name}", name, result)
