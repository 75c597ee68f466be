"""Typed field access for hand-written decoders: pop the keys you know, the rest is unknown.

Every problem is added to a `Findings` collector with the dotted path of the field, so a
decoder reports all of them; a getter returns None for a field it could not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeVar

from horon_bundle.core.errors import Code, Findings

T = TypeVar("T")

_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "an array",
               dict: "an object"}


def describe_value(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return repr(value if len(value) <= 60 else value[:57] + "...")
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def join(where: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


@dataclass(slots=True)
class FieldReader:
    """Reads fields of decoded JSON/TOML, reporting into `findings` under `source`."""

    source: str
    findings: Findings
    unknown: Code
    missing: Code
    wrong_type: Code
    missing_word: str = "field"

    def report(self, code: Code, where: str, message: str) -> None:
        self.findings.add(code, f"{self.source}: {where or '(document)'}: {message}")

    def typed(self, value: object, kind: type[T], where: str) -> T | None:
        if value is None:
            self.report(self.missing, where, f"null where {_TYPE_NAMES[kind]} is required")
            return None
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            self.report(self.wrong_type, where,
                        f"expected {_TYPE_NAMES[kind]}, got {describe_value(value)}")
            return None
        return value  # type: ignore[return-value]

    def take(self, obj: dict[str, Any], key: str, kind: type[T], where: str) -> T | None:
        path = join(where, key)
        if key not in obj:
            self.report(self.missing, path, f"required {self.missing_word} is missing")
            return None
        return self.typed(obj.pop(key), kind, path)

    def take_optional(self, obj: dict[str, Any], key: str, kind: type[T], where: str,
                      default: T) -> T | None:
        if key not in obj:
            return default
        return self.typed(obj.pop(key), kind, join(where, key))

    def take_nullable(self, obj: dict[str, Any], key: str, kind: type[T],
                      where: str) -> tuple[bool, T | None]:
        """A field that must be present but may be null: (readable, value)."""
        path = join(where, key)
        if key not in obj:
            self.report(self.missing, path, f"required {self.missing_word} is missing")
            return False, None
        value = obj.pop(key)
        if value is None:
            return True, None
        typed = self.typed(value, kind, path)
        return typed is not None, typed

    def strings(self, value: list[Any] | None, where: str) -> list[str] | None:
        if value is None:
            return None
        result: list[str] = []
        for index, item in enumerate(value):
            text = self.typed(item, str, join(where, index))
            if text is None:
                return None
            result.append(text)
        return result

    def finish(self, obj: dict[str, Any], where: str) -> None:
        for key in sorted(obj):
            self.report(self.unknown, join(where, key), f"unknown {self.missing_word}")
