"""Feature lists: the claim's closure under a package's own feature table, and drift.

Only features proper count: `dep:` entries and cargo's implicit optional-dependency features
(a key `k` whose only entry is `dep:k`) are left out on both sides, as are `x/y` entries,
which enable features of a dependency rather than of the package.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def implicit_features(table: Mapping[str, Iterable[str]]) -> set[str]:
    return {key for key, entries in table.items() if list(entries) == [f"dep:{key}"]}


def closure(claim: Iterable[str], table: Mapping[str, Iterable[str]]) -> set[str]:
    implicit = implicit_features(table)
    result: set[str] = set()
    stack = list(claim)
    while stack:
        feature = stack.pop()
        if feature in result:
            continue
        result.add(feature)
        for entry in table.get(feature, ()):
            if entry.startswith("dep:") or "/" in entry:
                continue
            stack.append(entry)
    return result - implicit


def proper(features: Iterable[str], table: Mapping[str, Iterable[str]]) -> tuple[str, ...]:
    """`features` without the implicit optional-dependency ones, sorted by byte order."""
    implicit = implicit_features(table)
    return tuple(sorted((f for f in set(features) if f not in implicit),
                        key=lambda f: f.encode("utf-8")))


def parse_list(text: str) -> tuple[str, ...]:
    """A wire feature list (comma separated, no spaces); empty text is the empty list."""
    return tuple(text.split(",")) if text else ()
