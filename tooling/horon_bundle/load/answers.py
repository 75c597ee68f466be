"""What the child writes, as typed data: its phase results, and the reader that decodes them.

The library runs inside the child, so it can write anything into the child's answer pipe
and progress file, or corrupt the observer that writes them. Everything the child sends is
therefore untrusted data: decoded field by field (`core.fields.FieldReader`), every field
present and of its type, integers in the range of their C type, no unknown field, the shape
the observer writes and nothing else, facts the toolchain can recompute recomputed (which
table fields lie beyond `struct_size`, buffer counts, the rows asked for). Any departure is
`abi.answer`, with every problem named; nothing malformed reaches a judge. The decoders are
`load.phase_decoders`; the whole transcript (answer and progress) is `load.transcript`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from horon_bundle.abi import types as t
from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
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
