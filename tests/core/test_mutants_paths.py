"""core/paths.py and core/identifiers.py, rule by rule: each refusal at its boundary, each
acceptance just inside it.

In-process and exact (the message says which rule refused), so `nox -s mutants` can tell
when a comparison, a bound or a branch of these rules is changed.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core import identifiers, paths


@pytest.mark.parametrize(("path", "problem"), [
    ("", "empty path"),
    ("a" * 513, "longer than 512 bytes"),
    ("é" * 257, "longer than 512 bytes"),  # counted in UTF-8 bytes, not characters
    ("a\u202eb", "control or format character U+202E in path"),
    ("a\x00b", "control or format character U+0000 in path"),
    ("a\\b", "backslash in path"),
    ("/etc/passwd", "absolute path"),
    ("C:x", "drive letter in path"),
    ("z:/x", "drive letter in path"),
    ("a//b", "empty component (double or trailing slash)"),
    ("a/", "empty component (double or trailing slash)"),
    ("./a", "'.' component"),
    ("a/../b", "'..' component"),
    ("a./b", "component 'a.' ends with a dot or space"),
    ("lib/a ", "component 'a ' ends with a dot or space"),
    ("a/b:c", "component 'b:c' holds a colon"),
    ("docs/con.txt", "component 'con.txt' is a reserved device name"),
    ("LPT9", "component 'LPT9' is a reserved device name"),
    ("conout$.x", "component 'conout$.x' is a reserved device name"),
])
def test_each_unsafe_path_is_refused_by_its_own_rule(path: str, problem: str) -> None:
    assert paths.path_problem(path) == problem


@pytest.mark.parametrize("path", [
    "a" * 512, "é" * 256, "lib/libexample.so", "a.b/c", "console.txt", "COM10",
    "docs/a.b.c", ".hidden", "a..b", "a b",
])
def test_paths_just_inside_the_rules_are_safe(path: str) -> None:
    assert paths.path_problem(path) is None


@pytest.mark.parametrize(("path", "problem"), [
    ("a/" * 200 + "con", "component 'con' is a reserved device name"),  # the last of many
    ("x/b./c:d//e", "component 'b.' ends with a dot or space"),  # the first of several
    ("x/c:d/b./", "component 'c:d' holds a colon"),
    ("x/y//c:d", "empty component (double or trailing slash)"),
    ("x/nul/a./..", "component 'nul' is a reserved device name"),
    ("x/a ./com1", "component 'a .' ends with a dot or space"),
    ("x/..", "'..' component"),
    ("x/.", "'.' component"),
    ("x/Nul.tar.gz/y", "component 'Nul.tar.gz' is a reserved device name"),
    # U+0131 (dotless i) upper-cases to I, U+017F (long s) to S, U+00DF to SS
    ("x/\u0131nul/con\u0131n$", "component 'con\u0131n$' is a reserved device name"),
    ("x/\u017fa/aux", "component 'aux' is a reserved device name"),
    ("\u00df/c\u00f6m1/prn", "component 'prn' is a reserved device name"),  # ß: SS
])
def test_the_first_component_a_rule_refuses_is_the_one_named(path: str, problem: str) -> None:
    assert paths.path_problem(path) == problem


@pytest.mark.parametrize("path", [
    "a/" * 255 + "a", "x/conx/com/lpt/con1x/nul-/auxx", "x/.a/a.b/a..b/b .c", "a/b/\u00a0/c",
])
def test_many_or_unusual_components_that_break_no_rule_are_safe(path: str) -> None:
    assert paths.path_problem(path) is None


def _path_problem_component_by_component(path: str) -> str | None:
    """`path_problem` as it was written before it searched for the first refusable component:
    every rule tried on every component, in order."""
    for part in path.split("/"):
        if part == "":
            return "empty component (double or trailing slash)"
        if part in (".", ".."):
            return f"{part!r} component"
        if part.endswith((".", " ")):
            return f"component {part!r} ends with a dot or space"
        if ":" in part:
            return f"component {part!r} holds a colon"
        if part.split(".")[0].upper() in paths._WINDOWS_RESERVED:
            return f"component {part!r} is a reserved device name"
    return None


COMPONENTS = st.sampled_from(["a", "con", "CON.x", "conin$", "Com9", "lpt0", "nul.", "aux ",
                              "a:b", ".", "..", "", "\u0131", "\u00df", "c\u0131nx", ".a",
                              "b..c", "x y", "\u017f", "PRN"])


@given(st.lists(COMPONENTS, min_size=1, max_size=6).map("/".join))
def test_the_first_refusable_component_is_found_as_every_rule_would_find_it(path: str) -> None:
    expected = None if not path else _path_problem_component_by_component(path)
    if path and not path.startswith("/") and not path[:2].endswith(":") and "\\" not in path:
        assert paths.path_problem(path) == expected


def test_a_lone_surrogate_is_counted_and_refused_not_crashed_on() -> None:
    assert paths.path_problem("\udc80") == "control or format character U+DC80 in path"


def test_invisible_characters_are_named_by_code_point() -> None:
    assert paths.invisible_character("abc") is None
    assert paths.invisible_character("a\u2028b\x01") == "U+2028"
    assert paths.invisible_character("\ue000") == "U+E000"
    assert paths.invisible_character("\u2029") == "U+2029"
    assert paths.invisible_character("x\x9f") == "U+009F"


def test_fold_is_case_and_normalisation_insensitive() -> None:
    assert paths.fold("LIB/Caf\u0065\u0301") == paths.fold("lib/caf\u00e9")
    assert paths.fold("Straße") == "strasse"


@pytest.mark.parametrize(("listed", "pairs"), [
    (["a", "b"], []),
    (["a", "a"], [("a", "a")]),
    (["README", "readme"], [("README", "readme")]),
    (["caf\u00e9", "cafe\u0301"], [("caf\u00e9", "cafe\u0301")]),
    (["lib", "lib/x.so"], [("lib", "lib/x.so")]),
    (["lib/x.so", "LIB"], [("LIB", "lib/x.so")]),
    (["a/b/c", "a/b"], [("a/b", "a/b/c")]),
    (["a/b/c", "a"], [("a", "a/b/c")]),
    (["ab", "a/b"], []),
    (["a/bc", "a/b"], []),
    (["", "a"], []),  # the empty path is no directory of anything (path_problem refuses it)
])
def test_collisions_are_every_pair_naming_one_file(listed: list[str],
                                                   pairs: list[tuple[str, str]]) -> None:
    assert paths.collisions(listed) == pairs


def _collisions_joining_components(listed: list[str]) -> list[tuple[str, str]]:
    """`collisions` as it was written before it looked up only directories that are keys:
    every directory of every key joined from its components and looked up."""
    seen: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    for path in listed:
        key = paths.fold(path)
        if key in seen:
            found.append((seen[key], path))
        else:
            seen[key] = path
    for key, path in seen.items():
        parts = key.split("/")
        for depth in range(1, len(parts)):
            if (prefix := "/".join(parts[:depth])) in seen:
                found.append((seen[prefix], path))
    return found


@given(st.lists(st.from_regex(r"[aAbé/]{0,6}", fullmatch=True), max_size=8))
def test_collisions_are_found_in_the_order_every_directory_joined_would_find_them(
        listed: list[str]) -> None:
    assert paths.collisions(listed) == _collisions_joining_components(listed)


def test_collisions_are_yielded_one_at_a_time() -> None:
    found = paths.iter_collisions(["a", "a/b", "a/b/c", "A"])
    assert next(found) == ("a", "A")
    assert list(found) == [("a", "a/b"), ("a", "a/b/c"), ("a/b", "a/b/c")]


@pytest.mark.parametrize(("target", "system"), [
    ("x86_64-unknown-linux-gnu", "linux"),
    ("aarch64-unknown-linux-musl", "linux"),
    ("aarch64-apple-darwin", "darwin"),
    ("x86_64-pc-windows-msvc", "windows"),
    ("x86_64-apple-ios", None),
    ("x86_64-unknown-freebsd", None),
    ("i686-unknown-linux-gnu", None),
    ("x86_64-linux", None),
    ("x86_64-unknown-linux-gnu\n", None),
    ("x86_64-a-b-c-d", None),
])
def test_target_os_of_supported_64_bit_triples_only(target: str, system: str | None) -> None:
    assert identifiers.target_os(target) == system


@pytest.mark.parametrize(("target", "problem"), [
    ("x86_64-unknown-linux-gnu", None),
    ("not a triple", "'not a triple' is not a target triple"),
    ("i686-unknown-linux-gnu", "'i686-unknown-linux-gnu' is not a 64-bit target "
                               "(ABI v1 is 64-bit only)"),
    ("x86_64-unknown-freebsd", "'x86_64-unknown-freebsd' is not a Linux, macOS or Windows "
                               "target"),
])
def test_target_problem_names_the_first_rule_broken(target: str, problem: str | None) -> None:
    assert identifiers.target_problem(target) == problem


@pytest.mark.parametrize(("name", "problem"), [
    ("Example", None),
    ("x" * 128, None),
    ("", "must be 1 to 128 characters"),
    ("x" * 129, "must be 1 to 128 characters"),
    (" x", "leading or trailing whitespace"),
    ("x\t", "leading or trailing whitespace"),
    ("a\u200bb", "control or format character U+200B"),
])
def test_display_names(name: str, problem: str | None) -> None:
    assert identifiers.display_name_problem(name) == problem
