"""Property tests for the parsers and path rules: no input escapes as anything but a refusal."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from horon_bundle.core import identifiers, paths
from horon_bundle.core.errors import Refused
from horon_bundle.core.strictjson import MAX_SAFE_INTEGER, canonical_bytes, read_json
from horon_bundle.model import checksums
from horon_bundle.model.manifest import parse_manifest

safe_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(0, MAX_SAFE_INTEGER) | safe_text,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(safe_text, children, max_size=4),
    max_leaves=20)


def _refusal_codes(call: Callable[[], object]) -> list[str]:
    """Run a reader; its refusal codes, or [] when it accepted the input."""
    try:
        call()
    except Refused as exc:
        return exc.codes()
    return []


@given(json_values)
def test_canonical_output_reads_back(value: Any) -> None:
    assert read_json(canonical_bytes(value), source="x") == value


@given(st.binary(max_size=300))
@settings(max_examples=300)
def test_arbitrary_bytes_are_parsed_or_refused(data: bytes) -> None:
    codes = _refusal_codes(lambda: read_json(data, source="x"))
    assert all(code.startswith("json.") for code in codes)


@given(st.binary(max_size=400))
@settings(max_examples=300)
def test_arbitrary_bytes_never_crash_the_manifest_reader(data: bytes) -> None:
    _refusal_codes(lambda: parse_manifest(data))


@pytest.mark.slow
@given(json_values)
@settings(max_examples=200)
def test_arbitrary_json_never_crashes_the_manifest_reader(value: Any) -> None:
    codes = _refusal_codes(
        lambda: parse_manifest(json.dumps({"format": "horon.plugin.v1", "x": value}).encode()))
    assert codes, "an unknown field must be refused"


@given(st.text(max_size=40))
def test_path_rule_is_total_and_safe(path: str) -> None:
    problem = paths.path_problem(path)
    if problem is None:
        parts = path.split("/")
        assert ".." not in parts and "." not in parts and "" not in parts
        assert not path.startswith("/") and "\\" not in path


@pytest.mark.slow
@given(st.dictionaries(st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,2}", fullmatch=True),
                       st.from_regex(r"[0-9a-f]{64}", fullmatch=True), max_size=6))
def test_checksums_round_trip(digests: dict[str, str]) -> None:
    if paths.collisions(digests):
        return
    assert checksums.parse(checksums.render(digests)) == digests


@given(st.binary(max_size=300))
def test_arbitrary_checksum_files_are_parsed_or_refused(data: bytes) -> None:
    codes = _refusal_codes(lambda: checksums.parse(data))
    assert all(code.startswith("checksum.") for code in codes)


@pytest.mark.parametrize("text", ["\"\\ud800\"", "{\"a\": \"\\udfff\"}", "{\"\\ud800\": 1}"])
def test_escaped_lone_surrogates_refused(text: str) -> None:
    with pytest.raises(Refused) as caught:
        read_json(text.encode(), source="x")
    assert caught.value.codes() == ["json.encoding"]


@pytest.mark.parametrize("text", ["1e-999", "0.5", "1E2", "-0.0"])
def test_floats_refused(text: str) -> None:
    with pytest.raises(Refused) as caught:
        read_json(text.encode(), source="x")
    assert caught.value.codes() == ["json.float"]


def test_huge_digit_string_refused_without_traceback() -> None:
    with pytest.raises(Refused) as caught:
        read_json(b"9" * 5000, source="x")
    assert caught.value.codes() == ["json.integer-range"]


def test_deep_nesting_refused_before_parsing() -> None:
    with pytest.raises(Refused) as caught:
        read_json(b"[" * 100_000 + b"]" * 100_000, source="x", max_bytes=1 << 21)
    assert caught.value.codes() == ["json.too-deep"]


@pytest.mark.parametrize(("path", "ok"), [
    ("lib/libx.so", True), ("a/../b", False), ("./a", False), ("a//b", False), ("a/", False),
    ("C:/x", False), ("x:y", False), ("CON", False), ("con.txt", False), ("a.", False),
    ("a ", False), ("a\x00b", False), ("/abs", False), ("a\\b", False), ("", False),
])
def test_path_rules(path: str, ok: bool) -> None:
    assert (paths.path_problem(path) is None) is ok


def test_collisions_fold_case_and_normalisation() -> None:
    assert paths.collisions(["LICENSE", "license"])
    assert paths.collisions(["caf\u00e9", "cafe\u0301"])
    assert paths.collisions(["lib", "lib/x.so"])
    assert not paths.collisions(["lib/a.so", "lib/b.so"])


@pytest.mark.parametrize(("target", "os_name"), [
    ("x86_64-unknown-linux-gnu", "linux"), ("aarch64-apple-darwin", "darwin"),
    ("x86_64-pc-windows-msvc", "windows"), ("i686-unknown-linux-gnu", None),
    ("x86_64-unknown-freebsd", None), ("not a triple", None),
])
def test_target_os(target: str, os_name: str | None) -> None:
    assert identifiers.target_os(target) == os_name


def test_a_tool_format_number_past_pythons_digit_limit_is_a_clean_refusal() -> None:
    """Readers of host and tool formats admit any number (harness hooks.json, plugin.json,
    cargo's output); past 4300 digits int() itself fails, and its message — about
    sys.set_int_max_str_digits(), cut at 120 characters — was shown as json.syntax."""
    assert read_json(b'{"timeout": ' + b"9" * 4300 + b"}", source="x.json",
                     any_number=True) == {"timeout": int("9" * 4300)}
    with pytest.raises(Refused) as refused:
        read_json(b'{"timeout": ' + b"1" * 5001 + b"}", source="hooks.json", any_number=True)
    [finding] = refused.value.findings
    assert finding.code.name == "json.integer-range"
    assert finding.message == "hooks.json: integer with 5001 digits (at most 4300)"
    assert "sys." not in finding.message and "fewer digits" in finding.hint
