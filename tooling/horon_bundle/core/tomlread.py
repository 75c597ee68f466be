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


_AT_LINE = re.compile(r"\(at line (\d+), column \d+\)")
_HEADER = re.compile(r"\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")
_PATH_PART = re.compile(r"([^.\[\]]+)((?:\[\d+\])*)")


def _dotted(text: str) -> list[str]:
    return [part.strip().strip("\"'") for part in text.split(".")]


def key_line(text: str, where: str) -> int | None:
    """The 1-based line of the key a decoder names as `where` (`plugin[1].qa-feature`,
    `publish.destination`, `qa`), or of the nearest table holding it; None when not found.

    A locator for messages and CI annotations, not a parser: it follows `[table]` and
    `[[array]]` headers and `key =` lines, which is how these files are written.
    """
    wanted: list[str] = []
    for name, indexes in _PATH_PART.findall(where):
        wanted.append(name)
        wanted.extend(re.findall(r"\d+", indexes))
    if not wanted:
        return None
    counters: dict[tuple[str, ...], int] = {}
    table: list[str] = []
    best: tuple[int, int] | None = None  # (matched length, line)

    def consider(path: list[str], line: int) -> None:
        nonlocal best
        length = 0
        for have, want in zip(path, wanted, strict=False):
            if have != want:
                break
            length += 1
        if length == len(path) and length and (best is None or length > best[0]):
            best = (length, line)

    for number, raw in enumerate(text.splitlines(), start=1):
        header = _HEADER.fullmatch(raw)
        if header:
            names = _dotted(header.group(2))
            if header.group(1) == "[[":
                array = (*_parent(table, names), names[-1])
                index = counters.get(array, 0)
                counters[array] = index + 1
                table = [*_parent(table, names), names[-1], str(index)]
            else:
                table = [*_parent(table, names), names[-1]]
            consider(table, number)
            continue
        key = _KEY.match(raw)  # prefix match: `key =`, whatever the value
        if key:
            consider([*table, *_dotted(key.group(1))], number)
    return best[1] if best is not None else None


def _parent(table: list[str], names: list[str]) -> list[str]:
    """The table path a header `names` extends: array indexes of enclosing arrays kept."""
    parent: list[str] = []
    position = 0
    for name in names[:-1]:
        parent.append(name)
        while position < len(table) and table[position] != name:
            position += 1
        if position + 1 < len(table) and table[position + 1].isdigit():
            parent.append(table[position + 1])
        position += 1
    return parent


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
              max_depth: int = DEFAULT_MAX_DEPTH, file: str | None = None) -> dict[str, Any]:
    """Parse one TOML document; `source` names it in refusals, all with `code` (placed in
    `file`, at the parser's line, when given)."""
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
        where = _AT_LINE.search(str(exc))
        raise Refused.one(code, f"{source}: {exc}", file=file,
                          line=int(where.group(1)) if where else None) from None
    except (RecursionError, ValueError) as exc:  # a limit of the parser: still a refusal
        raise Refused.one(code, f"{source}: {type(exc).__name__}: {str(exc)[:120]}") from None
    if value_depth(document) > max_depth + 1:  # the document itself is the first level
        raise Refused.one(code, f"{source}: tables and arrays nest deeper than {max_depth}")
    return document
