"""Property tests (Hypothesis) for the readers every untrusted byte goes through.

Each reader either accepts its input or refuses it with a registered code; nothing else ever
escapes (no KeyError, no RecursionError, no zlib.error). Where a reader accepts, what it read
agrees with an independent reading: the stdlib's `json` for the strict JSON reader, CPython's
`zipfile` for the archive reader, the writer for SHA256SUMS and plugin.json.

The normal run uses the `default` profile (a small, derandomised budget); `nox -s fuzz` runs
the `fuzz` profile with a large one (tests/conftest.py, docs/threat-model.md).
"""

from __future__ import annotations

import io
import json
import posixpath
import stat
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any, TypeVar

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from horon_bundle.core import identifiers, paths
from horon_bundle.core.errors import Refused
from horon_bundle.core.strictjson import (
    MAX_SAFE_INTEGER,
    canonical_bytes,
    canonical_value_bytes,
    read_json,
)
from horon_bundle.model import checksums
from horon_bundle.model.manifest import parse_manifest
from horon_bundle.verify.reading.archive_reader import validate_archive
from tests.core.test_identifiers import MANIFEST

T = TypeVar("T")


def outcome(read: Callable[[], T]) -> tuple[T | None, list[str]]:
    """(what `read` returned, []) or (None, the refusal codes); any other exception escapes."""
    try:
        return read(), []
    except Refused as exc:
        return None, exc.codes()


# --- the strict JSON reader -------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(0, MAX_SAFE_INTEGER)
    | st.text(st.characters(exclude_categories=["Cs"]), max_size=20),
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.text(st.characters(exclude_categories=["Cs"]), max_size=8), inner,
                      max_size=5),
    max_leaves=30)


@given(json_values)
def test_json_round_trips_what_we_write(value: Any) -> None:
    assert read_json(canonical_bytes(value), source="x") == value


ascii_values = st.recursive(
    st.none() | st.booleans() | st.integers(0, 2**64) | st.text(st.characters(max_codepoint=127)),
    lambda inner: st.lists(inner, max_size=5)
    | st.dictionaries(st.text(st.characters(max_codepoint=127), max_size=8), inner, max_size=5),
    max_leaves=30)


@given(json_values | ascii_values)
def test_the_fast_canonical_writer_writes_the_canonical_bytes(value: Any) -> None:
    """The digest of a byproduct is over its canonical bytes: the C-speed writer must give the
    very bytes `canonical_bytes` gives, escapes, DEL, non-ASCII and large integers included."""
    assert canonical_value_bytes(value) == canonical_bytes(value)


@given(st.binary(max_size=300))
def test_json_reader_accepts_or_refuses_any_bytes(data: bytes) -> None:
    value, refused = outcome(lambda: read_json(data, source="x", max_depth=8))
    if refused:
        assert all(code.startswith("json.") for code in refused)
        return
    # what we accept, the stdlib reads the same way
    assert json.loads(data.decode("utf-8")) == value


json_texts = st.recursive(
    st.sampled_from(["null", "true", "1", "-1", "1.5", "1e400", "NaN", '"a"', '"\\ud800"',
                     "01", "9" * 25, '"\\u0000"']),
    lambda inner: st.lists(inner, max_size=4).map(lambda xs: "[" + ",".join(xs) + "]")
    | st.lists(st.tuples(st.sampled_from(['"a"', '"b"', '"a"']), inner), max_size=4)
    .map(lambda kv: "{" + ",".join(f"{k}:{v}" for k, v in kv) + "}"),
    max_leaves=20)


@given(json_texts, st.sampled_from(["", " ", "\n", " x", "{}", "\ufeff"]))
def test_json_reader_refuses_what_json_loads_would_disagree_on(text: str, tail: str) -> None:
    """Duplicate keys, NaN, floats, big integers, lone surrogates, trailing data: accepted
    only when stdlib json reads exactly the same value."""
    data = (text + tail).encode("utf-8")
    value, refused = outcome(lambda: read_json(data, source="x"))
    if refused:
        return

    def unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        assert len({k for k, _ in pairs}) == len(pairs), "a duplicate key was accepted"
        return dict(pairs)

    def no_float(text: str) -> Any:
        raise AssertionError(f"a float {text} was accepted")

    assert json.loads(data, object_pairs_hook=unique, parse_float=no_float,
                      parse_constant=no_float) == value


@given(st.integers(65, 400), st.sampled_from(["[", '{"a":']))
def test_json_nesting_over_the_limit(depth: int, opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    data = (opener * depth + "1" + closer * depth).encode()
    assert outcome(lambda: read_json(data, source="x")) == (None, ["json.too-deep"])


# --- the plugin.json decoder ------------------------------------------------------------------
def _places(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            found += _places(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            found += _places(value, (*prefix, index))
    return found


PLACES = [p for p in _places(MANIFEST) if p]


@given(st.lists(st.tuples(st.sampled_from(PLACES), json_values), min_size=1, max_size=3))
def test_manifest_decoder_accepts_or_refuses_any_edit(edits: list[tuple[Any, Any]]) -> None:
    document = json.loads(json.dumps(MANIFEST))
    for place, value in edits:
        parent: Any = document
        try:
            for key in place[:-1]:
                parent = parent[key]
            parent[place[-1]] = value
        except (KeyError, IndexError, TypeError):
            continue
    manifest, refused = outcome(lambda: parse_manifest(json.dumps(document).encode()))
    if manifest is None:
        assert refused
        return
    # what is accepted is canonical again, and every path in it is a safe path
    assert parse_manifest(manifest.to_bytes()) == manifest
    for path in manifest.declared_files():
        assert paths.path_problem(path) is None


plugin_ids = st.from_regex(identifiers.PLUGIN_ID, fullmatch=True)
versions = st.from_regex(identifiers.SEMVER, fullmatch=True)


@given(plugin_ids, versions, st.lists(st.from_regex(identifiers.FEATURE, fullmatch=True),
                                      unique=True, max_size=4))
def test_manifest_round_trips(plugin_id: str, version: str, features: list[str]) -> None:
    document = json.loads(json.dumps(MANIFEST))
    document.update(id=plugin_id, version=version,
                    features=sorted(f for f in features if "qa" not in f))
    manifest, refused = outcome(lambda: parse_manifest(json.dumps(document).encode()))
    if manifest is None:  # a feature token can still match a QA pattern (qa-x, x_qa)
        assert refused == ["manifest.qa-feature"]
        return
    assert manifest.id == plugin_id and manifest.version == version
    assert parse_manifest(manifest.to_bytes()) == manifest


# --- path normalisation -----------------------------------------------------------------------
path_texts = st.lists(st.sampled_from([*"aB./\\:-_ \u00e9\u0301\n\u2028\0", "..", "CON", "A"]),
                      max_size=20).map("".join)


@given(path_texts | st.text(max_size=40))
def test_a_safe_path_is_already_normal(path: str) -> None:
    if paths.path_problem(path) is not None:
        return
    assert posixpath.normpath(path) == path
    assert PurePosixPath(path).as_posix() == path
    assert not path.startswith("/") and "\\" not in path
    assert ".." not in path.split("/") and "." not in path.split("/")
    assert paths.invisible_character(path) is None
    assert len(path.encode("utf-8")) <= paths.MAX_PATH_BYTES


@given(st.lists(path_texts, max_size=6))
def test_collisions_are_exactly_the_folded_or_nested_pairs(names: list[str]) -> None:
    found = paths.collisions(names)
    folded = [paths.fold(n) for n in names]
    assert bool(found) == (len(set(folded)) != len(folded) or any(
        a != b and b.startswith(a + "/") for a in set(folded) for b in set(folded)))
    assert all(paths.fold(paths.fold(n)) == paths.fold(n) for n in names)


# --- the archive reader -----------------------------------------------------------------------
names = st.from_regex(r"[a-z]{1,6}(/[a-z]{1,6}){0,2}", fullmatch=True)


def _write_zip(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    return buffer.getvalue()


def _read_all(data: bytes) -> dict[str, bytes]:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "a.zip"
        path.write_bytes(data)
        reader = validate_archive(path)
        try:
            result = {}
            for name in reader.entries:
                with reader.open(name) as stream:
                    chunks = []
                    while chunk := stream.read(4096):
                        chunks.append(chunk)
                    result[name] = b"".join(chunks)
            return result
        finally:
            reader.close()


@given(st.dictionaries(names, st.binary(max_size=2000), min_size=1, max_size=6))
def test_archives_we_could_write_are_read_back(entries: dict[str, bytes]) -> None:
    assume(not paths.collisions(entries))
    assume(all(paths.path_problem(name) is None for name in entries))
    assert _read_all(_write_zip(entries)) == entries


@given(st.dictionaries(names, st.binary(max_size=300), min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), min_size=1,
                max_size=6),
       st.integers(0, 40))
def test_a_damaged_archive_is_refused_or_read_as_zipfile_reads_it(
        entries: dict[str, bytes], flips: list[tuple[int, int]], cut: int) -> None:
    assume(not paths.collisions(entries))
    data = bytearray(_write_zip(entries))
    for offset, value in flips:
        data[offset % len(data)] = value
    damaged = bytes(data[:len(data) - cut] if cut < len(data) else data)
    ours, refused = outcome(lambda: _read_all(damaged))
    if ours is None:
        assert refused
        return
    # accepted: CPython's zipfile must read exactly the same names and bytes
    with zipfile.ZipFile(io.BytesIO(damaged)) as archive:
        theirs = {i.filename: archive.read(i) for i in archive.infolist()}
    assert ours == theirs


# --- SHA256SUMS -------------------------------------------------------------------------------
digests = st.dictionaries(
    st.from_regex(r"[A-Za-z0-9_.-]{1,10}(/[A-Za-z0-9_-]{1,10}){0,2}", fullmatch=True)
    .filter(lambda p: paths.path_problem(p) is None and p != "SHA256SUMS"),
    st.from_regex(identifiers.SHA256_HEX, fullmatch=True), max_size=8)


@pytest.mark.slow
@given(digests)
def test_sha256sums_round_trip(listed: dict[str, str]) -> None:
    assert checksums.parse(checksums.render(listed)) == listed


@pytest.mark.slow
@given(st.binary(max_size=400) | digests.map(checksums.render).map(
    lambda data: data.replace(b"  ", b" *", 1)))
def test_sha256sums_accepts_only_its_own_form(data: bytes) -> None:
    listed, refused = outcome(lambda: checksums.parse(data))
    if listed is None:
        assert refused and all(code.startswith("checksum.") for code in refused)
        return
    assert checksums.render(listed) == data
