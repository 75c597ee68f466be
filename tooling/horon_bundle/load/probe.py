"""The build's probe: load the library in a contained child, perform a correct handshake, read
the table.

The same launcher as doctor (`load.runner`): namespaces where the machine allows, its own
session, an empty HOME, a timeout and a fixed address-space limit (`PROBE_MEMORY_LIMIT_MIB`),
for libraries built here and for `--prebuilt` ones alike. The answer is decoded strictly: a
malformed one is `abi.answer`, never a crash of the build.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.abi import types as t
from horon_bundle.abi.wire import parse_list
from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.load.answers import STRING_LIMIT, UINT16, UINT32, Reader
from horon_bundle.load.containment import DEFAULT_MEMORY_LIMIT_MIB, mib
from horon_bundle.load.runner import DEFAULT_TIMEOUT, refusal_for, run_child
from horon_bundle.model.evidence import Advertised

PROBE_MEMORY_LIMIT_MIB = DEFAULT_MEMORY_LIMIT_MIB


@dataclass(frozen=True, slots=True, kw_only=True)
class ProbedTable:
    struct_size: int
    abi_major: int
    abi_minor: int
    wire_schema: str | None
    features: str | None
    plugin_id: str | None
    null_entries: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class HandshakeAnswer:
    status: int | None = None
    error: str | None = None
    table: ProbedTable | None = None


def decode_handshake_answer(answer: dict[str, Any], library: str) -> HandshakeAnswer:
    """`{"step": "handshake", "status": N[, "table": …]}` or `{"step": …, "error": …}`."""
    findings = Findings()
    reader = Reader(f"{library}: the child's answer", findings)
    obj = dict(answer)
    step = reader.take(obj, "step", str, "")
    result = HandshakeAnswer()
    if step in ("load", "symbol"):
        result = HandshakeAnswer(error=reader.text(obj, "error", ""))
    elif step == "handshake":
        status = reader.integer(obj, "status", "")
        table = None
        if status == 0:
            table_obj = reader.mapping(obj.pop("table", None), "table")
            if table_obj is not None:
                table = _table(reader, table_obj)
        result = HandshakeAnswer(status=status, table=table)
    elif step is not None:
        reader.report(codes.ABI_ANSWER, "step", f"unknown step {step!r}")
    reader.finish(obj, "")
    findings.raise_if_any()
    return result


def _table(reader: Reader, obj: dict[str, Any]) -> ProbedTable | None:
    size = reader.integer(obj, "struct_size", "table", UINT32)
    major = reader.integer(obj, "abi_major", "table", UINT16)
    minor = reader.integer(obj, "abi_minor", "table", UINT16)
    strings: dict[str, str | None] = {}
    for key in ("wire_schema", "features", "plugin_id"):
        readable, value = reader.take_nullable(obj, key, str, "table")
        if value is not None and len(value) > STRING_LIMIT:
            reader.report(codes.ABI_ANSWER, f"table.{key}", "too long")
        strings[key] = value if readable else None
    names = reader.strings(reader.take(obj, "null_entries", list, "table"), "table.null_entries")
    if names is not None and (len(set(names)) != len(names)
                              or not set(names) <= set(t.ENTRY_NAMES)):
        reader.report(codes.ABI_ANSWER, "table.null_entries", "not a set of entry names")
    reader.finish(obj, "table")
    if size is None or major is None or minor is None or names is None:
        return None
    return ProbedTable(struct_size=size, abi_major=major, abi_minor=minor,
                       null_entries=tuple(names), **strings)


def probe_advertised(library: Path, *, timeout: float = DEFAULT_TIMEOUT) -> Advertised:
    """Load the library in a child, perform a correct handshake, return what it advertises."""
    outcome = run_child("handshake", library, timeout=timeout,
                        memory_limit=mib(PROBE_MEMORY_LIMIT_MIB))
    refusal = refusal_for(outcome, library, "the handshake")
    if refusal is not None:
        raise refusal
    assert outcome.answer is not None
    if outcome.returncode not in (0, None):
        raise Refused.one(codes.ABI_CRASH, f"{library.name}: the child answered, then "
                                           f"{outcome.describe_end()}")
    return advertised_from(outcome.answer, library.name)


def advertised_from(document: dict[str, Any], library: str) -> Advertised:
    """What a decoded handshake answer says the library advertises; refusals otherwise."""
    answer = decode_handshake_answer(document, library)
    if answer.error is not None:
        raise Refused.one(codes.ABI_LOAD, f"{library}: {answer.error}")
    if answer.status != 0:
        raise Refused.one(codes.ABI_STATUS, f"{library}: a correct request was answered "
                                            f"with status {answer.status}")
    table = answer.table
    assert table is not None
    problems = []
    if table.struct_size < t.TABLE_SIZE:
        problems.append(f"struct_size {table.struct_size} < 104")
    for key in ("wire_schema", "features", "plugin_id"):
        if getattr(table, key) is None:
            problems.append(f"{key} is NULL")
    if problems:
        raise Refused.one(codes.ABI_METADATA, f"{library}: " + "; ".join(problems))
    assert table.wire_schema is not None and table.features is not None
    assert table.plugin_id is not None
    return Advertised(abi_major=table.abi_major, abi_minor=table.abi_minor,
                      wire_schema=table.wire_schema, features=parse_list(table.features),
                      plugin_id=table.plugin_id, observed_by=("probe",))
