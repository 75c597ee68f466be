"""Judging the handshake: the table a correct request gets, and the refusal matrix.

The matrix is defined here, in one place, and executed by the child row by row (see
`load.child.doctor`). Single faults must get their own status code; requests with several faults
must get the code of the first failing check in the contract's fixed order; a refusal must
leave `*out` byte-for-byte untouched; a success writes exactly 104 bytes, never more.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.abi import types as t
from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Finding
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.load.answers import Expect, Handshake, Refusals, Table
from horon_bundle.model.manifest import Manifest

ABSENT_FEATURE = "horon-doctor-absent"
WIRE = t.WIRE_SCHEMA.decode()
ENTRY_NAMES = t.ENTRY_NAMES


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    kind: str  # "single", "multi" or "accept"
    what: str
    expected: int
    req: dict[str, Any] | None
    capacity: int = t.TABLE_SIZE
    out: bool = True

    def to_child(self) -> dict[str, Any]:
        return {"id": self.id, "req": self.req, "capacity": self.capacity, "out": self.out}


def expect_rows(rows: list[Row], *, inspect_limit: int, frame_limit: int) -> Expect:
    """What the child was asked, for decoding its answer."""
    return Expect(rows=[(row.id, row.out) for row in rows], inspect_limit=inspect_limit,
                  frame_limit=frame_limit)


def _req(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"struct_size": t.REQUEST_SIZE, "abi_major": t.ABI_MAJOR,
                            "host_api_minor": 0, "wire_schema": WIRE, "required": None}
    base.update(changes)
    return base


def refusal_rows(features: tuple[str, ...]) -> list[Row]:
    """The matrix: single faults, multi-fault requests (first code wins), accepted requests."""
    advertised = ",".join(features)
    return [
        Row("req-null", "single", "req NULL", 1, None),
        Row("out-null", "single", "out NULL", 1, _req(), out=False),
        Row("struct-size-8", "single", "struct_size 8", 2, _req(struct_size=8)),
        Row("struct-size-23", "single", "struct_size 23", 2, _req(struct_size=23)),
        Row("abi-major-2", "single", "abi_major 2", 3, _req(abi_major=2)),
        Row("abi-major-0", "single", "abi_major 0", 3, _req(abi_major=0)),
        Row("wire-v0", "single", 'wire_schema "horon.wire.v0"', 4,
            _req(wire_schema="horon.wire.v0")),
        Row("wire-null", "single", "wire_schema NULL", 4, _req(wire_schema=None)),
        Row("capacity-96", "single", "out_capacity 96", 5, _req(), capacity=96),
        Row("capacity-0", "single", "out_capacity 0", 5, _req(), capacity=0),
        Row("feature-absent", "single", f"requires {ABSENT_FEATURE!r}", 6,
            _req(required=ABSENT_FEATURE)),
        Row("feature-empty-token", "single", 'requires ","', 6, _req(required=",")),
        Row("multi-req-null-capacity-0", "multi", "req NULL + out_capacity 0", 1, None,
            capacity=0),
        Row("multi-out-null-major-2", "multi", "out NULL + abi_major 2", 1, _req(abi_major=2),
            out=False),
        Row("multi-short-major-wire-capacity-feature", "multi",
            'struct_size 8 + abi_major 2 + wire "x" + out_capacity 0 + missing feature', 2,
            _req(struct_size=8, abi_major=2, wire_schema="x", required=ABSENT_FEATURE),
            capacity=0),
        Row("multi-major-wire-null-capacity-0", "multi",
            "abi_major 2 + wire_schema NULL + out_capacity 0", 3,
            _req(abi_major=2, wire_schema=None), capacity=0),
        Row("multi-major-capacity-96", "multi", "abi_major 2 + out_capacity 96", 3,
            _req(abi_major=2), capacity=96),
        Row("multi-wire-capacity-feature", "multi",
            'wire "horon.wire.v0" + out_capacity 0 + missing feature', 4,
            _req(wire_schema="horon.wire.v0", required=ABSENT_FEATURE), capacity=0),
        Row("multi-capacity-feature", "multi", "out_capacity 0 + missing feature", 5,
            _req(required=ABSENT_FEATURE), capacity=0),
        Row("accept-advertised-features", "accept",
            f"requires the plugin.json features {advertised!r}", 0, _req(required=advertised)),
        Row("accept-newer-host", "accept",
            "a newer host: struct_size 32, host_api_minor 7, out_capacity 256", 0,
            _req(struct_size=32, host_api_minor=7, bytes=32), capacity=256),
    ]


def status_name(status: object) -> str:
    name = t.STATUS_NAMES.get(status) if isinstance(status, int) else None
    return f"{status} {name}" if name else f"{status}"


def judge_handshake(report: DoctorReport, result: Handshake, manifest: Manifest) -> None:
    status = result.status
    if status != 0 or result.table is None:
        report.failed("handshake.status", codes.ABI_STATUS,
                      f"a correct v1 request was answered {status_name(status)}",
                      expected="0 OK", got=status_name(status))
        for name in ("struct-size", "abi-version", "wire-schema", "plugin-id", "features",
                     "entries", "exact-write"):
            report.skipped(f"handshake.{name}", "the handshake refused a correct request")
        return
    report.passed("handshake.status", expected="0 OK", got="0 OK", note=f"{result.ms:g} ms")
    table = result.table
    fields = table.fields
    size = table.struct_size
    absent = [name for name in ENTRY_NAMES if fields[name] == "absent"]
    if not table.struct_size_written:
        report.failed("handshake.struct-size", codes.ABI_STRUCT_SIZE,
                      "status OK but struct_size was not written", expected=">= 104",
                      got="not written")
    elif size < t.TABLE_SIZE:
        beyond = f"; beyond it: {', '.join(absent)}" if absent else ""
        report.failed("handshake.struct-size", codes.ABI_STRUCT_SIZE,
                      f"the table's struct_size is {size}, ABI v1 needs 104{beyond}",
                      expected=">= 104", got=size)
    else:
        report.passed("handshake.struct-size", expected=">= 104", got=size)

    _version(report, table, manifest)
    _string(report, "handshake.wire-schema", codes.ABI_WIRE_SCHEMA, field="wire_schema",
            table=table, expected=manifest.wire_schema)
    _string(report, "handshake.plugin-id", codes.ABI_PLUGIN_ID, field="plugin_id",
            table=table, expected=manifest.id)
    _string(report, "handshake.features", codes.ABI_FEATURES, field="features", table=table,
            expected=",".join(manifest.features))

    broken = {name: fields[name] for name in ENTRY_NAMES if fields[name] in ("null", "unwritten")}
    if broken:
        report.failed("handshake.entries", codes.ABI_NULL_ENTRY,
                      [f"entry {name} is {'NULL' if how == 'null' else 'not written'}"
                       for name, how in broken.items()],
                      expected="nine non-NULL entries", got=f"{9 - len(broken)} non-NULL")
    elif absent:
        report.skipped("handshake.entries", f"beyond struct_size {size}, not read: "
                                            f"{', '.join(absent)}")
    else:
        report.passed("handshake.entries", expected="nine non-NULL entries",
                      got="nine non-NULL")

    changed = result.changed
    if changed is not None and changed.last >= t.TABLE_SIZE:
        report.failed("handshake.exact-write", codes.ABI_OUT_OVERRUN,
                      f"the handshake wrote up to byte {changed.last} with out_capacity 104",
                      expected="bytes 0..103", got=f"bytes {changed.first}..{changed.last}")
    else:
        report.passed("handshake.exact-write", expected="bytes 0..103",
                      got="nothing beyond byte 103")


def _version(report: DoctorReport, table: Table, manifest: Manifest) -> None:
    major, minor = table.abi_major, table.abi_minor
    expected = f"{manifest.abi_major}.{manifest.abi_minor}"
    got = f"{major}.{minor}"
    findings = []
    if table.fields["abi_major"] != "present" or major != t.ABI_MAJOR:
        findings.append(Finding(codes.ABI_MAJOR_MISMATCH,
                                f"the table says ABI major {major}, this host speaks "
                                f"{t.ABI_MAJOR} (plugin.json: {manifest.abi_major})"))
    if table.fields["abi_minor"] != "present" or minor != manifest.abi_minor:
        findings.append(Finding(codes.ABI_MINOR,
                                f"the table says ABI minor {minor}, plugin.json says "
                                f"{manifest.abi_minor}"))
    report.judged("handshake.abi-version", findings, expected=expected, got=got)


def _string(report: DoctorReport, name: str, code: Code, *, field: str, table: Table,
            expected: str) -> None:
    state = table.fields[field]
    if state != "present":
        what = {"null": "NULL", "unwritten": "not written", "absent": "beyond struct_size"}
        report.failed(name, code, f"the table's {field} is {what.get(state, state)}",
                      expected=expected, got=None)
        return
    got = table.string(field)
    if got != expected:
        report.failed(name, code, f"the table's {field} is {got!r}, plugin.json says "
                                  f"{expected!r}", expected=expected, got=got)
    else:
        report.passed(name, expected=expected, got=got)


def judge_refusals(report: DoctorReport, result: Refusals, rows: list[Row]) -> None:
    answers = {answer.id: answer for answer in result.rows}
    singles: list[Finding] = []
    order: list[Finding] = []
    touched: list[Finding] = []
    overrun: list[Finding] = []
    for row in rows:
        answer = answers.get(row.id)
        if answer is None:
            singles.append(Finding(codes.ABI_REFUSAL_CODE, f"row {row.id}: no answer"))
            continue
        status = answer.status
        if status != row.expected:
            code = codes.ABI_REFUSAL_ORDER if row.kind == "multi" else codes.ABI_REFUSAL_CODE
            target = order if row.kind == "multi" else singles
            target.append(Finding(code, f"{row.what}: expected {status_name(row.expected)}, got "
                                        f"{status_name(status)}"))
        changed = answer.changed
        if row.expected != 0 and row.out and changed is not None:
            touched.append(Finding(codes.ABI_OUT_TOUCHED,
                                   f"{row.what}: refused with {status_name(status)} but bytes "
                                   f"{changed.first}..{changed.last} of *out changed"))
        if row.expected == 0 and changed is not None and changed.last >= t.TABLE_SIZE:
            overrun.append(Finding(codes.ABI_OUT_OVERRUN,
                                   f"{row.what}: wrote up to byte {changed.last}; a v1 table "
                                   "is 104 bytes"))
    single_rows = [r for r in rows if r.kind != "multi"]
    multi_rows = [r for r in rows if r.kind == "multi"]
    report.judged("refusals.single", singles, expected=f"{len(single_rows)} rows answered as "
                  "specified", got=f"{len(single_rows) - len(singles)} as specified")
    report.judged("refusals.order", order, expected=f"{len(multi_rows)} multi-fault rows "
                  "answered with the first code", got=f"{len(multi_rows) - len(order)} as "
                  "specified")
    refusing = [r for r in rows if r.expected != 0 and r.out]
    report.judged("refusals.out-untouched", touched + overrun,
                  expected="*out unchanged on refusal; at most 104 bytes on success",
                  got=f"{len(refusing) - len(touched)} of {len(refusing)} refusals left *out "
                      "unchanged")
