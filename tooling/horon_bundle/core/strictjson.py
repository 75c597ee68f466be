"""One strict JSON reader for every document the toolchain reads, and one canonical writer.

Measured on CPython: `json.loads` keeps the last of duplicate keys, accepts NaN and `"\\ud800"`,
turns `1e400` into inf, raises RecursionError on deep nesting and ValueError past 4300 digits.
So the bytes are checked (size, BOM, UTF-8) before parsing, hooks refuse duplicates,
non-finite numbers, floats and out-of-range integers during parsing, and the value is checked
afterwards for nesting (the C parser's own recursion guard bounds it meanwhile) and, when the
text has a surrogate escape at all, for lone surrogates. Each step runs at C speed or walks
the containers once: a provenance of 10,000 packages is read at about `json.loads`' speed.
"""

from __future__ import annotations

import json
import math
import re

from horon_bundle.core import codes
from horon_bundle.core.errors import Code, Refused

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any, NoReturn

MAX_SAFE_INTEGER = 2**53 - 1
DEFAULT_MAX_BYTES = 1 << 20
DEFAULT_MAX_DEPTH = 64
_MAX_INT_DIGITS = 19

_BOMS = (
    (b"\xef\xbb\xbf", "a UTF-8 byte order mark"),
    (b"\x00\x00\xfe\xff", "a UTF-32 byte order mark"),
    (b"\xff\xfe\x00\x00", "a UTF-32 byte order mark"),
    (b"\xfe\xff", "a UTF-16 byte order mark"),
    (b"\xff\xfe", "a UTF-16 byte order mark"),
)
_JSON_WHITESPACE = " \t\n\r"


class _Reject(Exception):
    def __init__(self, code: Code, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint


def _refuse(source: str, code: Code, message: str, hint: str = "") -> NoReturn:
    raise Refused.one(code, f"{source}: {message}", hint)


def _check_encoding(data: bytes, source: str) -> str:
    for bom, what in _BOMS:
        if data.startswith(bom):
            _refuse(source, codes.JSON_ENCODING, f"starts with {what}")
    if len(data) >= 2 and (data[0] == 0 or data[1] == 0):
        _refuse(source, codes.JSON_ENCODING, "looks like UTF-16/32 (NUL in the first bytes)")
    try:
        return data.decode("utf-8", errors="strict")
    except UnicodeDecodeError as exc:
        _refuse(source, codes.JSON_ENCODING, f"invalid UTF-8 at byte {exc.start}")


_STRUCTURE = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}]')


def _check_depth(text: str, source: str, max_depth: int) -> None:
    """Refuse text nesting deeper than `max_depth` (strings skipped by a regular expression):
    for a document the parser refused, so that a deep one is called deep, not broken."""
    depth = 0
    for match in _STRUCTURE.finditer(text):
        token = match.group(0)
        if token in ("[", "{"):
            depth += 1
            if depth > max_depth:
                _refuse(source, codes.JSON_TOO_DEEP, f"nesting deeper than {max_depth}")
        elif token in ("]", "}"):
            depth -= 1


def _too_deep(value: object, max_depth: int) -> bool:
    """Whether containers nest deeper than `max_depth`: one level at a time over the
    containers alone (a graph of 10,000 packages: tens of milliseconds)."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > max_depth:
            return True
        level = [item for container in level
                 for item in (container.values() if type(container) is dict else container)
                 if type(item) is dict or type(item) is list]
    return False


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Reject(codes.JSON_DUPLICATE_KEY, f"duplicate key {key!r}")
            seen.add(key)
    return result


def _constant(name: str) -> NoReturn:
    raise _Reject(codes.JSON_NONFINITE, f"non-finite number {name}")


def _float(text: str) -> NoReturn:
    raise _Reject(codes.JSON_FLOAT, f"number {text[:40]} is not an integer")


def _int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > _MAX_INT_DIGITS:
        raise _Reject(codes.JSON_INTEGER_RANGE, f"integer with {len(digits)} digits")
    value = int(text)
    if not 0 <= value <= MAX_SAFE_INTEGER:
        raise _Reject(codes.JSON_INTEGER_RANGE, f"integer {value} outside 0 … 2^53-1")
    return value


# a lone surrogate can only come from an escape (the text is valid UTF-8): without one, no walk
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89abcdefABCDEF]")


def _find_surrogate(value: object) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return None


_DECODER = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int,
    strict=True,
)
_TOOL_MAX_DIGITS = 4300  # Python's own limit for int(); no file the toolchain reads needs more


def _any_int(text: str) -> int:
    digits = text.lstrip("-")
    if len(digits) > _TOOL_MAX_DIGITS:  # else int() fails with a message about Python itself
        raise _Reject(codes.JSON_INTEGER_RANGE,
                      f"integer with {len(digits)} digits (at most {_TOOL_MAX_DIGITS})",
                      "Write the number with fewer digits; no host reads this one as written.")
    return int(text)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # float() turns 1e400 into inf: JSON has no infinities
        raise _Reject(codes.JSON_NONFINITE, f"number {text[:40]} is beyond a double's range",
                      "Write a number a double can hold (at most about 1.8e308).")
    return value


_TOOL_DECODER = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant,
                                 parse_float=_finite_float, parse_int=_any_int, strict=True)


def read_json(
    data: bytes,
    *,
    source: str,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_depth: int = DEFAULT_MAX_DEPTH,
    any_number: bool = False,
) -> object:
    """Parse one JSON document from `data`, refusing anything ambiguous; `source` names the file.

    `any_number` admits floats and integers of any sign and size (the output of a tool such as
    cargo, whose formats have them); everything else stays as strict.
    """
    if len(data) > max_bytes:
        _refuse(source, codes.JSON_TOO_LARGE, f"{len(data)} bytes, limit {max_bytes}")
    text = _check_encoding(data, source)
    start = len(text) - len(text.lstrip(_JSON_WHITESPACE))
    try:
        value, end = (_TOOL_DECODER if any_number else _DECODER).raw_decode(text, start)
    except _Reject as exc:
        _refuse(source, exc.code, exc.message, exc.hint)
    except json.JSONDecodeError as exc:
        _check_depth(text, source, max_depth)
        _refuse(source, codes.JSON_SYNTAX, f"{exc.msg} (line {exc.lineno}, column {exc.colno})")
    except (ValueError, RecursionError) as exc:  # digit limits, the C parser's own recursion
        _check_depth(text, source, max_depth)  # guard: deeper than allowed, or still refused
        _refuse(source, codes.JSON_SYNTAX, str(exc)[:120])
    if text[end:].strip(_JSON_WHITESPACE):
        _refuse(source, codes.JSON_TRAILING_DATA, f"data after the document at offset {end}")
    # nesting is judged on the parsed value: the C parser bounds its own recursion (a
    # RecursionError, above), and a document with fewer brackets than the limit needs no walk
    if text.count("[") + text.count("{") > max_depth and _too_deep(value, max_depth):
        _refuse(source, codes.JSON_TOO_DEEP, f"nesting deeper than {max_depth}")
    surrogate = _find_surrogate(value) if _SURROGATE_ESCAPE.search(text) else None
    if surrogate is not None:
        _refuse(source, codes.JSON_ENCODING, "a string holds a lone surrogate escape")
    return value


def canonical_value_bytes(value: object) -> bytes:
    """`canonical_bytes` of a value made of dicts with string keys, lists, strings, integers
    within 2^53, booleans and None (what `read_json` returns; no floats), at C speed: orjson
    writes the same layout, and its bytes are taken only when they hold nothing it writes
    differently (non-ASCII and DEL, which the canonical form escapes); otherwise, and for an
    integer past 2^53, `canonical_bytes`.
    A recorded graph of 10,000 packages: 20 ms here where `json.dumps(indent=2)` takes 0.5 s
    (its C encoder has no indentation). A small value (at most `_SMALL` items) goes to
    `canonical_bytes` directly: importing orjson would cost more than writing it."""
    if _items_within(value, _SMALL):
        return canonical_bytes(value)
    import orjson  # noqa: PLC0415 - only the digest of a large document needs it

    try:
        fast = orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                            | orjson.OPT_APPEND_NEWLINE | orjson.OPT_STRICT_INTEGER)
    except (TypeError, orjson.JSONEncodeError):
        return canonical_bytes(value)
    if fast.isascii() and b"\x7f" not in fast:
        return fast
    return canonical_bytes(value)


# a value of this few items (at any depth) is written by `json` in well under the few
# milliseconds an `import orjson` takes (start-up of a small verify)
_SMALL = 512


def _items_within(value: object, limit: int) -> bool:
    """Whether `value` holds at most `limit` items (keys, elements) at every depth together;
    the walk stops as soon as it has counted more."""
    pending, count = [value], 0
    while pending:
        item = pending.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else None
        if children is None:
            continue
        count += len(children)
        if count > limit:
            return False
        pending.extend(children)
    return True


def canonical_bytes(value: object) -> bytes:
    """The toolchain's one output form: sorted keys, two-space indent, ASCII, final newline."""
    text = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=True, allow_nan=False)
    return (text + "\n").encode("ascii")
