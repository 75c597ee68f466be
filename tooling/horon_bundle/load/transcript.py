"""The doctor child's transcript: its final answer and its progress lines, decoded and
reconciled.

The child writes each phase twice: a `{"begin": NAME}` / `{"phase": NAME, "result": …}` pair
on its progress descriptor as it goes, and all of them in its final answer. Both are decoded
strictly (`load.answers`); the progress lines must run in the observer's order, the answer
must hold the whole run (every phase, or `load` and `unload` when loading failed) with
buffer counts that add up, and the two must say the same. What survives is what the judges
see; every contradiction is an `abi.answer` finding. A library that rewrites both channels
consistently can still lie: see docs/doctor.md, "What doctor can and cannot certify".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.strictjson import read_json
from horon_bundle.load.answers import (
    INSTANCE_PHASES,
    PHASES,
    Buffer,
    Expect,
    Load,
    Phase,
    Reader,
    Step,
)
from horon_bundle.load.phase_decoders import decode_phase

MAX_PROGRESS_BYTES = 256 << 20


@dataclass(slots=True)
class Transcript:
    phases: dict[str, Phase] = field(default_factory=dict)
    begun: list[str] = field(default_factory=list)
    problems: list[Finding] = field(default_factory=list)

    @property
    def died_in(self) -> str | None:
        return next((name for name in reversed(self.begun) if name not in self.phases), None)


def read_progress(data: bytes, expect: Expect) -> Transcript:
    """The progress lines, strictly; reading stops at the first line out of place."""
    got = Transcript()
    position = 0
    for number, line in enumerate(data.splitlines(), start=1):
        where = f"progress line {number}"
        try:
            entry = read_json(line, source=where, max_bytes=MAX_PROGRESS_BYTES, any_number=True)
            name, result = _entry(entry, where)
            if result is None:
                position = _advance(name, position, got, where)
                got.begun.append(name)
            else:
                if not got.begun or got.begun[-1] != name or name in got.phases:
                    raise Refused.one(codes.ABI_ANSWER, f"{where}: a result for {name!r}, "
                                                        "which has not begun")
                got.phases[name] = decode_phase(name, result, expect, source=where)
        except Refused as exc:
            got.problems += [Finding(codes.ABI_ANSWER, f.message) for f in exc.findings]
            break
    return got


def _entry(entry: object, where: str) -> tuple[str, object | None]:
    if isinstance(entry, dict) and set(entry) == {"begin"} and isinstance(entry["begin"], str):
        return entry["begin"], None
    if (isinstance(entry, dict) and set(entry) == {"phase", "result"}
            and isinstance(entry["phase"], str) and entry["result"] is not None):
        return entry["phase"], entry["result"]
    raise Refused.one(codes.ABI_ANSWER, f"{where}: neither {{\"begin\": PHASE}} nor "
                                        "{\"phase\": PHASE, \"result\": {…}}")


def _advance(name: str, position: int, got: Transcript, where: str) -> int:
    if name not in PHASES[position:]:
        raise Refused.one(codes.ABI_ANSWER, f"{where}: phase {name!r} begins out of order")
    if got.begun and got.begun[-1] not in got.phases:
        raise Refused.one(codes.ABI_ANSWER, f"{where}: {name!r} begins before "
                                            f"{got.begun[-1]!r} ended")
    index = PHASES.index(name)
    load = got.phases.get("load")
    failed_load = isinstance(load, Load) and load.error is not None
    if index > position and not (failed_load and name == "unload"):
        raise Refused.one(codes.ABI_ANSWER, f"{where}: phase {name!r} begins, but "
                                            f"{PHASES[position]!r} never ran")
    return index + 1


def read_answer(answer: object, expect: Expect) -> dict[str, Phase]:
    """The final answer: every phase of the run, consistent with itself."""
    findings = Findings()
    reader = Reader("the child's answer", findings)
    obj = reader.mapping(answer, "")
    findings.raise_if_any()
    assert obj is not None
    phases_obj = reader.mapping(obj.pop("phases", None), "phases")
    buffers = reader.mapping(obj.pop("buffers", None), "buffers")
    reader.finish(obj, "")
    phases: dict[str, Phase] = {}
    if phases_obj is not None:
        for name in sorted(phases_obj, key=lambda n: (n not in PHASES, PHASES.index(n)
                                                      if n in PHASES else 0, n)):
            try:
                phases[name] = decode_phase(name, phases_obj[name], expect,
                                            source="the child's answer")
            except Refused as exc:
                findings.extend(exc.findings)
    findings.raise_if_any()
    _check_shape(phases, reader)
    if buffers is not None:
        _check_buffers(phases, buffers, reader)
    findings.raise_if_any()
    return phases


def _check_shape(phases: dict[str, Phase], reader: Reader) -> None:
    load = phases.get("load")
    if not isinstance(load, Load):
        reader.report(codes.ABI_ANSWER, "phases.load", "missing")
        return
    wanted = ("load", "unload") if load.error is not None else PHASES
    if tuple(name for name in PHASES if name in phases) != wanted or len(phases) != len(wanted):
        reader.report(codes.ABI_ANSWER, "phases",
                      f"holds {', '.join(phases) or 'nothing'}; a run that "
                      f"{'could not load' if load.error else 'loaded'} holds {', '.join(wanted)}")
        return
    if load.error is not None:
        return
    made = phases["create"]
    assert isinstance(made, Step)
    if made.skipped is not None or made.status != 0 or not made.instance:
        for name in INSTANCE_PHASES[1:]:
            step = phases[name]
            if not isinstance(step, Step) or step.skipped is None:
                reader.report(codes.ABI_ANSWER, f"phases.{name}",
                              "ran although create made no instance")


def buffers_of(phases: dict[str, Phase]) -> list[tuple[str, Buffer]]:
    """Every buffer describe and next handed out, named for a report."""
    found: list[tuple[str, Buffer]] = []
    describe = phases.get("describe")
    if isinstance(describe, Step) and describe.buffer is not None:
        found.append(("describe", describe.buffer))
    call = phases.get("tool-call")
    if isinstance(call, Step):
        found += [(f"frame {index}", frame) for index, frame in enumerate(call.frames)]
    return found


def _check_buffers(phases: dict[str, Phase], obj: dict[str, Any], reader: Reader) -> None:
    handed = reader.integer(obj, "handed_out", "buffers", (0, 1 << 20))
    returned = reader.integer(obj, "returned", "buffers", (0, 1 << 20))
    unreturnable = reader.integer(obj, "unreturnable", "buffers", (0, 1 << 20))
    reader.finish(obj, "buffers")
    infos = [info for _, info in buffers_of(phases)]
    counted = (len(infos), sum(info.returned for info in infos),
               sum(not info.returned for info in infos))
    if None not in (handed, returned, unreturnable) and (handed, returned,
                                                         unreturnable) != counted:
        reader.report(codes.ABI_ANSWER, "buffers",
                      f"says {handed} handed out, {returned} returned, {unreturnable} "
                      f"unreturnable; the phases show {counted[0]}, {counted[1]}, {counted[2]}")


def reconcile(answer: object, progress: Transcript,
              expect: Expect) -> Transcript:
    """One transcript from both channels: the answer where it is sound and agrees."""
    if answer is None:
        return progress
    try:
        phases = read_answer(answer, expect)
    except Refused as exc:
        return Transcript(progress.phases, progress.begun, [*progress.problems, *exc.findings])
    problems = list(progress.problems)
    if not progress.problems:
        for name in PHASES:
            if (name in phases) != (name in progress.phases) or (
                    name in phases and phases[name] != progress.phases[name]):
                problems.append(Finding(codes.ABI_ANSWER, f"the answer and the progress record "
                                                          f"disagree about phase {name!r}"))
                break
    if problems:
        return Transcript(progress.phases, progress.begun, problems)
    return Transcript(phases, progress.begun, [])
