"""The readers of untrusted bytes, rule by rule, in-process: each refusal at its boundary and
each acceptance just inside it, asserting the exact codes (what `nox -s mutants` judges the
readers' mutants with, besides their own test files)."""

from __future__ import annotations

import pytest

from horon_bundle.core import tomlread
from horon_bundle.core.errors import Refused
from horon_bundle.model import checksums

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
    ([], ["a", "b"], ["a"]),
])
def test_a_header_extends_the_enclosing_array_element(table: list[str], names: list[str],
                                                      parent: list[str]) -> None:
    assert tomlread._parent(table, names) == parent
