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
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.reading.archive_reader import validate_archive
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
    assert [f.message.split(": ")[:2] for f in caught.value.findings] == [
        ["short.zip", "entry 'plugin.json'"]]  # the archive and the entry named


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


# --- the reader's own parsing, field by field (what surviving mutants showed untested) ---------

_ZIP64_REFUSAL = ("archive.format", "z.zip: ZIP64 end records (bundle archives are below 2 GiB "
                                    "and 65,535 entries and never need ZIP64)")


def _findings(data: bytes, tmp_path: Path) -> list[tuple[str, str]]:
    """The (code, message) of every finding validate_archive refuses `data` with."""
    path = tmp_path / "z.zip"
    path.write_bytes(data)
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    return [(finding.code.name, finding.message) for finding in caught.value.findings]


def _accepted(data: bytes, tmp_path: Path) -> list[str]:
    """The entry names validate_archive reads from `data` (the reader closed again)."""
    path = tmp_path / "z.zip"
    path.write_bytes(data)
    reader = validate_archive(path)
    reader.close()
    return list(reader.entries)


def _zip_info(entries: list[tuple[zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, data in entries:
            archive.writestr(info, data)
    return buffer.getvalue()


def _info(name: str, *, extra: bytes = b"", comment: bytes = b"",
          method: int = zipfile.ZIP_DEFLATED) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = (stat.S_IFREG | 0o644) << 16
    info.compress_type = method
    info.extra = extra
    info.comment = comment
    return info


def _patch_end(data: bytes, offset: int, value: int, fmt: str = "<H") -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, len(out) - 22 + offset, value)
    return bytes(out)


def _patch_central(data: bytes, offset: int, value: int, fmt: str = "<H") -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, out.index(b"PK\x01\x02") + offset, value)
    return bytes(out)


def _empty_end_record(*, cd_size: int = 0, cd_offset: int = 0) -> bytes:
    return struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, 0, 0, cd_size, cd_offset, 0)


def test_an_end_record_alone_is_an_empty_archive(tmp_path: Path) -> None:
    """The smallest zip, 22 bytes (an end record at offset 0), reads as no entries; one byte
    less is not a zip."""
    assert _accepted(_empty_end_record(), tmp_path) == []
    assert _findings(_empty_end_record()[:21], tmp_path) == [
        ("archive.format", "z.zip: not a zip (21 bytes)")]


def test_a_one_byte_directory_is_read_and_refused(tmp_path: Path) -> None:
    """An end record counting no entries over a 1-byte central directory: that byte is read
    and is more than the records it counts."""
    data = b"\0" + _empty_end_record(cd_size=1)
    assert _findings(data, tmp_path) == [
        ("archive.ambiguous", "z.zip: the central directory holds 1 bytes beyond the 0 records "
                              "its end record counts")]


def test_the_archive_size_limit_is_exact(tmp_path: Path) -> None:
    """A (sparse) file of exactly the limit is read (and here has no end record); one byte more
    is refused by its size alone."""
    path = tmp_path / "z.zip"
    with path.open("wb") as handle:
        handle.truncate(limits.MAX_ARCHIVE_BYTES)
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("archive.format", "z.zip: not a zip (no end record)")]
    with path.open("r+b") as handle:
        handle.truncate(limits.MAX_ARCHIVE_BYTES + 1)
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("archive.limit", f"z.zip: {limits.MAX_ARCHIVE_BYTES + 1} bytes, limit "
                          f"{limits.MAX_ARCHIVE_BYTES}")]


def _with_zip64_locator(data: bytes) -> bytes:
    """A ZIP64 end locator right before the end record, counted in the central directory so
    that the directory still ends where the end record starts."""
    end = len(data) - 22
    out = data[:end] + b"PK\x06\x07" + bytes(16) + data[end:]
    cd_size = struct.unpack_from("<I", out, len(out) - 22 + 12)[0]
    return _patch_end(out, 12, cd_size + 20, "<I")


ZIP64_END: dict[str, Callable[[bytes], bytes]] = {
    "disk-0xFFFF": lambda data: _patch_end(data, 4, 0xFFFF),
    "central-directory-disk-0xFFFF": lambda data: _patch_end(data, 6, 0xFFFF),
    "0xFFFF-entries": lambda data: _patch_end(_patch_end(data, 8, 0xFFFF), 10, 0xFFFF),
    "directory-size-0xFFFFFFFF": lambda data: _patch_end(data, 12, 0xFFFFFFFF, "<I"),
    "directory-offset-0xFFFFFFFF": lambda data: _patch_end(data, 16, 0xFFFFFFFF, "<I"),
    "a-ZIP64-locator": _with_zip64_locator,
}


@pytest.mark.parametrize("case", sorted(ZIP64_END))
def test_zip64_end_records_are_refused(case: str, tmp_path: Path) -> None:
    """Each ZIP64 sentinel alone (or the locator alone) is a ZIP64 archive, refused as such."""
    data = ZIP64_END[case](_zip([("plugin.json", b"{}")]))
    assert _findings(data, tmp_path) == [_ZIP64_REFUSAL]


def test_the_entry_count_limit_is_exact(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(limits, "MAX_ENTRIES", 10)
    names = [f"f{i}" for i in range(11)]
    assert _accepted(_zip([(name, b"") for name in names[:10]]), tmp_path) == names[:10]
    assert _findings(_zip([(name, b"") for name in names]), tmp_path) == [
        ("archive.limit", "z.zip: 11 entries, limit 10")]


def test_the_central_directory_size_limit_is_exact(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    data = _zip([("plugin.json", b"{}"), ("LICENSE", b"x")])
    cd_size = struct.unpack_from("<I", data, len(data) - 22 + 12)[0]
    monkeypatch.setattr(limits, "MAX_CENTRAL_DIRECTORY_BYTES", cd_size)
    assert _accepted(data, tmp_path) == ["plugin.json", "LICENSE"]
    monkeypatch.setattr(limits, "MAX_CENTRAL_DIRECTORY_BYTES", cd_size - 1)
    assert _findings(data, tmp_path) == [
        ("archive.limit", f"z.zip: a {cd_size}-byte central directory, limit {cd_size - 1}")]


def test_an_entry_comment_is_refused_and_skipped(tmp_path: Path) -> None:
    """A comment is refused, and the next record is read after it (not from inside it)."""
    data = _zip_info([(_info("plugin.json", comment=b"a comment"), b"{}"),
                      (_info("LICENSE"), b"x")])
    assert _findings(data, tmp_path) == [
        ("archive.format", "z.zip: entry 'plugin.json': an entry comment: the format has none")]


def test_every_bad_name_is_reported_and_the_next_records_read(tmp_path: Path) -> None:
    """A NUL in a name (shown by its first 80 bytes) and a name past the limit: both reported,
    and the records after each are still judged."""
    long_name = "n" * (limits.MAX_NAME_BYTES + 1)
    data = _zip([("x" * 100, b"a"), (long_name, b"b"), ("plugin.json", b"{}")])
    first = data.index(b"PK\x01\x02") + 46  # the first record's name, in the directory only
    data = data[:first] + b"x" * 85 + b"\0" + b"x" * 14 + data[first + 100:]
    shown = b"x" * 80
    assert _findings(data, tmp_path) == [
        ("archive.unsafe-name", f"z.zip: central directory record 0: name {shown!r} holds a "
                                "NUL byte or bytes that are not ASCII (no UTF-8 flag)"),
        ("archive.limit", f"z.zip: entry {long_name!r}: name longer than "
                          f"{limits.MAX_NAME_BYTES} bytes")]


def test_a_name_of_exactly_the_limit_is_read(tmp_path: Path) -> None:
    name = "n" * limits.MAX_NAME_BYTES
    assert _accepted(_zip([(name, b"x")]), tmp_path) == [name]


def test_an_empty_name_is_judged_as_a_name(tmp_path: Path) -> None:
    """A last record of exactly 46 bytes (an empty name) ends the directory exactly: it is
    read, and its name refused."""
    assert _findings(_zip([("", b"")], method=zipfile.ZIP_STORED), tmp_path) == [
        ("archive.unsafe-name", "z.zip: entry '': empty path")]


def test_non_ascii_name_bytes_need_the_utf8_flag(tmp_path: Path) -> None:
    data = _zip([("caf\u00e9", b"x")])
    assert _accepted(data, tmp_path) == ["caf\u00e9"]
    out = bytearray(data)
    for signature, offset in ((b"PK\x03\x04", 6), (b"PK\x01\x02", 8)):
        index = out.index(signature) + offset
        struct.pack_into("<H", out, index, struct.unpack_from("<H", out, index)[0] & ~0x0800)
    assert _findings(bytes(out), tmp_path) == [
        ("archive.unsafe-name", "z.zip: central directory record 0: name b'caf\\xc3\\xa9' holds "
                                "a NUL byte or bytes that are not ASCII (no UTF-8 flag)")]


@pytest.mark.parametrize("bits", [0x0001, 0x0040, 0x0041])
def test_encryption_is_one_problem(bits: int, tmp_path: Path) -> None:
    """Encryption flags are refused as encryption, not also as unknown flags."""
    data = _set_flag_bits(_zip([("plugin.json", b"{}")]), bits)
    assert _findings(data, tmp_path) == [
        ("archive.format", "z.zip: entry 'plugin.json': encrypted")]


def test_deflate_option_flags_only_on_deflated_entries(tmp_path: Path) -> None:
    assert _accepted(_set_flag_bits(_zip([("plugin.json", b"{}")]), 0x0002), tmp_path) == [
        "plugin.json"]
    data = _set_flag_bits(_zip([("plugin.json", b"{}")], method=zipfile.ZIP_STORED), 0x0006)
    assert _findings(data, tmp_path) == [
        ("archive.format", "z.zip: entry 'plugin.json': deflate option flags on a stored entry")]


def test_the_version_needed_is_reported(tmp_path: Path) -> None:
    data = _patch_central(_zip([("plugin.json", b"{}")]), 6, 45)
    assert _findings(data, tmp_path) == [
        ("archive.format", "z.zip: entry 'plugin.json': needs zip version 4.5 (at most 2.0: "
                           "stored or deflate)")]


_ZIP64_FIELD = "a ZIP64 extra field (bundle entries are below 2 GiB and never need one)"
EXTRA_FIELDS: dict[str, tuple[bytes, str]] = {
    "ZIP64-field": (b"\x01\x00\x08\x00" + bytes(8), _ZIP64_FIELD),
    "ZIP64-field-second": (bytes(4) + b"\x01\x00\x08\x00" + bytes(8), _ZIP64_FIELD),
    "bare-ZIP64-id": (b"\x01\x00\x00\x00", _ZIP64_FIELD),
    "id-1-at-an-odd-offset": (b"\x00\x01\x00\x00\x00",
                              "an extra field (5 bytes): the format has none"),
    "a-stray-trailing-byte-1": (b"\x00\x00\x00\x00\x01",
                                "an extra field (5 bytes): the format has none"),
    "another-field": (b"UT\x05\x00\x01" + bytes(4),
                      "an extra field (9 bytes): the format has none"),
    "ZIP64-after-another": (b"UT\x05\x00\x01" + bytes(4) + b"\x01\x00\x08\x00" + bytes(8),
                            _ZIP64_FIELD),
}


@pytest.mark.parametrize("case", sorted(EXTRA_FIELDS))
def test_extra_fields_are_refused_by_kind(case: str, tmp_path: Path) -> None:
    """Each field of an extra field is read (id, data size, data): a ZIP64 one is named, and
    an id inside another field's data is not taken for one."""
    extra, problem = EXTRA_FIELDS[case]
    data = _zip_info([(_info("plugin.json", extra=extra), b"{}")])
    assert _findings(data, tmp_path) == [
        ("archive.format", f"z.zip: entry 'plugin.json': {problem}")]


def test_a_descriptor_read_cut_short_by_the_end_of_the_file(tmp_path: Path) -> None:
    """A compressed size that puts the data descriptor 5 bytes before the end of the file: the
    5 bytes there are all that is read, too few for a descriptor."""
    out = bytearray()

    class _Unseekable(io.RawIOBase):  # zipfile then writes a data descriptor after the data
        def writable(self) -> bool:
            return True

        def write(self, data: bytes) -> int:  # type: ignore[override]
            out.extend(data)
            return len(data)

    with zipfile.ZipFile(_Unseekable(), "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(_info("plugin.json"), b"{}")
    data = bytes(out)
    central = data.index(b"PK\x01\x02")
    crc, csize, usize = struct.unpack_from("<III", data, central + 16)
    data_offset = 30 + len("plugin.json")
    wide = len(data) - 5 - data_offset
    data = _patch_central(data, 20, wide, "<I")
    assert _findings(data, tmp_path) == [
        ("archive.ambiguous", "z.zip: entry 'plugin.json': local header and central directory "
                              f"disagree: data descriptor CRC-32 -1 != {crc}; data descriptor "
                              f"compressed size -1 != {wide}; data descriptor uncompressed size "
                              f"-1 != {usize}")]
    assert csize != wide


def test_the_digest_is_the_files(tmp_path: Path) -> None:
    """Without start_digest, or from what the entry streams read: the file's own SHA-256."""
    import hashlib  # noqa: PLC0415 - appended tests keep the file's imports as they are
    path = tmp_path / "z.zip"
    path.write_bytes(_zip([("plugin.json", b"{}"), ("LICENSE", b"x" * 3000)]))
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    reader = validate_archive(path)
    try:
        assert (reader.digest().sha256, reader.digest().size) == (expected, path.stat().st_size)
    finally:
        reader.close()
    reader = validate_archive(path)
    try:
        reader.start_digest()
        for name in reader.entries:
            with reader.open(name) as stream:
                while stream.read(1 << 16):
                    pass
        assert (reader.digest().sha256, reader.reread) == (expected, 0)
    finally:
        reader.close()


def test_close_closes_the_descriptor_once(tmp_path: Path) -> None:
    """The descriptor is closed; a second close does nothing (it closes no other descriptor,
    here stdout's number)."""
    import os  # noqa: PLC0415 - appended tests keep the file's imports as they are

    path = tmp_path / "z.zip"
    path.write_bytes(_zip([("plugin.json", b"{}")]))
    reader = validate_archive(path)
    fd = reader.fd
    saved = os.dup(1)
    try:
        reader.close()
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(fd)
        reader.close()
        os.fstat(1)
    finally:
        os.dup2(saved, 1)  # stdout back, whatever a wrong close did to it
        os.close(saved)


def test_close_closes_descriptor_zero(tmp_path: Path) -> None:
    """A process started with stdin closed gets the archive as descriptor 0: closed too."""
    import os  # noqa: PLC0415 - appended tests keep the file's imports as they are

    path = tmp_path / "z.zip"
    path.write_bytes(_zip([("plugin.json", b"{}")]))
    try:
        saved = os.dup(0)
    except OSError:  # stdin closed already
        saved = -1
    try:
        if saved >= 0:
            os.close(0)
        reader = validate_archive(path)
        assert reader.fd == 0
        reader.close()
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(0)
    finally:
        if saved >= 0:
            os.dup2(saved, 0)
            os.close(saved)
