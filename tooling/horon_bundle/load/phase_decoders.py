"""Decoding one phase result the child reported, strictly (models: `load.answers`)."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from horon_bundle.abi import types as t
from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.load.answers import (
    STATES,
    STRING_LIMIT,
    STRINGS,
    TABLE_FIELDS,
    UINT16,
    UINT32,
    UINT64,
    Buffer,
    Expect,
    Handshake,
    Load,
    Phase,
    Reader,
    Refusals,
    RowAnswer,
    Step,
    Summary,
    Table,
    Unload,
)


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
