"""The readers of untrusted bytes, rule by rule, in-process: each refusal at its boundary and
each acceptance just inside it, asserting the exact codes (what `nox -s mutants` judges the
readers' mutants with, besides their own test files)."""

from __future__ import annotations

import fcntl
import hashlib
import os
import stat
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core import codes, inputs, strictjson, tomlread
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.model import checksums
from horon_bundle.verify import limits
from horon_bundle.verify.reading.archive_entries import ArchiveEntry, judge_entries
from horon_bundle.verify.reading.archive_source import ArchiveSource
from horon_bundle.verify.reading.archive_stream import ArchiveStream, ResumeIndex
from horon_bundle.verify.reading.directory import DirectorySource
from horon_bundle.verify.reading.open import open_bundle

A, B = "a" * 64, "b" * 64


def _codes(data: bytes) -> list[str]:
    with pytest.raises(Refused) as caught:
        checksums.parse(data)
    return caught.value.codes()


def test_checksums_round_trip_sorted_by_path_bytes() -> None:
    digests = {"lib/x.so": A, "LICENSE": B, "plugin.json": A}
    data = checksums.render(digests)
    assert data == f"{B}  LICENSE\n{A}  lib/x.so\n{A}  plugin.json\n".encode()
    assert checksums.parse(data) == digests
    assert checksums.parse(b"") == {}


@pytest.mark.parametrize(("data", "codes"), [
    (f"{A}  x".encode(), ["checksum.format"]),
    (f"{A}  x\r\n".encode(), ["checksum.format"]),
    (f"\\{A}  x\n".encode(), ["checksum.format"]),
    (f"{A} *x\n".encode(), ["checksum.format"]),
    (f"{'a' * 40}  x\n".encode(), ["checksum.algorithm"]),
    (f"{'A' * 128} *x\n".encode(), ["checksum.algorithm"]),
    (f"{'a' * 63}  x\n".encode(), ["checksum.format"]),
    (f"{A}  SHA256SUMS\n".encode(), ["checksum.self"]),
    (f"{A}  ../x\n".encode(), ["checksum.format"]),
    (f"{A}  x\n{B}  x\n".encode(), ["checksum.duplicate"]),
    (f"{A}  y\n{B}  x\n".encode(), ["checksum.format"]),
    (b"\xff\n", ["checksum.format"]),
    (b"\n" * (checksums.MAX_CHECKSUMS_BYTES + 1), ["checksum.format"]),
])
def test_checksums_refusals(data: bytes, codes: list[str]) -> None:
    assert _codes(data) == codes


def test_checksums_at_the_size_limit_is_read() -> None:
    line = f"{A}  x\n".encode()
    name = "y" * (checksums.MAX_CHECKSUMS_BYTES - len(line) - 66 - 1)
    data = line + f"{B}  {name}\n".encode()
    assert len(data) == checksums.MAX_CHECKSUMS_BYTES
    with pytest.raises(Refused) as caught:  # the long name is refused, not the size
        checksums.parse(data)
    assert "limit" not in str(caught.value)


def test_a_reader_may_name_its_own_size_limit() -> None:
    """A harness bundle's SHA256SUMS may hold a line for each entry of its zip (about 38 MB);
    a native bundle's is held to 1 MiB."""
    data = "".join(f"{A}  f{index:06d}\n" for index in range(15_000)).encode()
    assert len(data) > checksums.MAX_CHECKSUMS_BYTES
    assert len(checksums.parse(data, max_bytes=len(data))) == 15_000
    with pytest.raises(Refused) as caught:
        checksums.parse(data, max_bytes=len(data) - 1)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("checksum.format", f"SHA256SUMS: {len(data)} bytes, limit {len(data) - 1}")]
    with pytest.raises(Refused):
        checksums.parse(data)


def test_every_kind_of_malformed_line_is_listed_and_the_next_still_read() -> None:
    data = (f"\\{A}  e\n{'a' * 32}  md5\n{A}  SHA256SUMS\n{A}  ../p\n{A}  d\n{A}  d\n"
            f"{A}  z\r\n").encode()
    assert _codes(data) == ["checksum.format", "checksum.algorithm", "checksum.self",
                            "checksum.format", "checksum.duplicate", "checksum.format"]


def test_every_malformed_line_is_listed() -> None:
    assert _codes(f"{A}  x\r\nnot a line\n{A}  SHA256SUMS\n".encode()) == [
        "checksum.format", "checksum.format", "checksum.self"]


# --- core/tomlread.py: the line a TOML refusal points at -----------------------------------
DECLARATION = """# a release declaration
name = "x"
[publish]
destination = "file:///x"

[[plugin]]
id = "a"
qa-feature = "q"

[[plugin]]
id = "b"
qa-feature = "r"
[plugin.extra]
deep = 1

[[plugin.step]]
run = "x"
[[plugin.step]]
run = "y"
[[plugin]]
"quoted" = 1
a.b = 2
"""


@pytest.mark.parametrize(("where", "line"), [
    ("name", 2), ("publish", 3), ("publish.destination", 4),
    ("publish.missing", 3),  # the nearest table holding it
    ("plugin[0].id", 7), ("plugin[0].qa-feature", 8), ("plugin[1]", 10),
    ("plugin[1].qa-feature", 12), ("plugin[1].extra.deep", 14),
    ("plugin[1].step[0].run", 17), ("plugin[1].step[1].run", 19),
    ("plugin[2].quoted", 21), ("plugin[2].a.b", 22),
    ("plugin[3].id", None), ("nothing", None), ("", None),
])
def test_key_line_follows_tables_arrays_and_keys(where: str, line: int | None) -> None:
    assert tomlread.key_line(DECLARATION, where) == line


@pytest.mark.parametrize(("table", "names", "parent"), [
    (["plugin", "1", "extra"], ["plugin", "step"], ["plugin", "1"]),
    (["a", "0", "b", "2"], ["a", "b", "c"], ["a", "0", "b", "2"]),
    (["a", "b", "0"], ["a", "b", "c"], ["a", "b", "0"]),
    (["a", "3"], ["a"], []),
    (["x", "y"], ["a", "b"], ["a"]),
    (["x", "y", "a", "4"], ["a", "b"], ["a", "4"]),
    (["a"], ["a", "b"], ["a"]),
    ([], ["a", "b"], ["a"]),
    # `[[a]]`, `[[a.a]]`, `[[a.a.a]]`: each level searched from after the one before
    (["a", "0", "a", "1", "a", "2"], ["a", "a", "a", "x"], ["a", "0", "a", "1", "a", "2"]),
])
def test_a_header_extends_the_enclosing_array_element(table: list[str], names: list[str],
                                                      parent: list[str]) -> None:
    assert tomlread._parent(table, names) == parent


@pytest.mark.parametrize(("value", "depth"), [
    (1, 0), ({}, 1), ([], 1), ({"a": 1, "b": "x"}, 1), ({"a": [1, {"b": []}], "c": {}}, 4),
    ([[[[]]], []], 4), ({"a": {"b": {"c": {"d": 1}}}}, 4), ([1, "x", [2]], 2),
    ([[2], 1], 2),  # a scalar met before a deeper table or array
])
def test_value_depth_counts_tables_and_arrays(value: object, depth: int) -> None:
    assert tomlread.value_depth(value) == depth


def test_read_toml_depth_of_headers_is_capped_after_parsing() -> None:
    assert tomlread.read_toml(b"[a.b]\nc = 1\n", source="p", code=codes.POLICY_INVALID,
                              max_depth=2) == {"a": {"b": {"c": 1}}}
    with pytest.raises(Refused) as caught:
        tomlread.read_toml(b"[a.b.c]\nd = 1\n", source="p", code=codes.POLICY_INVALID,
                           max_depth=2)
    assert caught.value.codes() == ["policy.invalid"]


# --- core/strictjson.py: every rule at its boundary ----------------------------------------
def _json_code(data: bytes, **options: object) -> str:
    with pytest.raises(Refused) as caught:
        strictjson.read_json(data, source="x.json", **options)  # type: ignore[arg-type]
    [code] = caught.value.codes()
    assert "x.json: " in str(caught.value)  # the refusal names the file
    return code


def test_json_size_limit_is_inclusive() -> None:
    assert strictjson.read_json(b"[1]", source="x", max_bytes=3) == [1]
    assert _json_code(b"[1] ", max_bytes=3) == "json.too-large"
    assert _json_code(b"0" * (strictjson.DEFAULT_MAX_BYTES + 1)) == "json.too-large"


@pytest.mark.parametrize("data", [
    b"\xef\xbb\xbf[]", b"\x00\x00\xfe\xff[]", b"\xff\xfe\x00\x00[]", b"\xfe\xff[]",
    b"\xff\xfe[]", b"\x00[", b"[\x00", b"[\xff]", b'["\\ud800"]', b'{"\\udc00": 1}',
    b'{"a": ["b", {"c": "\\ud83d"}]}',
])
def test_json_encoding_refusals(data: bytes) -> None:
    assert _json_code(data) == "json.encoding"


def test_json_depth_counts_open_brackets_outside_strings() -> None:
    assert strictjson.read_json(b"[[]]", source="x", max_depth=2) == [[]]
    assert _json_code(b"[[[]]]", max_depth=2) == "json.too-deep"
    assert _json_code(b"[[[], [[]]]]", max_depth=3) == "json.too-deep"  # a close counts one off
    assert strictjson.read_json(b"[[],[],{}]", source="x", max_depth=2) == [[], [], {}]
    assert strictjson.read_json(b'["[[[[", "\\"[[["]', source="x", max_depth=1) == [
        "[[[[", '"[[[']
    assert _json_code(b"[" * (strictjson.DEFAULT_MAX_DEPTH + 1)) == "json.too-deep"
    deepest = b"[" * strictjson.DEFAULT_MAX_DEPTH + b"]" * strictjson.DEFAULT_MAX_DEPTH
    assert strictjson.read_json(deepest, source="x") is not None


@pytest.mark.parametrize(("data", "value"), [
    (b"0", 0), (b"-0", 0), (str(strictjson.MAX_SAFE_INTEGER).encode(),
                            strictjson.MAX_SAFE_INTEGER),
    (b' \t\n\r{"a": [true, null, "x"]} \t\n\r', {"a": [True, None, "x"]}),
])
def test_json_values_inside_the_rules(data: bytes, value: object) -> None:
    assert strictjson.read_json(data, source="x") == value


@pytest.mark.parametrize(("data", "code"), [
    (str(strictjson.MAX_SAFE_INTEGER + 1).encode(), "json.integer-range"),
    (b"-1", "json.integer-range"),
    (b"1" * 20, "json.integer-range"),
    (b"1" * 5000, "json.integer-range"),
    (b"1.5", "json.float"), (b"1e400", "json.float"), (b"NaN", "json.nonfinite"),
    (b"-Infinity", "json.nonfinite"), (b'{"a": 1, "a": 1}', "json.duplicate-key"),
    (b'{"a": {"b": 1, "b": 2}}', "json.duplicate-key"),
    (b"[1] [2]", "json.trailing-data"), (b"[1]x", "json.trailing-data"),
    (b"[1]\x0c", "json.trailing-data"),  # not JSON whitespace, though Python's
    (b"\x0c[1]", "json.syntax"), (b"[1,]", "json.syntax"), (b"", "json.syntax"),
    (b'["a\nb"]', "json.syntax"),
])
def test_json_refusals(data: bytes, code: str) -> None:
    assert _json_code(data) == code


def test_any_number_admits_the_numbers_of_tools_only() -> None:
    assert strictjson.read_json(b"[-1, 1.5, 1.7e308, 123456789012345678901234]", source="x",
                                any_number=True) == [-1, 1.5, 1.7e308,
                                                     123456789012345678901234]
    assert _json_code(b"NaN", any_number=True) == "json.nonfinite"
    # float() turns these into infinities, which no JSON reader of the host would agree on
    for beyond in (b"1e400", b"-1e400", b"[0.5, 2E+309]"):
        assert _json_code(beyond, any_number=True) == "json.nonfinite", beyond
    # past Python's int() digit limit: a refusal, not a traceback
    assert _json_code(b"1" * 5000, any_number=True) == "json.integer-range"
    assert _json_code(b'{"a": 1, "a": 2}', any_number=True) == "json.duplicate-key"


def test_canonical_bytes() -> None:
    assert strictjson.canonical_bytes({"b": [1], "a": "é"}) == (
        b'{\n  "a": "\\u00e9",\n  "b": [\n    1\n  ]\n}\n')
    with pytest.raises(ValueError, match="not JSON compliant"):
        strictjson.canonical_bytes(float("nan"))


# --- core/inputs.py: a named file is opened once, judged on its descriptor, bounded ---------
def _input_code(path: Path, **options: object) -> str:
    with pytest.raises(Refused) as caught:
        inputs.read_input(path, what="--policy", **options)  # type: ignore[arg-type]
    [code] = caught.value.codes()
    assert f"--policy {path}" in str(caught.value)
    return code


def test_file_kinds_in_words() -> None:
    assert inputs.file_kind(stat.S_IFDIR) == "a directory"
    assert inputs.file_kind(stat.S_IFIFO) == "a FIFO"
    assert inputs.file_kind(stat.S_IFSOCK) == "a socket"
    assert inputs.file_kind(stat.S_IFCHR) == "a device"
    assert inputs.file_kind(stat.S_IFBLK) == "a device"
    assert inputs.file_kind(stat.S_IFLNK) == "a symbolic link"
    assert inputs.file_kind(stat.S_IFREG) == "not a regular file"


def test_read_input_limit_is_inclusive(tmp_path: Path) -> None:
    path = tmp_path / "p"
    path.write_bytes(b"x" * 10)
    assert inputs.read_input(path, limit=10, what="--policy") == b"x" * 10
    assert _input_code(path, limit=9) == "input.too-large"
    big = tmp_path / "big"
    big.write_bytes(b"y" * ((1 << 20) * 2 + 5))  # more than one read
    assert inputs.read_input(big, limit=(1 << 20) * 2 + 5, what="--policy") == big.read_bytes()


def test_read_input_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _input_code(fifo, limit=10) == "input.not-a-file"  # and does not block
    assert _input_code(tmp_path, limit=10) == "input.not-a-file"
    assert _input_code(Path("/dev/null"), limit=10) == "input.not-a-file"
    target = tmp_path / "target"
    target.write_bytes(b"t")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert inputs.read_input(link, limit=10, what="--policy") == b"t"
    fd, _info = inputs.open_regular(link, what="x")  # follows links unless told not to
    os.close(fd)
    assert _input_code(link, limit=10, follow_symlinks=False) == "input.not-a-file"
    assert _input_code(tmp_path / "missing", limit=10) == "input.unreadable"
    assert inputs.read_input(tmp_path / "missing", limit=10, what="x", missing_ok=True) is None
    assert _input_code(target / "below", limit=10) == "input.unreadable"  # ENOTDIR


def test_an_opened_input_blocks_again_and_is_closed_after(tmp_path: Path) -> None:
    path = tmp_path / "p"
    path.write_bytes(b"abcdef")
    with inputs.opened_input(path, what="x") as (fd, info):
        assert info.st_size == 6 and stat.S_ISREG(info.st_mode)
        assert not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK
        assert inputs.read_at(fd, 3, 2) == b"cde"
        assert inputs.read_fd(fd, limit=6, label="x") == b"abcdef"
    with pytest.raises(OSError, match="Bad file descriptor"):
        os.fstat(fd)
    with pytest.raises(Refused) as caught, inputs.opened_input(tmp_path / "missing", what="x"):
        pass
    assert caught.value.codes() == ["input.unreadable"]
    fd, _info = inputs.open_regular(path, what="x")
    try:
        with pytest.raises(Refused) as caught:
            inputs.read_fd(fd, limit=5, label="x")
        assert caught.value.codes() == ["input.too-large"]
    finally:
        os.close(fd)


def _toml_refusal(data: bytes, **options: object) -> Refused:
    with pytest.raises(Refused) as caught:
        tomlread.read_toml(data, source="p.toml", code=codes.POLICY_INVALID,
                           **options)  # type: ignore[arg-type]
    assert caught.value.codes() == ["policy.invalid"]
    return caught.value


def test_read_toml_limits_are_inclusive_and_refused_with_the_callers_code() -> None:
    assert tomlread.read_toml(b"a = 1     ", source="p", code=codes.POLICY_INVALID,
                              max_bytes=10) == {"a": 1}
    assert "11 bytes, limit 10" in str(_toml_refusal(b"a = 1      ", max_bytes=10))
    assert "invalid UTF-8 at byte 5" in str(_toml_refusal(b"a = '\xff'"))
    dots = b"a" + b".a" * tomlread.MAX_DOTS + b" = 1"
    assert tomlread.value_depth(tomlread.read_toml(
        dots, source="p", code=codes.POLICY_INVALID, max_depth=2000)) == tomlread.MAX_DOTS + 1
    assert f"{tomlread.MAX_DOTS + 1} dots" in str(_toml_refusal(b"a." + dots, max_depth=2000))


def test_read_toml_counts_brackets_outside_strings_and_comments() -> None:
    def ok(text: str, depth: int) -> object:
        return tomlread.read_toml(text.encode(), source="p", code=codes.POLICY_INVALID,
                                  max_depth=depth)

    assert ok("a = [[1]]", 2) == {"a": [[1]]}
    assert ok('a = "[[[[" # [[[[\nb = [1]', 1) == {"a": "[[[[", "b": [1]}
    assert ok("a = [1]\nb = [[2]]", 2) == {"a": [1], "b": [[2]]}  # a closed bracket counts off
    assert ok("a = {b = 1}", 1) == {"a": {"b": 1}}
    assert "nest deeper than 1" in str(_toml_refusal(b"a = [[1]]", max_depth=1))
    assert "nest deeper than 1" in str(_toml_refusal(b"a = {b = {c = 1}}", max_depth=1))
    assert "nest deeper than 2" in str(_toml_refusal(b"a = [[[1], [[2]]]]", max_depth=2))
    # a deep document the bracket scan cannot see: tomllib is never reached with it
    assert "nest deeper than" in str(_toml_refusal(b"[a.b.c]\nd = 1", max_depth=2))


def test_read_toml_syntax_error_points_at_its_line() -> None:
    refusal = _toml_refusal(b"a = 1\nb = \n", file="policy.toml")
    [finding] = refusal.findings
    assert (finding.file, finding.line) == ("policy.toml", 2)


def test_read_toml_parser_limits_are_refusals() -> None:
    refusal = _toml_refusal(b"a = " + b"1" * 5000)  # tomllib: ValueError past 4300 digits
    assert "p.toml: ValueError: Exceeds the limit" in str(refusal)


# --- verify/reading/archive_entries.py: what an entry may be, the same rules as a directory's
def _entry(name: str, *, size: int = 1, compressed: int | None = None,
           mode: int = stat.S_IFREG | 0o644) -> ArchiveEntry:
    return ArchiveEntry(name=name, raw_name=name.encode(), size=size,
                        compressed_size=size if compressed is None else compressed, method=8,
                        flags=0, crc=0, time=0, date=0, version_needed=20, mode=mode,
                        header_offset=0)


def _judged(entries: list[ArchiveEntry], archive_size: int = 1 << 40) -> tuple[
        list[str], list[str]]:
    findings = Findings()
    files = judge_entries(entries, archive_size, "a.zip", findings, unpacked=limits.bundle_tree())
    return sorted(files), [f.code.name for f in findings]


DIR = stat.S_IFDIR | 0o755


@pytest.mark.parametrize(("entries", "files", "codes_"), [
    ([_entry("a"), _entry("lib/b")], ["a", "lib/b"], []),
    ([_entry("a", mode=0)], ["a"], []),  # no mode recorded (a zip from another system)
    ([_entry("l", mode=stat.S_IFLNK | 0o777)], [], ["archive.link"]),
    ([_entry("l", mode=stat.S_IFLNK | 0o777), _entry("../x"), _entry("a")], ["a"],
     ["archive.link", "archive.traversal"]),  # each entry judged, whatever came before
    ([_entry("d/", size=0, mode=DIR), _entry("p", mode=stat.S_IFIFO | 0o644), _entry("a"),
      _entry("a"), _entry("d/z")], ["a", "d/z"], ["layout.file-type", "archive.duplicate"]),
    ([_entry("../x")], [], ["archive.traversal"]),
    ([_entry("./x")], [], ["archive.traversal"]),
    ([_entry("/x")], [], ["archive.absolute"]),
    ([_entry("c:x")], [], ["archive.absolute"]),
    ([_entry("a\\b")], [], ["archive.unsafe-name"]),
    ([_entry("a", mode=stat.S_IFREG | 0o4755)], ["a"], ["layout.mode"]),
    ([_entry("a", mode=stat.S_IFREG | 0o2755)], ["a"], ["layout.mode"]),
    ([_entry("a", mode=stat.S_IFREG | 0o646)], ["a"], ["layout.mode"]),
    ([_entry("a", mode=stat.S_IFREG | 0o664)], ["a"], []),
    ([_entry("d/", size=0, mode=DIR | 0o002), _entry("d/x")], ["d/x"], ["layout.mode"]),
    ([_entry("d/", size=0, mode=stat.S_IFREG | 0o644), _entry("d/x")], ["d/x"],
     ["archive.format"]),
    ([_entry("d/", size=0, mode=0), _entry("d/x")], ["d/x"], []),
    ([_entry("d/", size=1, mode=DIR), _entry("d/x")], ["d/x"], ["archive.format"]),
    ([_entry("d/", size=0, compressed=2, mode=DIR), _entry("d/x")], ["d/x"], []),
    ([_entry("d/", size=0, compressed=3, mode=DIR), _entry("d/x")], ["d/x"],
     ["archive.format"]),
    ([_entry("d/", size=0, mode=DIR), _entry("d/", size=0, mode=DIR), _entry("d/x")],
     ["d/x"], ["archive.duplicate"]),
    ([_entry("d/", size=0, mode=DIR)], [], ["layout.undeclared"]),
    ([_entry("d/e/", size=0, mode=DIR), _entry("d/e/f/x")], ["d/e/f/x"], []),
    ([_entry("D/", size=0, mode=DIR), _entry("d/x")], ["d/x"], []),
    ([_entry("d/", size=0, mode=DIR), _entry("d")], ["d"], ["archive.conflict"]),
    ([_entry("p", mode=stat.S_IFIFO | 0o644)], [], ["layout.file-type"]),
    ([_entry("a"), _entry("a")], ["a"], ["archive.duplicate"]),
    ([_entry("a"), _entry("A")], ["A", "a"], ["archive.duplicate"]),
    ([_entry("a"), _entry("a/b")], ["a", "a/b"], ["archive.duplicate"]),
])
def test_archive_entries(entries: list[ArchiveEntry], files: list[str],
                         codes_: list[str]) -> None:
    assert _judged(entries) == (files, codes_)


def test_archive_entry_limits_at_their_boundaries() -> None:
    most = limits.MAX_ENTRY_BYTES
    assert _judged([_entry("a", size=most)])[1] == []
    assert _judged([_entry("a", size=most + 1)])[1] == ["archive.limit"]
    floor = limits.RATIO_FLOOR
    assert _judged([_entry("a", size=floor, compressed=1)])[1] == []
    ratio = limits.MAX_RATIO
    assert _judged([_entry("a", size=floor + 1, compressed=(floor + 1) // ratio + 1)])[1] == []
    assert _judged([_entry("a", size=ratio * 2000, compressed=2000)])[1] == []
    assert _judged([_entry("a", size=ratio * 2000 + 1, compressed=2000)])[1] == [
        "archive.limit"]
    assert _judged([_entry("a", size=floor + 1, compressed=0)])[1] == ["archive.limit"]


def test_archive_total_limits_at_their_boundaries() -> None:
    eighth = limits.MAX_TOTAL_BYTES // 8
    assert 8 * eighth == limits.MAX_TOTAL_BYTES and eighth < limits.MAX_ENTRY_BYTES
    names = [str(n) for n in range(8)]
    assert _judged([_entry(n, size=eighth) for n in names])[1] == []
    assert _judged([*(_entry(n, size=eighth) for n in names), _entry("x")])[1] == [
        "archive.limit"]
    floor = limits.TOTAL_RATIO_FLOOR
    assert _judged([_entry("a", size=floor)], archive_size=1)[1] == []
    archive = floor // limits.MAX_TOTAL_RATIO + 1
    size = limits.MAX_TOTAL_RATIO * archive
    assert size > floor
    assert _judged([_entry("a", size=size)], archive_size=archive)[1] == []
    assert _judged([_entry("a", size=size + 1)], archive_size=archive)[1] == ["archive.limit"]


# --- verify/reading/archive_stream.py: one entry, inflated through its CRC, bounded by its sizes
def _stream_entry(tmp_path: Path, payload: bytes, *, deflate: bool, prefix: bytes = b"HDR",
                  size: int | None = None, crc: int | None = None,
                  extra: bytes = b"", compressed_size: int | None = None) -> tuple[
                      int, ArchiveEntry]:
    if deflate:
        packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
        data = packer.compress(payload) + packer.flush()
    else:
        data = payload
    data += extra
    path = tmp_path / "entries.bin"
    path.write_bytes(prefix + data + b"NEXT-ENTRY")
    entry = ArchiveEntry(
        name="lib/x.so", raw_name=b"lib/x.so", size=len(payload) if size is None else size,
        compressed_size=len(data) if compressed_size is None else compressed_size,
        method=8 if deflate else 0, flags=0,
        crc=zlib.crc32(payload) if crc is None else crc, time=0, date=0, version_needed=20,
        mode=0, header_offset=0, data_offset=len(prefix))
    return os.open(path, os.O_RDONLY), entry


def _drain(stream: ArchiveStream, size: int) -> bytes:
    out = b""
    while chunk := stream.read(size):
        out += chunk
    return out


PAYLOAD = bytes(range(256)) * 300 + b"tail"


@pytest.mark.slow
@pytest.mark.parametrize("deflate", [False, True])
@pytest.mark.parametrize("size", [1, 7, 4096, 1 << 20, 0, -1])
def test_archive_stream_reads_the_entry_exactly(tmp_path: Path, deflate: bool,
                                                size: int) -> None:
    fd, entry = _stream_entry(tmp_path, PAYLOAD, deflate=deflate)
    try:
        with ArchiveStream(fd, "a.zip", entry) as stream:
            chunks = []
            while chunk := stream.read(size):
                chunks.append(chunk)
            assert b"".join(chunks) == PAYLOAD
            assert stream.read() == b""
        assert stream.read() == b""  # closed
    finally:
        os.close(fd)
    if size <= 0:  # a whole chunk (1 MiB) at a time: the payload in one
        assert chunks == [PAYLOAD]
    else:  # never more than asked for; a stored entry exactly that, but its end
        assert all(len(chunk) <= size for chunk in chunks)
        if not deflate:
            assert all(len(chunk) == size for chunk in chunks[:-1])


def test_archive_stream_closed_before_reading_reads_nothing(tmp_path: Path) -> None:
    fd, entry = _stream_entry(tmp_path, PAYLOAD, deflate=True)
    try:
        stream = ArchiveStream(fd, "a.zip", entry)
        stream.close()
        assert stream.read() == b""
    finally:
        os.close(fd)


def test_archive_stream_of_an_empty_entry(tmp_path: Path) -> None:
    for deflate in (False, True):
        fd, entry = _stream_entry(tmp_path, b"", deflate=deflate)
        try:
            assert _drain(ArchiveStream(fd, "a.zip", entry), 10) == b""
        finally:
            os.close(fd)


@pytest.mark.parametrize(("deflate", "options", "code", "words"), [
    (False, {"crc": 1}, "archive.format", "bad CRC-32"),
    (True, {"crc": 1}, "archive.format", "bad CRC-32"),
    (False, {"size": len(PAYLOAD) - 1}, "archive.limit", "more bytes than declared"),
    (True, {"size": len(PAYLOAD) - 1}, "archive.limit", "more bytes than declared"),
    (False, {"size": len(PAYLOAD) + 1}, "archive.format", f"{len(PAYLOAD)} bytes, declared"),
    (True, {"size": len(PAYLOAD) + 1}, "archive.format", f"{len(PAYLOAD)} bytes, declared"),
    (True, {"extra": b"\x00"}, "archive.ambiguous", "after the end of the deflate stream"),
    (True, {"compressed_size": 40}, "archive.format", "bytes, declared"),
    (False, {"compressed_size": len(PAYLOAD) + 20, "size": len(PAYLOAD) + 20},
     "archive.format", "truncated entry data"),
])
def test_archive_stream_refusals(tmp_path: Path, deflate: bool, options: dict[str, Any],
                                 code: str, words: str) -> None:
    fd, entry = _stream_entry(tmp_path, PAYLOAD, deflate=deflate, **options)
    try:
        stream = ArchiveStream(fd, "a.zip", entry)
        with pytest.raises(Refused) as caught:
            _drain(stream, 1000)
        assert caught.value.codes() == [code]
        assert words in str(caught.value) and "a.zip: entry 'lib/x.so'" in str(caught.value)
        assert stream.read() == b""  # refused once, then done
    finally:
        os.close(fd)


def test_archive_stream_refuses_a_damaged_deflate_stream(tmp_path: Path) -> None:
    path = tmp_path / "bad.bin"
    path.write_bytes(b"\xff" * 64)
    entry = ArchiveEntry(name="x", raw_name=b"x", size=10, compressed_size=64, method=8,
                         flags=0, crc=0, time=0, date=0, version_needed=20, mode=0,
                         header_offset=0)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(Refused) as caught:
            _drain(ArchiveStream(fd, "a.zip", entry), 10)
        assert caught.value.codes() == ["archive.format"]
        assert "damaged deflate stream" in str(caught.value)
    finally:
        os.close(fd)


# --- verify/reading/open.py: a bundle is a directory or a .zip, nothing else is opened -------
def _zip(path: Path, entries: dict[str, tuple[bytes, int]]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, (data, mode) in entries.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system, info.external_attr = 3, (stat.S_IFREG | mode) << 16
            archive.writestr(info, data, compress_type=zipfile.ZIP_DEFLATED)
    return path


def test_an_archive_source_lists_sizes_and_the_owner_execute_bit(tmp_path: Path) -> None:
    path = _zip(tmp_path / "b.zip", {"bin/run": (b"#!", 0o744), "lib/x.so": (b"elf", 0o654),
                                     "plugin.json": (b"{}", 0o644)})
    source = open_bundle(path)
    try:
        assert isinstance(source, ArchiveSource) and source.label == "b.zip"
        assert {n: (f.size, f.executable) for n, f in source.files.items()} == {
            "bin/run": (2, True), "lib/x.so": (3, False), "plugin.json": (2, False)}
        assert all(file.path == name for name, file in source.files.items())
        with source.open("lib/x.so") as stream:
            assert stream.read() == b"elf"
        assert source.archive_digest().sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
        assert source.archive_digest().size == path.stat().st_size
    finally:
        source.close()


def test_open_bundle_refuses_what_is_not_a_bundle(tmp_path: Path) -> None:
    def refused(path: Path) -> str:
        with pytest.raises(Refused) as caught:
            open_bundle(path)
        [code] = caught.value.codes()
        assert str(path) in str(caught.value)
        return code

    assert isinstance(open_bundle(tmp_path), DirectorySource)
    assert refused(tmp_path / "missing") == "input.unreadable"
    (tmp_path / "file").write_bytes(b"x")
    assert refused(tmp_path / "file" / "below.zip") == "input.unreadable"  # ENOTDIR
    (tmp_path / "link.zip").symlink_to(_zip(tmp_path / "real.zip", {"a": (b"a", 0o644)}))
    assert refused(tmp_path / "link.zip") == "layout.symlink"
    os.mkfifo(tmp_path / "fifo.zip")
    assert refused(tmp_path / "fifo.zip") == "layout.not-a-bundle"
    _zip(tmp_path / "bundle.tar", {"a": (b"a", 0o644)})
    assert refused(tmp_path / "bundle.tar") == "layout.not-a-bundle"


def test_a_file_larger_than_its_fstat_size_is_refused_while_read() -> None:
    """/proc files are regular with st_size 0: only the count of bytes read can refuse them
    (as it refuses a file that grows while it is read)."""
    kallsyms = Path("/proc/kallsyms")
    if not kallsyms.is_file() or len(kallsyms.read_bytes()) < 3 << 20:
        pytest.skip("needs a /proc file of more than 3 MiB")
    limit = (3 << 20) // 2  # more than one read of 1 MiB
    refusal = _input_code(kallsyms, limit=limit)
    assert refusal == "input.too-large"


def test_a_read_error_is_unreadable() -> None:
    """/proc/self/mem is a regular file whose read at offset 0 fails (EIO)."""
    assert _input_code(Path("/proc/self/mem"), limit=10) == "input.unreadable"


def test_open_regular_relative_to_a_directory_descriptor(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"in the directory")
    directory = os.open(tmp_path, os.O_RDONLY)
    try:
        fd, _info = inputs.open_regular("f", what="x", dir_fd=directory)
        try:
            assert inputs.read_fd(fd, limit=100, label="x") == b"in the directory"
        finally:
            os.close(fd)
    finally:
        os.close(directory)
    (tmp_path / "file").write_bytes(b"x")
    assert _input_code(tmp_path / "file" / "below", limit=10,
                       follow_symlinks=False) == "input.unreadable"  # ENOTDIR, not a link


def test_archive_stream_refuses_a_deflate_stream_cut_before_its_end(tmp_path: Path) -> None:
    """All the declared bytes inflate, but the stream's final block is cut off."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    deflated = packer.compress(PAYLOAD) + packer.flush()
    fd, entry = _stream_entry(tmp_path, PAYLOAD, deflate=True,
                              compressed_size=len(deflated) - 1)
    try:
        with pytest.raises(Refused) as caught:
            _drain(ArchiveStream(fd, "a.zip", entry), 1 << 20)
        assert caught.value.codes() == ["archive.format"]
        assert "the deflate stream is truncated" in str(caught.value)
    finally:
        os.close(fd)


@pytest.mark.parametrize("size", [1000, 1 << 20])
def test_bytes_after_the_deflate_stream_are_refused_whatever_the_read_size(
        tmp_path: Path, size: int) -> None:
    fd, entry = _stream_entry(tmp_path, PAYLOAD, deflate=True, extra=b"\x00")
    try:
        with pytest.raises(Refused) as caught:
            _drain(ArchiveStream(fd, "a.zip", entry), size)
        assert caught.value.codes() == ["archive.ambiguous"]
    finally:
        os.close(fd)


def test_a_tools_number_is_kept_when_a_double_holds_it_and_refused_past_one() -> None:
    """`any_number` reads a finite float as it is written, and refuses one past a double's
    range (which float() would turn into an infinity) with json.nonfinite, naming it."""
    assert strictjson.read_json(b"[0.25, -3.5e10, 1.7976931348623157e308]", source="x",
                                any_number=True) == [0.25, -3.5e10, 1.7976931348623157e308]
    with pytest.raises(Refused) as caught:
        strictjson.read_json(b'{"timeout": 1e400}', source="hooks.json", any_number=True)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("json.nonfinite", "hooks.json: number 1e400 is beyond a double's range")]


# --- strict JSON: the edges the readers' own guards leave to Python ---------------------------
def test_a_negative_tool_integer_counts_its_digits_without_the_sign() -> None:
    at_limit = b"-" + b"9" * 4300
    assert strictjson.read_json(at_limit, source="t.json", any_number=True) == -int("9" * 4300)
    assert _json_code(b"-" + b"9" * 4301, any_number=True) == "json.integer-range"


def test_a_parser_recursion_past_a_callers_own_depth_is_a_syntax_refusal() -> None:
    """A caller may allow more depth than Python's parser can recurse: the RecursionError
    is still a refusal with the file named, never an escape."""
    deep = b"[" * 60_000 + b"]" * 60_000
    with pytest.raises(Refused) as caught:
        strictjson.read_json(deep, source="deep.json", max_depth=100_000)
    assert caught.value.codes() == ["json.syntax"]
    [finding] = caught.value.findings
    assert finding.message.startswith("deep.json: ") and len(finding.message) > len("deep.json: ")


# --- verify/reading/archive_stream.py: a seek lands on the right byte, from any resume point
def _seek_entry(tmp_path: Path, data: bytes, *, deflate: bool) -> tuple[int, ArchiveEntry]:
    return _stream_entry(tmp_path, data, deflate=deflate)


SEEKED = bytes(range(256)) * 40 + bytes(reversed(range(256))) * 40 + b"end"  # 20 KiB and 3


@pytest.mark.parametrize("deflate", [False, True])
@pytest.mark.parametrize("position", [0, 1, 2, 4095, 10_000, len(SEEKED) - 1, len(SEEKED)])
def test_a_fresh_stream_seeks_to_the_byte_and_reads_to_its_end(
        tmp_path: Path, deflate: bool, position: int) -> None:
    fd, entry = _seek_entry(tmp_path, SEEKED, deflate=deflate)
    try:
        with ArchiveStream(fd, "a.zip", entry) as stream:
            stream.seek(position)
            assert _drain(stream, 333) == SEEKED[position:]  # to its end, no refusal
    finally:
        os.close(fd)


def test_seeks_from_resume_points_read_the_right_bytes(tmp_path: Path) -> None:
    """A small spacing of points, so the entry has many: every position, below the first
    point, between two, on one and past the last, reads what lies there."""
    fd, entry = _seek_entry(tmp_path, SEEKED, deflate=True)
    index = ResumeIndex(every=2048, _next=2048)
    try:
        with ArchiveStream(fd, "a.zip", entry, index=index) as first:
            assert _drain(first, 500) == SEEKED
        produced = [point.produced for point in index.points]
        assert len(produced) >= 4
        positions = {0, 1, produced[0] - 1, produced[0], produced[0] + 1,
                     (produced[0] + produced[1]) // 2, produced[1], produced[-1],
                     produced[-1] + 7, len(SEEKED)}
        for position in sorted(positions):
            with ArchiveStream(fd, "a.zip", entry, index=index) as again:
                again.seek(position)
                assert _drain(again, 777) == SEEKED[position:], position
    finally:
        os.close(fd)


class _Inflater:
    def copy(self) -> _Inflater:
        return self


def test_the_resume_index_keeps_a_point_at_each_spacing_up_to_its_limit() -> None:
    index = ResumeIndex(every=10, _next=10)
    index.offer(9, 0, _Inflater())
    assert index.points == []
    index.offer(10, 5, _Inflater())  # exactly one spacing in
    assert [(p.produced, p.offset) for p in index.points] == [(10, 5)]
    for produced in range(20, 10 * ResumeIndex.MAX_POINTS + 1, 10):
        index.offer(produced, produced // 2, _Inflater())
    assert [p.produced for p in index.points] == list(
        range(10, 10 * ResumeIndex.MAX_POINTS + 1, 10))  # MAX_POINTS held, not thinned yet
    index.offer(10 * (ResumeIndex.MAX_POINTS + 1), 0, _Inflater())
    # one too many: every other one dropped, the spacing doubled, still from the start
    assert index.every == 20
    assert [p.produced for p in index.points] == list(
        range(20, 10 * ResumeIndex.MAX_POINTS + 1, 20))
    assert index.before(19) is None and index.before(20) is index.points[0]
    assert index.before(39) is index.points[0] and index.before(40) is index.points[1]


# --- verify/reading/archive_source.py: only the stream asked to be resumable keeps points ----
def test_an_archive_source_keeps_the_points_of_the_resumable_stream_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from horon_bundle.verify.reading import archive_stream  # noqa: PLC0415

    big = b"".join(hashlib.sha256(i.to_bytes(4, "big")).digest()[:6] * 5
                   for i in range(150_000))  # 4.5 MB, compressible, not trivially
    path = _zip(tmp_path / "b.zip", {"lib/x.so": (big, 0o644), "plugin.json": (b"{}", 0o644)})
    source = ArchiveSource(path)
    reads: list[int] = []
    original = inputs.read_at

    def counting(fd: int, length: int, offset: int) -> bytes:
        data = original(fd, length, offset)
        reads.append(len(data))
        return data

    monkeypatch.setattr(archive_stream, "read_at", counting)
    try:
        with source.open("lib/x.so", resumable=True) as first:
            assert _drain(first, 1 << 20) == big
        with source.open("plugin.json") as other:  # not resumable: the points stay
            assert other.read() == b"{}"
        compressed = source._archive.entries["lib/x.so"].compressed_size
        reads.clear()
        with source.open("lib/x.so") as again:
            again.seek(len(big) - 100)
            assert again.read(100) == big[-100:]
        assert sum(reads) < compressed / 2, (sum(reads), compressed)  # from the last point
    finally:
        source.close()


def test_json_nesting_past_the_parsers_own_guard_is_too_deep() -> None:
    """Well-formed nesting far past the limit reaches the C parser's recursion guard: still
    `json.too-deep`, never a traceback; a value nested just past the limit is walked."""
    deep = b"[" * 100_000 + b"]" * 100_000
    assert _json_code(deep, max_bytes=1 << 20) == "json.too-deep"
    assert _json_code(b'{"a": [{"b": [[]]}]}', max_depth=4) == "json.too-deep"
    assert strictjson.read_json(b'{"a": [{"b": []}]}', source="x", max_depth=4) == {
        "a": [{"b": []}]}
