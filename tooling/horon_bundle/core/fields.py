"""Typed field access for hand-written decoders: pop the keys you know, the rest is unknown.

Every problem is added to a `Findings` collector with the dotted path of the field, so a
decoder reports all of them; a getter returns None for a field it could not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from horon_bundle.core.errors import Code, Finding, Findings

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any, TypeVar
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
    # the keys each object was asked for (where -> keys): what an unknown key is compared to
    known: dict[str, set[str]] = field(default_factory=dict)
    # where the document is (a CI annotation points there) and how to find a field's line
    file: str | None = None
    locate: Callable[[str], int | None] | None = None

    def report(self, code: Code, where: str, message: str, hint: str = "") -> None:
        line = self.locate(where) if self.locate is not None and where else None
        self.findings.add_finding(Finding(
            code, f"{self.source}: {where or '(document)'}: {message}", hint, (), self.file,
            line))

    def _asked(self, where: str, key: str) -> None:
        self.known.setdefault(_table(where), set()).add(key)

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
        self._asked(where, key)
        if key not in obj:
            self.report(self.missing, path, f"required {self.missing_word} is missing")
            return None
        return self.typed(obj.pop(key), kind, path)

    def take_text(self, obj: dict[str, Any], key: str, where: str) -> str | None:
        """A required string that names something (an id, a version, a target): an empty one
        is refused like a value of the wrong type, so no decoder builds an object around it."""
        text = self.take(obj, key, str, where)
        if text == "":
            self.report(self.wrong_type, join(where, key), "an empty string where a name is "
                                                           "required")
            return None
        return text

    def take_optional(self, obj: dict[str, Any], key: str, kind: type[T], where: str,
                      default: T) -> T | None:
        self._asked(where, key)
        if key not in obj:
            return default
        return self.typed(obj.pop(key), kind, join(where, key))

    def take_nullable(self, obj: dict[str, Any], key: str, kind: type[T],
                      where: str) -> tuple[bool, T | None]:
        """A field that must be present but may be null: (readable, value)."""
        path = join(where, key)
        self._asked(where, key)
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
        """Every key left in `obj` is unknown: refused, with the nearest known key suggested
        (a misspelt key is never silently dropped: `qa-feature` is not `qa-features`)."""
        for key in sorted(obj):
            self.report(self.unknown, join(where, key), f"unknown {self.missing_word}",
                        self.suggestion(str(key), where))

    def suggestion(self, key: str, where: str) -> str:
        """The hint for an unknown `key` of the object at `where`."""
        here = sorted(self.known.get(_table(where), ()))
        import difflib  # noqa: PLC0415 - only for an unknown key (start-up)

        close = difflib.get_close_matches(key, here, n=1, cutoff=0.6)
        if close:
            return f"Did you mean `{close[0]}`? An unknown {self.missing_word} is refused, " \
                   "never ignored."
        for table, keys in sorted(self.known.items()):
            if table != _table(where) and key in keys:
                place = join(table, key)
                return f"Did you mean `{place}`? `{key}` belongs in `{table}`."
        if here:
            return f"Known {self.missing_word}s here: {', '.join(here)}."
        return f"Remove the {self.missing_word}: this object defines none."


_INDEX = re.compile(r"\[\d+\]")


def _table(where: str) -> str:
    """`plugin[0].sidecar[1]` -> `plugin.sidecar`: every element of an array shares its keys."""
    return _INDEX.sub("", where)
