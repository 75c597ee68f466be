"""QA-provider patterns: the built-in ones, always applied, plus those others add.

A declaration (`[qa] providers`), a bundle (the patterns its provenance records) and an
auditor's policy (`qa-patterns`) may each add patterns; none can remove one, so every judge
starts from `BUILTIN_QA_PATTERNS` (`effective_patterns`).

Names are compared the way crates.io compares crate names: `Foo_Bar` and `foo-bar` are one
name (case folded, `_` and `-` alike). Both the name and the pattern are folded before the
glob is matched, so `horon-QA-mock`, `horon_qa_mock` and `horon-qa-mock` all match `*-qa-*`.
Beyond crates.io (whose names are ASCII), names are also NFKC-normalised and case-folded in
full, so a full-width `\uff51\uff41` is `qa` too. Globs: `*` any run of characters, `?` one
character, `[...]` / `[!...]` a class; everything else is literal.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.fields import FieldReader, join

BUILTIN_QA_PATTERNS: tuple[str, ...] = ("qa", "qa-*", "*-qa", "*-qa-*")
DEFAULT_QA_PATTERNS = BUILTIN_QA_PATTERNS


def is_pattern(pattern: str) -> bool:
    """A pattern anyone may add: a non-empty printable ASCII glob."""
    return bool(pattern) and pattern.isascii() and pattern.isprintable()


def fold_name(name: str) -> str:
    """The key under which crates.io (and this toolchain) considers two names the same."""
    return unicodedata.normalize("NFKC", name).casefold().replace("_", "-")


def effective_patterns(*extra: Iterable[str]) -> tuple[str, ...]:
    """The built-in patterns first, then every added one, without repeats (after folding)."""
    result = list(BUILTIN_QA_PATTERNS)
    seen = {fold_name(p) for p in result}
    for patterns in extra:
        for pattern in patterns:
            if fold_name(pattern) not in seen:
                seen.add(fold_name(pattern))
                result.append(pattern)
    return tuple(result)


def _literal(text: str) -> str:
    return re.escape(fold_name(text))


def _class(body: str) -> str:
    """A glob character class (without its brackets) as a regex class over folded names."""
    negate = body.startswith("!")
    if negate:
        body = body[1:]
    members: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if index + 2 < len(body) and body[index + 1] == "-":
            low, high = fold_name(char), fold_name(body[index + 2])
            if len(low) == len(high) == 1 and low <= high:
                members.append(f"{re.escape(low)}-{re.escape(high)}")
            index += 3
            continue
        members.extend(re.escape(c) for c in fold_name(char))
        index += 1
    if not members:  # only reversed ranges: as in fnmatch, no character, or any once negated
        return "." if negate else "(?!)"
    return f"[{'^' if negate else ''}{''.join(members)}]"


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str]:
    parts: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        elif char == "[":
            start = index + 1
            if start < len(pattern) and pattern[start] == "!":
                start += 1
            if start < len(pattern) and pattern[start] == "]":
                start += 1
            end = pattern.find("]", start)
            if end == -1:
                parts.append(_literal(char))
            else:
                parts.append(_class(pattern[index + 1:end]))
                index = end
        else:
            parts.append(_literal(char))
        index += 1
    return re.compile("".join(parts), re.DOTALL)


def name_matches(name: str, pattern: str) -> bool:
    """Does `name` match the glob `pattern`, both compared as crates.io compares names?"""
    return _compiled(pattern).fullmatch(fold_name(name)) is not None


def matching_pattern(name: str, patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        if name_matches(name, pattern):
            return pattern
    return None


def pattern_matcher(patterns: Iterable[str]) -> Callable[[str], str | None]:
    """`matching_pattern` over fixed `patterns`, each name folded once and answered once (a
    graph of 10,000 packages names `std` and `default` thousands of times)."""
    compiled = [(pattern, _compiled(pattern)) for pattern in patterns]
    answers: dict[str, str | None] = {}

    def match(name: str) -> str | None:
        if name in answers:
            return answers[name]
        folded = fold_name(name)
        answer = next((p for p, regex in compiled if regex.fullmatch(folded)), None)
        answers[name] = answer
        return answer
    return match


@dataclass(frozen=True, slots=True, kw_only=True)
class QaProvider:
    """A QA crate (`feature` None) or QA feature compiled into a graph, why it is one, and the
    chain of packages and features that pulled it in (`rules.features_and_qa` finds them; a
    provenance records them)."""

    package: str  # the graph's package id
    feature: str | None
    reason: str
    chain: str

    def to_json(self) -> dict[str, str | None]:
        return {"package": self.package, "feature": self.feature, "reason": self.reason,
                "chain": self.chain}


def recorded_providers(reader: FieldReader, raw: list[Any], where: str) -> list[QaProvider]:
    """The providers a provenance records (`qa.providers`): each exactly the four fields
    `QaProvider.to_json` writes, every value a string or null."""
    providers = []
    for index, item in enumerate(raw):
        place = join(where, index)
        obj = reader.typed(item, dict, place)
        if obj is None:
            continue
        if not all(isinstance(v, str) or v is None for v in obj.values()):
            reader.report(codes.PROVENANCE_SCHEMA, place, "provider fields must be strings or null")
            continue
        obj = dict(obj)
        package = reader.take_text(obj, "package", place)
        readable, feature = reader.take_nullable(obj, "feature", str, place)
        reason = reader.take(obj, "reason", str, place)
        chain = reader.take(obj, "chain", str, place)
        reader.finish(obj, place)
        if package is not None and readable and reason is not None and chain is not None:
            providers.append(QaProvider(package=package, feature=feature, reason=reason,
                                        chain=chain))
    return providers
