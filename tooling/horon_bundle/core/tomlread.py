"""The one TOML reader: `tomllib` (Python 3.11+) or its `tomli` backport, bounded and typed.

Every TOML document the toolchain reads (the release declaration, an audit policy,
Cargo.lock) goes through `read_toml`: the size is capped before parsing, the bytes must be
UTF-8, and nesting is capped twice. Before the parser sees the text, brackets and braces
outside strings and comments are counted (tomllib recurses per array and inline-table level
and raises RecursionError on deep nesting) and so are dots outside strings and comments
(tomllib builds a dotted key `a.b.c…` in time quadratic in its length: 50,000 parts take 47 s
here); after parsing, the nesting of the resulting tables is measured iteratively, which also
catches depth made of dotted keys and table headers (`[a.b.c]`) that no bracket shows. Every
failure is a refusal with the caller's code.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from horon_bundle.core.errors import Code, Refused

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

DEFAULT_MAX_BYTES = 1 << 20
DEFAULT_MAX_DEPTH = 32
MAX_DOTS = 1024
# Strings and comments (skipped), brackets and braces (nesting the parser recurses into) and
# dots (dotted keys and headers, and the odd float) outside them.
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\''
                     r'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}.]', re.S)


def _scan(text: str) -> tuple[int, int]:
    """(deepest bracket nesting, dots) outside strings and comments."""
    depth = deepest = dots = 0
    for match in _TOKENS.finditer(text):
        token = match.group(0)
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
        elif token == ".":  # noqa: S105 - a TOML token, not a credential
            dots += 1
    return deepest, dots


def value_depth(value: object) -> int:
    """How deeply tables and arrays nest in a parsed document (iteratively: no recursion)."""
    deepest = 0
    stack: list[tuple[object, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list):
            children = list(item)
        else:
            continue
        deepest = max(deepest, depth + 1)
        stack.extend((child, depth + 1) for child in children)
    return deepest


def read_toml(data: bytes, *, source: str, code: Code, max_bytes: int = DEFAULT_MAX_BYTES,
              max_depth: int = DEFAULT_MAX_DEPTH) -> dict[str, Any]:
    """Parse one TOML document; `source` names it in refusals, all with `code`."""
    if len(data) > max_bytes:
        raise Refused.one(code, f"{source}: {len(data)} bytes, limit {max_bytes}")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused.one(code, f"{source}: invalid UTF-8 at byte {exc.start}") from None
    brackets, dots = _scan(text)
    if brackets > max_depth:
        raise Refused.one(code, f"{source}: tables and arrays nest deeper than {max_depth}")
    if dots > MAX_DOTS:
        raise Refused.one(code, f"{source}: {dots} dots outside strings (dotted keys), limit "
                                f"{MAX_DOTS}")
    try:
        document: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Refused.one(code, f"{source}: {exc}") from None
    except (RecursionError, ValueError) as exc:  # a limit of the parser: still a refusal
        raise Refused.one(code, f"{source}: {type(exc).__name__}: {str(exc)[:120]}") from None
    if value_depth(document) > max_depth + 1:  # the document itself is the first level
        raise Refused.one(code, f"{source}: tables and arrays nest deeper than {max_depth}")
    return document
