"""QA-provider patterns: the always-applied defaults plus a declaration's own globs.

Patterns are shell globs matched case-sensitively on every OS (`fnmatchcase`), against crate
names and feature names alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from fnmatch import fnmatchcase

DEFAULT_QA_PATTERNS: tuple[str, ...] = (
    "qa", "qa-*", "*-qa", "*-qa-*", "qa_*", "*_qa", "*_qa_*",
)


def effective_patterns(extra: Iterable[str]) -> tuple[str, ...]:
    """Defaults first, then the declaration's extra patterns, without repeats."""
    result = list(DEFAULT_QA_PATTERNS)
    for pattern in extra:
        if pattern not in result:
            result.append(pattern)
    return tuple(result)


def matching_pattern(name: str, patterns: Iterable[str]) -> str | None:
    for pattern in patterns:
        if fnmatchcase(name, pattern):
            return pattern
    return None
