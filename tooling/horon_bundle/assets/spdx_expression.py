"""Cargo `license` fields as SPDX licence expressions, or as nothing when they cannot be one.

Cargo accepted `MIT/Apache-2.0` (a `/` between alternatives) before it required SPDX; crates
still carry it. Conversion: `/` is `OR`, operators in any case are upper-cased, every
identifier must be on the SPDX License List (`spdx_ids.txt`, compared case-insensitively and
written in the list's case), an exception only after `WITH`, parentheses balanced. A `/` mixed
with `AND` or `WITH` is ambiguous (which binds tighter was never said) and is not converted.
Anything not converted is `None`: the SBOM then names the licence with the original text
instead of writing an expression an SPDX parser refuses (docs/graph-and-qa.md).
"""

from __future__ import annotations

import functools
import re
from importlib import resources

_TOKEN = re.compile(r"\(|\)|/|[^\s()/]+")
_OPERATORS = ("AND", "OR", "WITH")
MAX_LICENSE_TEXT = 1_000  # longer `license` fields are named, never parsed


@functools.cache
def _identifiers() -> tuple[dict[str, str], dict[str, str]]:
    """(licences, exceptions): casefolded id -> the list's spelling."""
    licences: dict[str, str] = {}
    exceptions: dict[str, str] = {}
    text = resources.files(__package__).joinpath("spdx_ids.txt").read_text(encoding="utf-8")
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        kind, name = line.split(" ", 1)
        (licences if kind == "license" else exceptions)[name.casefold()] = name
    return licences, exceptions


def spdx_expression(text: str) -> str | None:
    """`text` as a valid SPDX expression, or None when it cannot be converted faithfully."""
    if len(text) > MAX_LICENSE_TEXT:
        return None
    raw = _TOKEN.findall(text)
    if not raw or "".join(raw) != re.sub(r"\s+", "", text):
        return None
    upper = [t.upper() for t in raw]
    if "/" in raw and ("AND" in upper or "WITH" in upper):
        return None
    words = ["OR" if t == "/" else u if u in _OPERATORS else t
             for t, u in zip(raw, upper, strict=True)]
    return _Parser(words).expression()


class _Parser:
    """expression := term (OR term)*; term := factor (AND factor)*;
    factor := licence [WITH exception] | '(' expression ')'."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.at = 0
        self.out: list[str] = []

    def expression(self) -> str | None:
        if not self._or() or self.at != len(self.tokens):
            return None
        return " ".join(self.out).replace("( ", "(").replace(" )", ")")

    def _peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _take(self, word: str) -> None:
        self.out.append(word)
        self.at += 1

    def _or(self) -> bool:
        if not self._and():
            return False
        while self._peek() == "OR":
            self._take("OR")
            if not self._and():
                return False
        return True

    def _and(self) -> bool:
        if not self._factor():
            return False
        while self._peek() == "AND":
            self._take("AND")
            if not self._factor():
                return False
        return True

    def _factor(self) -> bool:
        word = self._peek()
        if word == "(":
            self._take("(")
            if not self._or() or self._peek() != ")":
                return False
            self._take(")")
            return True
        licences, exceptions = _identifiers()
        if word is None or (name := licences.get(word.casefold())) is None:
            return False
        self._take(name)
        if self._peek() == "WITH":
            self._take("WITH")
            following = self._peek()
            exception = exceptions.get(following.casefold()) if following else None
            if exception is None:
                return False
            self._take(exception)
        return True
