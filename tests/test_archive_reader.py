"""Hostile archives: every unsafe entry refused before anything is read, nothing extracted."""

from __future__ import annotations

import io
import random
import stat
import struct
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.verify import limits
from horon_bundle.verify.archive_reader import validate_archive
from horon_bundle.verify.judge import verify_path
from tests.conftest import BuiltExample
from tests.helpers import assert_refused, cli, tree_snapshot


def _zip(entries: list[tuple[str, bytes]], *, mode: int = stat.S_IFREG | 0o644,
         method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about duplicate names; we want them
        with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in entries:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = mode << 16
                info.compress_type = method
                archive.writestr(info, data)
    return buffer.getvalue()


def _symlink_zip() -> bytes:
    return _zip([("plugin.json", b"{}"), ("lib/evil.so", b"/etc/passwd")],
                mode=stat.S_IFLNK | 0o777)


def _patch_central_name(data: bytes, old: bytes, new: bytes) -> bytes:
    """Rename an entry in the central directory only (local header keeps the old name)."""
    start = data.rindex(b"PK\x01\x02")
    head, tail = data[:start], data[start:]
    assert len(old) == len(new)
    return head + tail.replace(old, new, 1)


def _set_flag_bits(data: bytes, bits: int) -> bytes:
    """Set general-purpose flag bits in every local and central header."""
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        index = out.find(signature)
        while index != -1:
            flags = struct.unpack_from("<H", out, index + offset)[0]
            struct.pack_into("<H", out, index + offset, flags | bits)
            index = out.find(signature, index + 4)
    return bytes(out)


def _bad_crc() -> bytes:
    data = bytearray(_zip([("plugin.json", b"x" * 200)]))
    index = data.find(b"PK\x01\x02")
    struct.pack_into("<I", data, index + 16, 0xDEADBEEF)
    local = data.find(b"PK\x03\x04")
    struct.pack_into("<I", data, local + 14, 0xDEADBEEF)
    return bytes(data)


def _bzip2() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_BZIP2) as archive:
        archive.writestr("plugin.json", b"{}")
    return buffer.getvalue()


HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "parent traversal": (lambda: _zip([("../x", b"x")]), "archive.traversal"),
    "nested traversal": (lambda: _zip([("lib/../../x", b"x")]), "archive.traversal"),
    "absolute path": (lambda: _zip([("/etc/x", b"x")]), "archive.absolute"),
    "drive letter": (lambda: _zip([("C:/x", b"x")]), "archive.absolute"),
    "backslash": (lambda: _zip([("lib\\x.so", b"x")]), "archive.unsafe-name"),
    "reserved device name": (lambda: _zip([("CON", b"x")]), "archive.unsafe-name"),
    "duplicate names": (lambda: _zip([("plugin.json", b"a"), ("plugin.json", b"b")]),
                        "archive.duplicate"),
    "case-folded duplicates": (lambda: _zip([("LICENSE", b"a"), ("license", b"b")]),
                               "archive.duplicate"),
    "NFC/NFD twins": (lambda: _zip([("caf\u00e9", b"a"), ("cafe\u0301", b"b")]),
                      "archive.duplicate"),
    "symlink entry": (_symlink_zip, "archive.link"),
    "file and directory": (lambda: _zip([("lib", b"x"), ("lib/y.so", b"y")]),
                           "archive.duplicate"),
    "directory entry over a file": (lambda: _zip([("lib/", b""), ("lib", b"x")]),
                                    "archive.conflict"),
    "encrypted entry": (lambda: _set_flag_bits(_zip([("plugin.json", b"{}")]), 0x1),
                        "archive.format"),
    "unsupported compression": (_bzip2, "archive.format"),
    "bad CRC": (_bad_crc, "archive.format"),
    "prepended data": (lambda: b"MZ-prefix" + _zip([("plugin.json", b"{}")]),
                       "archive.ambiguous"),
    "trailing data": (lambda: _zip([("plugin.json", b"{}")]) + b"junk", "archive.ambiguous"),
    "two end records": (lambda: _zip([("a", b"PK\x05\x06" + b"\0" * 18)],
                                     method=zipfile.ZIP_STORED),
                        "archive.ambiguous"),
    "local and central names differ": (
        lambda: _patch_central_name(_zip([("plugin.json", b"{}")]), b"plugin.json",
                                    b"plugin.jsom"), "archive.ambiguous"),
    "not a zip": (lambda: b"hello world", "archive.format"),
    "truncated": (lambda: _zip([("plugin.json", b"{}" * 100)])[:-30], "archive.format"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_archive_refused(case: str, tmp_path: Path) -> None:
    make, code = HOSTILE[case]
    path = tmp_path / "evil.zip"
    path.write_bytes(make())
    before = tree_snapshot(tmp_path)
    report = verify_path(path)
    codes = [finding.code.name for finding in report.findings]
    assert code in codes, codes
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("case", ["parent traversal", "symlink entry", "duplicate names",
                                  "bad CRC"])
def test_hostile_archive_refused_by_the_cli(case: str, tmp_path: Path) -> None:
    make, code = HOSTILE[case]
    path = tmp_path / "evil.zip"
    path.write_bytes(make())
    before = tree_snapshot(tmp_path)
    assert_refused(cli("verify", path), code)
    assert tree_snapshot(tmp_path) == before
    assert not (tmp_path.parent / "x").exists()


def test_entry_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "many.zip"
    path.write_bytes(_zip([(f"f{i}", b"") for i in range(20)]))
    monkeypatch.setattr(limits, "MAX_ENTRIES", 10)
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    assert caught.value.codes() == ["archive.limit"]


def test_compression_bomb_ratio(tmp_path: Path) -> None:
    path = tmp_path / "bomb.zip"
    path.write_bytes(_zip([("plugin.json", b"\0" * (4 << 20))]))
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    assert "archive.limit" in caught.value.codes()


def test_entry_with_more_bytes_than_declared(tmp_path: Path) -> None:
    """Both headers agree on 10 bytes, the deflate stream holds 100: refused while streaming,
    after 10 + 1 bytes."""
    data = bytearray(_zip([("plugin.json", b"x" * 100)], mode=stat.S_IFREG | 0o644))
    struct.pack_into("<I", data, data.find(b"PK\x01\x02") + 24, 10)
    struct.pack_into("<I", data, data.find(b"PK\x03\x04") + 22, 10)
    path = tmp_path / "short.zip"
    path.write_bytes(bytes(data))
    reader = validate_archive(path)

    def drain() -> None:
        with reader.open("plugin.json") as stream:
            while stream.read(16):
                pass

    with pytest.raises(Refused) as caught:
        drain()
    reader.close()
    assert caught.value.codes() == ["archive.limit"]


def test_renamed_archive_still_verifies(example_release: BuiltExample, tmp_path: Path) -> None:
    copy = tmp_path / "renamed.zip"
    copy.write_bytes(example_release.archive.read_bytes())
    assert cli("verify", copy).status == 0


def test_archive_with_tampered_entry(example_release: BuiltExample, tmp_path: Path) -> None:
    source = zipfile.ZipFile(example_release.archive)
    path = tmp_path / "tampered.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "LICENSE":
                data = data.replace(b"Apache", b"Apachf", 1)
            target.writestr(info, data)
    source.close()
    assert_refused(cli("verify", path), "checksum.mismatch")


def test_corrupt_deflate_stream_is_a_format_refusal(example_release: BuiltExample,
                                                    tmp_path: Path) -> None:
    """zlib reports a damaged stream as zlib.error: it must become archive.format."""
    data = bytearray(example_release.archive.read_bytes())
    with zipfile.ZipFile(example_release.archive) as archive:
        info = archive.getinfo("lib/libhoron_example.so")
    start = info.header_offset + 30 + len(info.filename.encode())
    for offset in range(start + 100, start + 140):
        data[offset] ^= 0xFF
    path = tmp_path / "corrupt.zip"
    path.write_bytes(bytes(data))
    result = cli("verify", path)
    assert_refused(result, "archive.format")


def test_mutated_archives_never_escape_as_exceptions(example_release: BuiltExample,
                                                     tmp_path: Path) -> None:
    """A seeded fuzz of the real archive: every mutation is verified or refused, nothing else."""
    original = example_release.archive.read_bytes()
    rng = random.Random(20261129)  # noqa: S311 - a reproducible fuzz, not a secret
    path = tmp_path / "mutant.zip"
    refused = 0
    for _ in range(150):
        data = bytearray(original)
        for _ in range(rng.randint(1, 6)):
            region = rng.choice((range(0, 200), range(len(data) - 2000, len(data)),
                                 range(len(data))))
            data[rng.choice(region)] = rng.randrange(256)
        if rng.random() < 0.1:
            data = data[: rng.randrange(len(data))]
        path.write_bytes(bytes(data))
        report = verify_path(path)
        refused += not report.ok
    assert refused > 100
