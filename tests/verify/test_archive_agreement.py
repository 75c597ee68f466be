"""An archive says one thing: every field of every record is compared, every limit is checked
before the work it bounds, and a directory bundle obeys the same rules as an archive.

Each hostile archive is a one-field edit of a valid one (the valid one is checked to verify
as far as the reader goes), refused through the CLI with its code, exit 1, no traceback and
nothing written.
"""

from __future__ import annotations

import io
import stat
import struct
import subprocess
import sys
import time
import warnings
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.verify import limits
from horon_bundle.verify.judge import verify_path
from horon_bundle.verify.reading import archive_stream
from horon_bundle.verify.reading.archive_entries import ArchiveEntry
from horon_bundle.verify.reading.archive_reader import validate_archive
from tests.conftest import BuiltExample
from tests.helpers import assert_refused, cli, copy_bundle, tree_snapshot

REG = stat.S_IFREG | 0o644
# offsets of fields inside each record (APPNOTE 4.3.7, 4.3.12, 4.3.16)
LOCAL = {"flags": 6, "method": 8, "time": 10, "crc": 14, "csize": 18, "usize": 22}
CENTRAL = {"needed": 6, "flags": 8, "method": 10, "crc": 16, "csize": 20, "usize": 24,
           "disk": 34, "external": 38}
EOCD = {"disk": 4, "cd_disk": 6, "on_disk": 8, "total": 10, "comment": 20}
WIDTH = {"crc": 4, "csize": 4, "usize": 4, "external": 4}


def make_zip(entries: list[tuple[str, bytes]], *, mode: int = REG,
             method: int = zipfile.ZIP_DEFLATED, extra: bytes = b"",
             stream: io.RawIOBase | None = None, level: int | None = None) -> bytes:
    buffer = stream if stream is not None else io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with zipfile.ZipFile(buffer, "w", compression=method, compresslevel=level) as archive:
            for name, data in entries:
                info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
                info.create_system = 3
                info.external_attr = (stat.S_IFDIR | 0o755 if name.endswith("/") else mode) << 16
                info.compress_type = method
                info.extra = extra
                archive.writestr(info, data)
    if isinstance(buffer, io.BytesIO):
        return buffer.getvalue()
    return bytes(buffer.buf)  # type: ignore[attr-defined]


class _Unseekable(io.RawIOBase):
    """A write-only stream: zipfile then writes data descriptors after each entry."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def writable(self) -> bool:
        return True

    def write(self, data: bytes) -> int:  # type: ignore[override]
        self.buf += data
        return len(data)


def _set(data: bytes, signature: bytes, field: int, value: int, *, width: int = 2,
         index: int = 0) -> bytes:
    out = bytearray(data)
    offset = -1
    for _ in range(index + 1):
        offset = out.find(signature, offset + 1)
    assert offset >= 0
    struct.pack_into("<H" if width == 2 else "<I", out, offset + field, value)
    return bytes(out)


def local(field: str, value: int) -> Callable[[bytes], bytes]:
    return lambda d: _set(d, b"PK\x03\x04", LOCAL[field], value, width=WIDTH.get(field, 2))


def central(field: str, value: int) -> Callable[[bytes], bytes]:
    return lambda d: _set(d, b"PK\x01\x02", CENTRAL[field], value, width=WIDTH.get(field, 2))


def both(field: str, value: int) -> Callable[[bytes], bytes]:
    return lambda d: local(field, value)(central(field, value)(d))


def end(field: str, value: int) -> Callable[[bytes], bytes]:
    return lambda d: _set(d, b"PK\x05\x06", EOCD[field], value)


BASE = [("plugin.json", b'{"x": 1}' * 40), ("LICENSE", b"Apache License" * 20)]


def _descriptor_zip() -> bytes:
    return make_zip(BASE, stream=_Unseekable())


def _bad_descriptor() -> bytes:
    data = bytearray(_descriptor_zip())
    at = data.find(b"PK\x07\x08")
    struct.pack_into("<I", data, at + 4, 0x12345678)
    return bytes(data)


def _renamed(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    return lambda d: d.replace(old, new)


HOSTILE: dict[str, tuple[Callable[[], bytes], str]] = {
    "local CRC differs": (lambda: local("crc", 0xDEADBEEF)(make_zip(BASE)), "archive.ambiguous"),
    "local compressed size differs": (lambda: local("csize", 3)(make_zip(BASE)),
                                      "archive.ambiguous"),
    "local uncompressed size differs": (lambda: local("usize", 7)(make_zip(BASE)),
                                        "archive.ambiguous"),
    "local method differs": (lambda: local("method", 0)(make_zip(BASE)), "archive.ambiguous"),
    "local encryption bit only": (lambda: local("flags", 1)(make_zip(BASE)),
                                  "archive.ambiguous"),
    "local time differs": (lambda: local("time", 0x1234)(make_zip(BASE)), "archive.ambiguous"),
    "central encryption bit only": (lambda: central("flags", 1)(make_zip(BASE)),
                                    "archive.format"),
    "unknown flag bit": (lambda: both("flags", 0x10)(make_zip(BASE)), "archive.format"),
    "strong encryption bit": (lambda: both("flags", 0x40)(make_zip(BASE)), "archive.format"),
    "needs zip 4.5": (lambda: central("needed", 45)(make_zip(BASE)), "archive.format"),
    "data descriptor contradicts the directory": (_bad_descriptor, "archive.ambiguous"),
    "end record entry counts disagree": (lambda: end("on_disk", 1)(make_zip(BASE)),
                                         "archive.ambiguous"),
    "end record counts too few": (lambda: end("total", 1)(end("on_disk", 1)(make_zip(BASE))),
                                  "archive.ambiguous"),
    "end record counts too many": (lambda: end("total", 3)(end("on_disk", 3)(make_zip(BASE))),
                                   "archive.ambiguous"),
    "multi-disk: disk number": (lambda: end("disk", 1)(make_zip(BASE)), "archive.format"),
    "multi-disk: directory disk": (lambda: end("cd_disk", 1)(make_zip(BASE)),
                                   "archive.format"),
    "multi-disk: entry disk": (lambda: central("disk", 2)(make_zip(BASE)), "archive.format"),
    "comment claimed but absent": (lambda: end("comment", 5)(make_zip(BASE)),
                                   "archive.ambiguous"),
    "ZIP64 extra on a small entry": (
        lambda: make_zip(BASE, extra=struct.pack("<HHQQ", 1, 16, 320, 40)), "archive.format"),
    "another extra field": (lambda: make_zip(BASE, extra=struct.pack("<HHI", 0x5455, 4, 0)),
                            "archive.format"),
    "NUL in an entry name": (lambda: _renamed(b"LICENSE_.evil", b"LICENSE\0.evil")(
        make_zip([*BASE, ("LICENSE_.evil", b"x")])), "archive.unsafe-name"),
    "non-ASCII name without the UTF-8 flag": (lambda: _renamed(b"caf_", b"caf\xe9")(
        make_zip([*BASE, ("caf_", b"x")])), "archive.unsafe-name"),
    "a U+2028 in a name": (lambda: make_zip([*BASE, ("lib/a\u2028b.so", b"x")]),
                           "archive.unsafe-name"),
    "stored sizes differ": (lambda: both("csize", 5)(make_zip(BASE, method=zipfile.ZIP_STORED)),
                            "archive.format"),
    "empty directory entry": (lambda: make_zip([*BASE, ("empty/", b"")]), "layout.undeclared"),
    "world-writable directory entry": (
        lambda: _set(make_zip([*BASE, ("lib/", b""), ("lib/x.so", b"x")]), b"PK\x01\x02",
                     CENTRAL["external"], (stat.S_IFDIR | 0o777) << 16, width=4, index=2),
        "layout.mode"),
    "setuid entry": (lambda: make_zip(BASE, mode=stat.S_IFREG | 0o4755), "layout.mode"),
    "world-writable entry": (lambda: make_zip(BASE, mode=stat.S_IFREG | 0o666), "layout.mode"),
    "directory entry with content": (
        lambda: _set(_set(make_zip([*BASE, ("lib/", b""), ("lib/x.so", b"x")]), b"PK\x01\x02",
                          CENTRAL["usize"], 9, width=4, index=2),
                     b"PK\x03\x04", LOCAL["usize"], 9, width=4, index=2), "archive.format"),
    "gap between entries": (lambda: _set(make_zip(BASE), b"PK\x01\x02", 42, 1, width=4,
                                         index=1), "archive.ambiguous"),
}


def test_the_base_archives_are_valid(tmp_path: Path) -> None:
    for name, data in (("plain", make_zip(BASE)), ("descriptors", _descriptor_zip()),
                       ("stored", make_zip(BASE, method=zipfile.ZIP_STORED)),
                       ("directories", make_zip([*BASE, ("lib/", b""), ("lib/x.so", b"x")]))):
        path = tmp_path / f"{name}.zip"
        path.write_bytes(data)
        reader = validate_archive(path)
        with reader.open("plugin.json") as stream:
            assert stream.read(1 << 20) == BASE[0][1]
            assert stream.read() == b""
        reader.close()


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_every_disagreement_is_refused(case: str, tmp_path: Path) -> None:
    make, code = HOSTILE[case]
    path = tmp_path / "evil.zip"
    path.write_bytes(make())
    before = tree_snapshot(tmp_path)
    assert_refused(cli("verify", path), code)
    assert tree_snapshot(tmp_path) == before


def test_zipfile_reads_a_nul_name_as_another_file(tmp_path: Path) -> None:
    """Why the reader reads raw names: zipfile truncates at the NUL."""
    path = tmp_path / "nul.zip"
    path.write_bytes(HOSTILE["NUL in an entry name"][0]())
    with zipfile.ZipFile(path) as archive:
        assert [i.filename for i in archive.infolist()].count("LICENSE") == 2
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    assert caught.value.codes() == ["archive.unsafe-name"]
    assert "holds a NUL byte" in str(caught.value.findings[0].message)


def test_bytes_hidden_after_the_last_record(tmp_path: Path) -> None:
    """The end record counts every record, but the directory it describes is longer: the
    extra bytes (another tool's idea of a record) are refused."""
    data = make_zip(BASE)
    start = data.index(b"PK\x05\x06")
    size = struct.unpack_from("<I", data, start + 12)[0]
    padded = bytearray(data[:start] + b"PK\x01\x02 hidden record" + data[start:])
    struct.pack_into("<I", padded, start + 18 + 12, size + 18)
    path = tmp_path / "hidden.zip"
    path.write_bytes(bytes(padded))
    result = cli("verify", path)
    assert_refused(result, "archive.ambiguous")
    assert "18 bytes beyond the 2 records its end record counts" in result.stderr


def test_deflate_stream_ending_inside_the_entry(tmp_path: Path) -> None:
    """Compressed size claims two more bytes than the deflate stream uses (both headers
    agree): refused when streamed, not silently accepted."""
    data = make_zip([("plugin.json", b"x" * 100)])
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        size = archive.infolist()[0].compress_size
    tail = data.index(b"PK\x01\x02")
    padded = data[:tail] + b"\0\0" + data[tail:]
    padded = both("csize", size + 2)(padded)
    padded = _set(padded, b"PK\x05\x06", 16, tail + 2, width=4)
    path = tmp_path / "padded.zip"
    path.write_bytes(padded)
    reader = validate_archive(path)

    def drain() -> None:
        with reader.open("plugin.json") as stream:
            while stream.read(16):
                pass

    with pytest.raises(Refused) as caught:
        drain()
    reader.close()
    assert caught.value.codes() == ["archive.ambiguous"]


def _many_entries(count: int) -> bytes:
    """`count` empty stored entries, written by hand (zipfile is slow at this size)."""
    out = io.BytesIO()
    records = []
    for index in range(count):
        name = f"f{index}".encode()
        offset = out.tell()
        out.write(struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, 0, 0, 0, 0x21, 0, 0, 0,
                              len(name), 0) + name)
        records.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x314, 20, 0, 0, 0,
                                   0x21, 0, 0, 0, len(name), 0, 0, 0, 0, REG << 16,
                                   offset) + name)
    directory = b"".join(records)
    start = out.tell()
    out.write(directory)
    out.write(struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, count, count, len(directory),
                          start, 0))
    return out.getvalue()


# VmHWM (peak RSS of this process image) rather than ru_maxrss, which Linux carries over
# exec from the forking parent (here a large pytest process)
_MEASURE = ("import sys, time; from pathlib import Path\n"
            "from horon_bundle.verify.judge import verify_path\n"
            "start = time.monotonic(); report = verify_path(Path(sys.argv[1]))\n"
            "peak = [l.split()[1] for l in open('/proc/self/status') if l.startswith('VmHWM')]\n"
            "print(time.monotonic() - start, peak[0], "
            "sorted({f.code.name for f in report.findings}))\n")


@pytest.mark.process
def test_entry_count_refused_from_the_end_record_before_parsing(tmp_path: Path) -> None:
    """60,000 records: refused from the end record's count alone, in flat time and memory."""
    path = tmp_path / "many.zip"
    path.write_bytes(_many_entries(60_000))
    before = tree_snapshot(tmp_path)
    assert_refused(cli("verify", path), "archive.limit")
    done = subprocess.run([sys.executable, "-c", _MEASURE, str(path)], capture_output=True,
                          text=True, check=True, timeout=120)
    seconds, peak_kb, found = done.stdout.split(" ", 2)
    assert found.strip() == "['archive.limit']"
    assert float(seconds) < 0.5
    assert int(peak_kb) < 100_000
    assert tree_snapshot(tmp_path) == before


def test_a_lying_entry_count_is_not_trusted(tmp_path: Path) -> None:
    """The end record says 9,000 entries (within the limit) for a one-entry directory."""
    path = tmp_path / "lying.zip"
    path.write_bytes(end("total", 9000)(end("on_disk", 9000)(make_zip(BASE[:1]))))
    assert_refused(cli("verify", path), "archive.ambiguous")


@pytest.mark.slow
def test_a_bomb_is_refused_before_anything_is_inflated(tmp_path: Path) -> None:
    """300 zero-filled 1 MiB entries (each under the per-entry ratio floor): the total ratio
    over the archive's size refuses them from the central directory alone."""
    path = tmp_path / "bomb.zip"
    path.write_bytes(make_zip([(f"z{i:03d}", b"\0" * (1 << 20)) for i in range(300)], level=1))
    start = time.monotonic()
    result = cli("verify", path)
    assert_refused(result, "archive.limit")
    assert "ratio over 100" in result.stderr
    assert time.monotonic() - start < 30


def test_undeclared_entries_are_never_inflated(example_release: BuiltExample, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """50 undeclared zero-filled MiB entries beside a real bundle: refused by name, and not
    one of their bytes is inflated or hashed."""
    with zipfile.ZipFile(example_release.archive) as source:
        entries = [(i.filename, source.read(i)) for i in source.infolist()]
    junk = [(f"junk/{i:02d}", b"\0" * (1 << 20)) for i in range(50)]
    path = tmp_path / "padded.zip"
    path.write_bytes(make_zip(entries + junk, level=1))
    opened: list[str] = []
    original = archive_stream.ArchiveStream.__init__

    def spy(self: archive_stream.ArchiveStream, fd: int, label: str,
            entry: ArchiveEntry, **options: Any) -> None:
        opened.append(entry.name)
        original(self, fd, label, entry, **options)

    monkeypatch.setattr(archive_stream.ArchiveStream, "__init__", spy)
    report = verify_path(path)
    assert {f.code.name for f in report.findings} == {"layout.undeclared", "checksum.unlisted"}
    assert opened and not [name for name in opened if name.startswith("junk/")]
    assert_refused(cli("verify", path), "layout.undeclared")


def test_limits_are_far_above_a_real_bundle(example_release: BuiltExample) -> None:
    with zipfile.ZipFile(example_release.archive) as archive:
        infos = archive.infolist()
    assert len(infos) < limits.MAX_ENTRIES // 100
    assert sum(i.file_size for i in infos) < limits.TOTAL_RATIO_FLOOR


# --- a directory bundle obeys the same rules -------------------------------------------------
def test_a_world_writable_directory_in_a_bundle(example_release: BuiltExample,
                                                tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "lib").chmod(0o777)
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "layout.mode")
    assert "directory 'lib' has mode 777" in result.stderr
    assert tree_snapshot(tmp_path) == before


def test_a_setgid_bundle_directory(example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    bundle.chmod(0o2755)
    assert_refused(cli("verify", bundle), "layout.mode")


def test_an_empty_directory_is_one_rule_for_both_forms(example_release: BuiltExample,
                                                       tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    (bundle / "empty").mkdir()
    assert_refused(cli("verify", bundle), "layout.undeclared")
    with zipfile.ZipFile(example_release.archive) as source:
        entries = [(i.filename, source.read(i)) for i in source.infolist()]
    archive = tmp_path / "with-empty.zip"
    archive.write_bytes(make_zip([*entries, ("empty/", b"")]))
    assert_refused(cli("verify", archive), "layout.undeclared")


# --- the reader itself: offsets, descriptors and tiling, read from hand-built archives -------
import hashlib  # noqa: E402
import zlib  # noqa: E402

TIME = 0x5A3C  # 11:17:56 (any time: compared between the two headers and kept)
DOS_DATE = 0x21  # 1980-01-01


def _hand_zip(files: list[tuple[str, bytes, str]], *, prefix: bytes = b"",
              after: dict[str, bytes] | None = None,
              local_extra: dict[str, bytes] | None = None) -> bytes:
    """Deflated entries written byte by byte. `files`: (name, data, descriptor) with
    descriptor "" (none), "signed" or "unsigned" (a descriptor without its optional
    signature); `prefix`: bytes before the first entry (the offsets count them); `after`:
    bytes after an entry; `local_extra`: an extra field in an entry's local header only."""
    out = bytearray(prefix)
    records = []
    for name, data, descriptor in files:
        raw = name.encode()
        packer = zlib.compressobj(9, zlib.DEFLATED, -15)
        packed = packer.compress(data) + packer.flush()
        crc = zlib.crc32(data)
        flags = 0x08 if descriptor else 0
        extra = (local_extra or {}).get(name, b"")
        offset = len(out)
        values = (0, 0, 0) if descriptor else (crc, len(packed), len(data))
        out += struct.pack("<4sHHHHHIIIHH", b"PK\x03\x04", 20, flags, 8, TIME, DOS_DATE,
                           *values, len(raw), len(extra)) + raw + extra + packed
        if descriptor:
            out += b"PK\x07\x08" if descriptor == "signed" else b""
            out += struct.pack("<III", crc, len(packed), len(data))
        out += (after or {}).get(name, b"")
        records.append(struct.pack("<4sHHHHHHIIIHHHHHII", b"PK\x01\x02", 0x314, 20, flags, 8,
                                   TIME, DOS_DATE, crc, len(packed), len(data), len(raw), 0, 0,
                                   0, 0, REG << 16, offset) + raw)
    directory = b"".join(records)
    start = len(out)
    out += directory + struct.pack("<4sHHHHIIH", b"PK\x05\x06", 0, 0, len(files), len(files),
                                   len(directory), start, 0)
    return bytes(out)


def _refusal(data: bytes, tmp_path: Path) -> list[tuple[str, str]]:
    path = tmp_path / "x.zip"
    path.write_bytes(data)
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    return [(f.code.name, f.message) for f in caught.value.findings]


def _sizes(data: bytes) -> tuple[int, int, int]:
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    return zlib.crc32(data), len(packer.compress(data) + packer.flush()), len(data)


DESCRIBED = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, "signed"),
             ("c.txt", b"third " * 70, "unsigned"), ("d.txt", b"fourth " * 80, "")]


def test_entries_are_read_with_their_offsets_headers_and_descriptors(tmp_path: Path) -> None:
    """Plain entries and entries followed by a data descriptor with and without its
    signature (neither the first): every field of every entry as its records say, the
    local header and descriptor bytes as validated, and a digest of the very bytes judged."""
    data = _hand_zip(DESCRIBED)
    path = tmp_path / "described.zip"
    path.write_bytes(data)
    with zipfile.ZipFile(path) as archive:  # another parser's offsets
        offsets = [info.header_offset for info in archive.infolist()]
    expected = {}
    for (name, content, descriptor), offset in zip(DESCRIBED, offsets, strict=True):
        crc, packed, size = _sizes(content)
        data_offset = offset + 30 + len(name)
        described = {"": b"", "signed": b"PK\x07\x08", "unsigned": b""}[descriptor]
        if descriptor:
            described += struct.pack("<III", crc, packed, size)
        assert data[data_offset + packed:].startswith(described)
        expected[name] = ArchiveEntry(
            name=name, raw_name=name.encode(), size=size, compressed_size=packed, method=8,
            flags=0x08 if descriptor else 0, crc=crc, time=TIME, date=DOS_DATE,
            version_needed=20, mode=REG, header_offset=offset, data_offset=data_offset,
            local_header=data[offset:data_offset], descriptor=described)
    reader = validate_archive(path)
    try:
        assert reader.label == "described.zip"
        assert reader.size == len(data)
        assert reader.entries == expected
        reader.start_digest()
        for name, content, _descriptor in DESCRIBED:
            read = b""
            with reader.open(name) as stream:
                while chunk := stream.read(100):
                    read += chunk
            assert read == content
        digest = reader.digest()
        assert (digest.sha256, digest.size) == (hashlib.sha256(data).hexdigest(), len(data))
        assert reader.reread == 0  # framing and trailer came from what was validated
    finally:
        reader.close()


@pytest.mark.parametrize("descriptor", ["signed", "unsigned"])
def test_a_descriptor_is_checked_against_the_directory(descriptor: str,
                                                       tmp_path: Path) -> None:
    """The second entry's descriptor (with or without its signature) states another CRC;
    then also another time in its local header: both disagreements are named."""
    files = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, descriptor)]
    data = _hand_zip(files)
    crc, packed, size = _sizes(files[1][1])
    at = data.index(struct.pack("<III", crc, packed, size), data.index(b"PK\x03\x04", 1))
    lying = bytearray(data)
    struct.pack_into("<I", lying, at, 0x12345678)
    where = "x.zip: entry 'b.txt': local header and central directory disagree: "
    assert _refusal(bytes(lying), tmp_path) == [
        ("archive.ambiguous", f"{where}data descriptor CRC-32 {0x12345678} != {crc}")]
    late = _set(bytes(lying), b"PK\x03\x04", LOCAL["time"], TIME + 1, index=1)
    assert _refusal(late, tmp_path) == [
        ("archive.ambiguous", f"{where}time {TIME + 1} != {TIME}; "
                              f"data descriptor CRC-32 {0x12345678} != {crc}")]


def test_local_sizes_are_zero_only_with_a_descriptor(tmp_path: Path) -> None:
    """Zeros in the local header stand for the values only when a descriptor follows; with a
    descriptor, sizes that are there must still agree."""
    files = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, "signed")]
    crc, packed, size = _sizes(files[0][1])
    zeros = _hand_zip(files)
    for field in ("crc", "csize", "usize"):
        zeros = local(field, 0)(zeros)
    assert _refusal(zeros, tmp_path) == [
        ("archive.ambiguous", "x.zip: entry 'a.txt': local header and central directory "
                              f"disagree: CRC-32 0 != {crc}; compressed size 0 != {packed}; "
                              f"uncompressed size 0 != {size}")]
    crc, packed, size = _sizes(files[1][1])
    sized = _set(_hand_zip(files), b"PK\x03\x04", LOCAL["csize"], 7, width=4, index=1)
    assert _refusal(sized, tmp_path) == [
        ("archive.ambiguous", "x.zip: entry 'b.txt': local header and central directory "
                              f"disagree: CRC-32 0 != {crc}; compressed size 7 != {packed}; "
                              f"uncompressed size 0 != {size}")]


def test_a_descriptor_past_the_end_of_the_file(tmp_path: Path) -> None:
    """The directory says the last entry's data runs past the file: no descriptor can be
    read there, and none of its values is taken for one."""
    files = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, "signed")]
    data = _hand_zip(files)
    crc, _packed, _size = _sizes(files[1][1])
    huge = _set(_set(data, b"PK\x01\x02", CENTRAL["csize"], 10**6, width=4, index=1),
                b"PK\x01\x02", CENTRAL["usize"], 10**6, width=4, index=1)
    assert _refusal(huge, tmp_path) == [
        ("archive.ambiguous", "x.zip: entry 'b.txt': local header and central directory "
                              f"disagree: data descriptor CRC-32 -1 != {crc}; data descriptor "
                              f"compressed size -1 != {10**6}; data descriptor uncompressed "
                              f"size -1 != {10**6}")]


def test_a_local_extra_field_is_named_alone(tmp_path: Path) -> None:
    """An extra field only in the local header of an entry with a descriptor: the data (and
    so the descriptor) start after it, and the one disagreement is the extra field."""
    files = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, "signed")]
    data = _hand_zip(files, local_extra={"b.txt": struct.pack("<HH", 0x5455, 0)})
    assert _refusal(data, tmp_path) == [
        ("archive.ambiguous", "x.zip: entry 'b.txt': local header and central directory "
                              "disagree: extra field length 4 != 0")]


def test_a_long_name_that_differs_is_shown_cut(tmp_path: Path) -> None:
    name = "n" * 100
    data = _hand_zip([(name, b"x", "")])
    other = data.replace(name.encode(), b"m" * 100, 1)
    assert _refusal(other, tmp_path) == [
        ("archive.ambiguous", f"x.zip: entry {name!r}: local header and central directory "
                              f"disagree: local header names {b'm' * 80!r}")]


def test_entries_must_tile_the_file(tmp_path: Path) -> None:
    files = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, "unsigned")]
    assert _refusal(_hand_zip(files, prefix=b"\0" * 8), tmp_path) == [
        ("archive.ambiguous", "x.zip: entry 'a.txt': prepended data at offset 0")]
    gap = _hand_zip(files, after={"a.txt": b"\0" * 3})
    gap_at = gap.index(b"PK\x03\x04", 1) - 3
    assert _refusal(gap, tmp_path) == [
        ("archive.ambiguous", f"x.zip: entry 'b.txt': a gap or overlap at offset {gap_at}")]
    assert _refusal(_hand_zip(files, after={"b.txt": b"\0" * 3}), tmp_path) == [
        ("archive.ambiguous", "x.zip: 3 bytes between the last entry and the central "
                              "directory")]


@pytest.mark.parametrize("left", [10, 30])
def test_a_local_header_at_the_very_end(left: int, tmp_path: Path) -> None:
    """The first entry claims data that ends `left` bytes before the end of the file, where
    the directory places the second entry's local header: fewer bytes than a local header
    are truncated; a full header's worth that is no local header has no signature."""
    files = [("a.txt", b"first " * 50, ""), ("b.txt", b"second " * 60, "")]
    data = _hand_zip(files)
    csize = len(data) - left - (30 + len("a.txt"))
    for field in ("csize", "usize"):
        data = _set(data, b"PK\x03\x04", LOCAL[field], csize, width=4)
        data = _set(data, b"PK\x01\x02", CENTRAL[field], csize, width=4)
    data = _set(data, b"PK\x01\x02", 42, len(data) - left, width=4, index=1)
    problem = "truncated local header" if left < 30 else "no local header at its offset"
    code = "archive.format" if left < 30 else "archive.ambiguous"
    assert _refusal(data, tmp_path) == [(code, f"x.zip: entry 'b.txt': {problem}")]


def test_every_stage_names_the_archive(tmp_path: Path) -> None:
    """The end record, the central directory, the local headers and the entries' judgement
    each name the archive in their refusals."""
    assert _refusal(end("comment", 5)(make_zip(BASE)), tmp_path) == [
        ("archive.ambiguous", "x.zip: the end record claims a 5-byte comment that is not "
                              "there")]
    assert _refusal(central("disk", 2)(make_zip(BASE[:1])), tmp_path) == [
        ("archive.format", "x.zip: entry 'plugin.json': starts on disk 2 (multi-disk "
                           "archives are refused)")]
    assert _refusal(local("time", 0x1234)(make_zip(BASE[:1])), tmp_path) == [
        ("archive.ambiguous", "x.zip: entry 'plugin.json': local header and central "
                              f"directory disagree: time {0x1234} != 0")]
    assert _refusal(make_zip(BASE[:1], mode=stat.S_IFREG | 0o4755), tmp_path) == [
        ("layout.mode", "x.zip: entry 'plugin.json': mode 4755")]


def test_a_missing_or_linked_archive(tmp_path: Path) -> None:
    missing = tmp_path / "missing.zip"
    with pytest.raises(Refused) as caught:
        validate_archive(missing)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("input.unreadable", f"{missing}: no such file")]
    target = tmp_path / "real.zip"
    target.write_bytes(make_zip(BASE))
    link = tmp_path / "link.zip"
    link.symlink_to(target)
    with pytest.raises(Refused) as caught:
        validate_archive(link)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("input.not-a-file", f"archive {link}: a symbolic link")]


_UNREADABLE = Path("/sys/devices/virtual/net/lo/speed")  # a regular file whose read fails


def _read_fails(path: Path) -> bool:
    try:
        path.read_bytes()
    except OSError:
        return True
    return False


@pytest.mark.skipif(not _read_fails(_UNREADABLE), reason="needs Linux sysfs with a loopback")
def test_a_read_error_is_a_refusal() -> None:
    """A regular file (4096 bytes by fstat) whose read fails with EINVAL: refused, not a
    traceback."""
    with pytest.raises(Refused) as caught:
        validate_archive(_UNREADABLE)
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("archive.format", "speed: Invalid argument")]
