"""The QA-crate rules (model/qa.py), in-process and exact: built-in patterns always first,
names compared as crates.io compares them, globs with classes, ranges and negation."""

from __future__ import annotations

import pytest

from horon_bundle.model import qa


@pytest.fixture(autouse=True)
def _compile_afresh() -> None:
    """Each test compiles its patterns: a cache filled before (by another test, or by the
    process `nox -s mutants` forks each mutant's tests from) would hide the compiler."""
    qa._compiled.cache_clear()


def test_built_in_patterns_come_first_and_added_ones_once() -> None:
    assert qa.effective_patterns() == qa.BUILTIN_QA_PATTERNS
    assert qa.effective_patterns(["mock-*", "QA"], ["Mock_*", "x"]) == (
        *qa.BUILTIN_QA_PATTERNS, "mock-*", "x")


@pytest.mark.parametrize(("pattern", "ok"), [
    ("qa-*", True), ("", False), ("qa\n", False), ("qä", False), ("a b", True)])
def test_is_pattern(pattern: str, ok: bool) -> None:
    assert qa.is_pattern(pattern) is ok


@pytest.mark.parametrize(("name", "pattern", "matched"), [
    ("horon-QA-mock", "*-qa-*", True),
    ("horon_qa_mock", "*-qa-*", True),
    ("qa", "qa", True),
    ("qaa", "qa", False),
    ("aqa", "qa", False),
    ("qa-x", "qa-?", True),
    ("qa-xy", "qa-?", False),
    ("qa-b", "qa-[a-c]", True),
    ("qa-B", "qa-[a-c]", True),
    ("qa-d", "qa-[a-c]", False),
    ("qa-d", "qa-[!a-c]", True),
    ("qa-a", "qa-[!a-c]", False),
    ("qa-]", "qa-[]]", True),
    ("qa-x", "qa-[]]", False),
    ("qa-!", "qa-[!]", False),
    ("qa-[", "qa-[", True),
    ("qa-.", "qa-.", True),
    ("qa-x", "qa-.", False),
    ("qa-c", "qa-[c-a]", False),  # a reversed range holds nothing, as in fnmatch
    ("qa-c", "qa-[!c-a]", True),
    ("qa-c", "qa-[ac]", True),
    ("qa-b", "qa-[ac]", False),
    ("qa-\n", "qa-*", True),
    ("qa-b", "qa-[a-]", False),
    ("qa--", "qa-[a-]", True),
    ("qa-a", "qa-[a-a]", True),
    ("qa-x", "qa-[a-cx]", True),  # a range, then a character
    ("qa--", "qa-[xya-c]", False),  # a character, then a range: no '-' in the class
    ("qa-c", "qa-[xya-c]", True),
])
def test_name_matches_globs_as_crates_io_names(name: str, pattern: str, matched: bool) -> None:
    assert qa.name_matches(name, pattern) is matched


def test_matching_pattern_names_the_first_that_matches() -> None:
    assert qa.matching_pattern("x-qa", ["nope", "*-qa", "*"]) == "*-qa"
    assert qa.matching_pattern("x", ["qa", "qa-*"]) is None
