"""The one TOML reader: `tomllib` (Python 3.11+) or its `tomli` backport, bounded and typed.

Every TOML document the toolchain reads (the release declaration, an audit policy,
Cargo.lock) goes through `read_toml`: the size is capped before parsing, the bytes must be
UTF-8, nesting is capped before the parser sees the text (tomllib recurses per level and
raises RecursionError on deep nesting), and every failure is a refusal with the caller's code.
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
# Brackets and braces outside strings and comments; a strict upper bound on nesting.
_TOKENS = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\''
                     r'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*|[\[\]{}]', re.S)


def _depth(text: str) -> int:
    depth = deepest = 0
    for match in _TOKENS.finditer(text):
        token = match.group(0)
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth = max(depth - 1, 0)
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
    if _depth(text) > max_depth:
        raise Refused.one(code, f"{source}: tables and arrays nest deeper than {max_depth}")
    try:
        document: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise Refused.one(code, f"{source}: {exc}") from None
    except (RecursionError, ValueError) as exc:  # a limit of the parser: still a refusal
        raise Refused.one(code, f"{source}: {type(exc).__name__}: {str(exc)[:120]}") from None
    return document
