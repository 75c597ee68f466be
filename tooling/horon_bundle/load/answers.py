"""Strict decoders for what the child writes: its answer and its progress lines.

The library runs inside the child, so it can write anything into the child's answer pipe
and progress file, or corrupt the observer that writes them. Everything the child sends is
therefore untrusted data: decoded field by field (`core.fields.FieldReader`), every field
present and of its type, integers in the range of their C type, no unknown field, the shape
the observer writes and nothing else, facts the toolchain can recompute recomputed (which
table fields lie beyond `struct_size`, buffer counts, the rows asked for). Any departure is
`abi.answer`, with every problem named; nothing malformed reaches a judge.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from horon_bundle.abi import types as t
from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value

PHASES = ("load", "handshake", "refusals", "create", "describe", "tool-call", "release",
          "shutdown", "destroy", "unload")
INSTANCE_PHASES = PHASES[3:9]
OUT_BYTES = 256  # the canary buffer the child hands the handshake
STATES = ("absent", "unwritten", "null", "present")
TABLE_FIELDS = tuple(name for name, _ in t.PluginApi._fields_ if name != "struct_size")
STRINGS = ("wire_schema", "features", "plugin_id")
STRING_LIMIT = 4096 + len("...(no NUL within 4096 bytes)")
INT32 = (-(1 << 31), (1 << 31) - 1)
UINT16 = (0, (1 << 16) - 1)
UINT32 = (0, (1 << 32) - 1)
UINT64 = (0, (1 << 64) - 1)


class Reader(FieldReader):
    """A FieldReader whose every problem is `abi.answer`, with ranged integers."""

    def __init__(self, source: str, findings: Findings) -> None:
        super().__init__(source=source, findings=findings, unknown=codes.ABI_ANSWER,
                         missing=codes.ABI_ANSWER, wrong_type=codes.ABI_ANSWER)

    def mapping(self, value: object, where: str) -> dict[str, Any] | None:
        found = self.typed(value, dict, where)
        return None if found is None else dict(found)

    def integer(self, obj: dict[str, Any], key: str, where: str,
                bounds: tuple[int, int] = INT32) -> int | None:
        value = self.take(obj, key, int, where)
        if value is not None and not bounds[0] <= value <= bounds[1]:
            self.report(codes.ABI_ANSWER, f"{where}.{key}",
                        f"{value} is outside {bounds[0]}..{bounds[1]}")
            return None
        return value

    def number(self, obj: dict[str, Any], key: str, where: str) -> float | None:
        if key not in obj:
            self.report(codes.ABI_ANSWER, f"{where}.{key}", "required field is missing")
            return None
        value = obj.pop(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            self.report(codes.ABI_ANSWER, f"{where}.{key}",
                        f"expected a duration in ms, got {describe_value(value)}")
            return None
        return float(value)

    def text(self, obj: dict[str, Any], key: str, where: str, limit: int = 1000) -> str | None:
        value = self.take(obj, key, str, where)
        if value is not None and len(value) > limit:
            self.report(codes.ABI_ANSWER, f"{where}.{key}", f"longer than {limit} characters")
            return None
        return value

    def span(self, value: object, where: str) -> Span | None:
        """`changed`: null, or [first, last] byte indexes of the 256-byte canary buffer."""
        if value is None:
            return None
        items = self.typed(value, list, where)
        if items is None:
            return None
        ok = (len(items) == 2 and all(isinstance(i, int) and not isinstance(i, bool)
                                      for i in items) and 0 <= items[0] <= items[1] < OUT_BYTES)
        if not ok:
            self.report(codes.ABI_ANSWER, where, "expected [first, last] byte indexes of a "
                                                 f"{OUT_BYTES}-byte buffer")
            return None
        return Span(items[0], items[1])


@dataclass(frozen=True, slots=True)
class Span:
    first: int
    last: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Table:
    """The table a correct handshake filled in, as far as its `struct_size` said."""

    struct_size: int
    struct_size_written: bool
    fields: dict[str, str]  # name -> absent | unwritten | null | present
    abi_major: int | None = None
    abi_minor: int | None = None
    wire_schema: str | None = None
    features: str | None = None
    plugin_id: str | None = None

    def string(self, name: str) -> str | None:
        value = getattr(self, name)
        return value if isinstance(value, str) else None


@dataclass(frozen=True, slots=True, kw_only=True)
class Handshake:
    status: int
    ms: float
    changed: Span | None
    table: Table | None


@dataclass(frozen=True, slots=True)
class RowAnswer:
    id: str
    status: int
    changed: Span | None


@dataclass(frozen=True, slots=True)
class Refusals:
    rows: tuple[RowAnswer, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Summary:
    """A buffer above the inspection limit: what a lenient parse of it found."""

    is_json: bool
    is_object: bool
    seq: object = None
    kind: object = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Buffer:
    length: int
    null: bool
    returned: bool
    data: bytes | None = None
    summary: Summary | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Load:
    error: str | None = None
    ms: float = 0.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Step:
    """create, describe, tool-call, release, shutdown, destroy: skipped, or what happened."""

    skipped: str | None = None
    status: int | None = None
    instance: bool = False
    buffer: Buffer | None = None
    frames: tuple[Buffer, ...] = ()
    end: int | None = None


@dataclass(frozen=True, slots=True)
class Unload:
    pass


Phase = Load | Handshake | Refusals | Step | Unload


@dataclass(frozen=True, slots=True, kw_only=True)
class Expect:
    """What the toolchain asked the child for: the rows, its limits."""

    rows: Sequence[tuple[str, bool]] = ()  # (id, has an out buffer)
    inspect_limit: int = 1 << 20
    frame_limit: int = 256


def _refuse(findings: Findings) -> None:
    if findings:
        raise Refused(list(findings)[:20])


def decode_phase(name: str, value: object, expect: Expect, *, source: str) -> Phase:
    """One phase result; `abi.answer` naming every problem."""
    findings = Findings()
    reader = Reader(source, findings)
    where = f"phases.{name}"
    obj = reader.mapping(value, where)
    result: Phase | None = None
    if obj is not None and name in _DECODERS:
        result = _DECODERS[name](reader, obj, where, expect)
        reader.finish(obj, where)
    elif obj is not None:
        reader.report(codes.ABI_ANSWER, where, "not a phase the observer runs")
    if result is None and not findings:
        reader.report(codes.ABI_ANSWER, where, "not a result the observer writes")
    _refuse(findings)
    assert result is not None
    return result


def _load(reader: Reader, obj: dict[str, Any], where: str, _: Expect) -> Phase | None:
    if "error" in obj:
        error = reader.text(obj, "error", where)
        return None if error is None else Load(error=error)
    ms = reader.number(obj, "ms", where)
    return None if ms is None else Load(ms=ms)


def _fields_beyond(struct_size: int, written: bool) -> set[str]:
    limit = min(struct_size, t.TABLE_SIZE)
    return {name for name in TABLE_FIELDS
            if not written or getattr(t.PluginApi, name).offset
            + getattr(t.PluginApi, name).size > limit}


def _table(reader: Reader, obj: dict[str, Any], where: str) -> Table | None:
    size = reader.integer(obj, "struct_size", where, UINT32)
    written = reader.take(obj, "struct_size_written", bool, where)
    fields_obj = reader.mapping(obj.pop("fields", None), f"{where}.fields")
    if size is None or written is None or fields_obj is None:
        return None
    fields: dict[str, str] = {}
    for name in TABLE_FIELDS:
        state = reader.take(fields_obj, name, str, f"{where}.fields")
        if state is not None and state not in STATES:
            reader.report(codes.ABI_ANSWER, f"{where}.fields.{name}", f"unknown state {state!r}")
        elif state is not None:
            fields[name] = state
    reader.finish(fields_obj, f"{where}.fields")
    if len(fields) != len(TABLE_FIELDS):
        return None
    beyond = _fields_beyond(size, written)
    values: dict[str, Any] = {}
    for name in TABLE_FIELDS:
        if (fields[name] == "absent") != (name in beyond):
            reader.report(codes.ABI_ANSWER, f"{where}.fields.{name}",
                          f"{fields[name]!r} contradicts struct_size {size}")
        present = fields[name] == "present"
        if name in ("abi_major", "abi_minor"):
            if present:
                values[name] = reader.integer(obj, name, where, UINT16)
            elif fields[name] != "absent":
                reader.report(codes.ABI_ANSWER, f"{where}.fields.{name}",
                              f"an integer field cannot be {fields[name]!r}")
        elif name in STRINGS and present:
            values[name] = reader.text(obj, name, where, STRING_LIMIT)
    return Table(struct_size=size, struct_size_written=written, fields=fields, **values)


def _handshake(reader: Reader, obj: dict[str, Any], where: str, _: Expect) -> Phase | None:
    status = reader.integer(obj, "status", where)
    ms = reader.number(obj, "ms", where)
    if "changed" not in obj:
        reader.report(codes.ABI_ANSWER, f"{where}.changed", "required field is missing")
    changed = reader.span(obj.pop("changed", None), f"{where}.changed")
    table = None
    if status == 0:
        table_obj = reader.mapping(obj.pop("table", None), f"{where}.table")
        if table_obj is not None:
            table = _table(reader, table_obj, f"{where}.table")
            reader.finish(table_obj, f"{where}.table")
        if table is not None and table.struct_size_written and (
                changed is None or changed.first != 0):
            reader.report(codes.ABI_ANSWER, f"{where}.changed",
                          "struct_size was written, yet byte 0 is reported unchanged")
    if status is None or ms is None or (status == 0 and table is None):
        return None
    return Handshake(status=status, ms=ms, changed=changed, table=table)


def _refusals(reader: Reader, obj: dict[str, Any], where: str, expect: Expect) -> Phase | None:
    rows = reader.take(obj, "rows", list, where)
    if rows is None:
        return None
    ids = [row_id for row_id, _ in expect.rows]
    if len(rows) != len(ids):
        reader.report(codes.ABI_ANSWER, f"{where}.rows",
                      f"{len(rows)} rows answered, {len(ids)} asked")
        return None
    answers: list[RowAnswer] = []
    for index, ((row_id, has_out), value) in enumerate(zip(expect.rows, rows, strict=True)):
        at = f"{where}.rows[{index}]"
        row = reader.mapping(value, at)
        if row is None:
            continue
        got_id = reader.take(row, "id", str, at)
        if got_id is not None and got_id != row_id:
            reader.report(codes.ABI_ANSWER, f"{at}.id", f"{got_id!r}, asked {row_id!r}")
        status = reader.integer(row, "status", at)
        changed = None
        if has_out:
            if "changed" not in row:
                reader.report(codes.ABI_ANSWER, f"{at}.changed", "required field is missing")
            changed = reader.span(row.pop("changed", None), f"{at}.changed")
        reader.finish(row, at)
        if status is not None:
            answers.append(RowAnswer(row_id, status, changed))
    return Refusals(tuple(answers)) if len(answers) == len(ids) else None


def _buffer(reader: Reader, value: object, where: str, expect: Expect) -> Buffer | None:
    obj = reader.mapping(value, where)
    if obj is None:
        return None
    length = reader.integer(obj, "len", where, UINT64)
    null = reader.take(obj, "null", bool, where)
    returned = reader.take(obj, "returned", bool, where)
    if length is None or null is None or returned is None:
        reader.finish({k: v for k, v in obj.items() if k not in ("data", "summary")}, where)
        return None
    readable = not null and length <= t.MAX_FRAME_BYTES
    inspected = readable and length <= expect.inspect_limit
    data = summary = None
    if inspected:
        text = reader.take(obj, "data", str, where)
        if text is not None:
            try:
                data = base64.b64decode(text, validate=True)
            except (binascii.Error, ValueError):
                reader.report(codes.ABI_ANSWER, f"{where}.data", "not base64")
            if data is not None and len(data) != length:
                reader.report(codes.ABI_ANSWER, f"{where}.data",
                              f"{len(data)} bytes, len says {length}")
                data = None
        if data is None:
            return None
    elif readable:
        summary = _summary(reader, obj.pop("summary", None), f"{where}.summary")
        if summary is None:
            return None
    reader.finish(obj, where)
    return Buffer(length=length, null=null, returned=returned, data=data, summary=summary)


def _summary(reader: Reader, value: object, where: str) -> Summary | None:
    obj = reader.mapping(value, where)
    if obj is None:
        return None
    is_json = reader.take(obj, "json", bool, where)
    is_object = reader.take_optional(obj, "object", bool, where, False)
    seq, kind = obj.pop("seq", None), obj.pop("kind", None)
    reader.finish(obj, where)
    if is_json is None or is_object is None:
        return None
    return Summary(is_json=is_json, is_object=is_object, seq=seq, kind=kind)


def _skipped(reader: Reader, obj: dict[str, Any], where: str) -> Step | None:
    why = reader.text(obj, "skipped", where)
    return None if why is None else Step(skipped=why)


def _status_step(reader: Reader, obj: dict[str, Any], where: str, _: Expect) -> Phase | None:
    if "skipped" in obj:
        return _skipped(reader, obj, where)
    status = reader.integer(obj, "status", where)
    return None if status is None else Step(status=status)


def _create(reader: Reader, obj: dict[str, Any], where: str, _: Expect) -> Phase | None:
    if "skipped" in obj:
        return _skipped(reader, obj, where)
    status = reader.integer(obj, "status", where)
    made = reader.take(obj, "instance", bool, where)
    return None if status is None or made is None else Step(status=status, instance=made)


def _describe(reader: Reader, obj: dict[str, Any], where: str, expect: Expect) -> Phase | None:
    if "skipped" in obj:
        return _skipped(reader, obj, where)
    status = reader.integer(obj, "status", where)
    if status != 0:
        return None if status is None else Step(status=status)
    buffer = _buffer(reader, obj.pop("buffer", None), f"{where}.buffer", expect)
    return None if buffer is None else Step(status=status, buffer=buffer)


def _tool_call(reader: Reader, obj: dict[str, Any], where: str, expect: Expect) -> Phase | None:
    if "skipped" in obj:
        return _skipped(reader, obj, where)
    start = reader.integer(obj, "start", where)
    frames = reader.take(obj, "frames", list, where)
    if start is None or frames is None:
        return None
    if start != 0:
        if frames:
            reader.report(codes.ABI_ANSWER, f"{where}.frames", "frames of a call never started")
        return Step(status=start)
    if len(frames) > expect.frame_limit:
        reader.report(codes.ABI_ANSWER, f"{where}.frames",
                      f"{len(frames)} frames, the limit asked was {expect.frame_limit}")
        return None
    decoded = [_buffer(reader, frame, f"{where}.frames[{i}]", expect)
               for i, frame in enumerate(frames)]
    if "end" not in obj:
        reader.report(codes.ABI_ANSWER, f"{where}.end", "required field is missing")
        return None
    end_value = obj.pop("end")
    end = None if end_value is None else reader.integer({"end": end_value}, "end", where)
    if (end_value is None) != (len(frames) == expect.frame_limit):
        reader.report(codes.ABI_ANSWER, f"{where}.end",
                      "null only when the frame limit was reached")
    if any(frame is None for frame in decoded):
        return None
    return Step(status=0, frames=tuple(f for f in decoded if f is not None), end=end)


def _destroy(reader: Reader, obj: dict[str, Any], where: str, expect: Expect) -> Phase | None:
    step = _status_step(reader, obj, where, expect)
    if isinstance(step, Step) and step.skipped is None and step.status != 0:
        reader.report(codes.ABI_ANSWER, f"{where}.status", "destroy returns nothing: 0")
        return None
    return step


def _unload(reader: Reader, obj: dict[str, Any], where: str, _: Expect) -> Phase | None:
    return Unload()


_DECODERS = {"load": _load, "handshake": _handshake, "refusals": _refusals, "create": _create,
             "describe": _describe, "tool-call": _tool_call, "release": _status_step,
             "shutdown": _status_step, "destroy": _destroy, "unload": _unload}
