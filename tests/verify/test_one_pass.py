"""One pass per byte: the archive digest from the bytes verify judged, and an archive entry
that can be re-read from the middle without inflating it again from its first byte."""

from __future__ import annotations

import hashlib
import os
import random
import zipfile
import zlib
from pathlib import Path

import pytest

from horon_bundle.abi.section import StreamWindows, WindowedAccess
from horon_bundle.core.hashing import hash_stream
from horon_bundle.core.inputs import read_at
from horon_bundle.publish.preflight import check_archive
from horon_bundle.verify.judge import verify_opened, verify_path
from horon_bundle.verify.reading import archive_end, archive_hasher, archive_stream
from horon_bundle.verify.reading.archive_reader import validate_archive
from horon_bundle.verify.reading.archive_source import ArchiveSource
from horon_bundle.verify.reading.archive_stream import ResumeIndex
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.report import VerifyReport
from tests.conftest import BuiltExample
from tests.verify.test_archive_agreement import _Unseekable, make_zip

MIB = 1 << 20


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every pread the archive reader, its streams and its hasher make: bytes per call."""
    reads: list[int] = []
    original = read_at

    def counting(fd: int, length: int, offset: int) -> bytes:
        data = original(fd, length, offset)
        reads.append(len(data))
        return data

    for module in (archive_end, archive_stream, archive_hasher):
        monkeypatch.setattr(module, "read_at", counting)
    return reads


def test_verify_hashes_the_archive_from_the_bytes_it_judged(
        example_release: BuiltExample, monkeypatch: pytest.MonkeyPatch) -> None:
    """The digest a signature or a publication is checked against is the file's, and every
    byte of the archive was read exactly once to get it and the verdict."""
    path = example_release.archive
    reads = _count_reads(monkeypatch)
    with open_bundle(path) as source:
        assert isinstance(source, ArchiveSource)
        report = verify_opened(source, VerifyReport(path=str(path)), archive_digest=True)
        assert source.digest_reread == 0
    assert report.ok, report.findings
    assert report.archive_digest is not None
    assert report.archive_digest.sha256 == _sha256(path)
    assert report.archive_digest.size == path.stat().st_size
    # the end record's tail is read to find it, the headers to validate them: the rest once
    assert sum(reads) < path.stat().st_size + 70_000 + 100 * len(source.files)


def test_without_the_digest_asked_for_nothing_is_hashed_twice(
        example_release: BuiltExample, monkeypatch: pytest.MonkeyPatch) -> None:
    hashed: list[int] = []
    real = archive_hasher.ArchiveHasher._feed

    def feed(self: archive_hasher.ArchiveHasher, data: bytes | memoryview) -> None:
        hashed.append(len(data))
        real(self, data)

    monkeypatch.setattr(archive_hasher.ArchiveHasher, "_feed", feed)
    report = verify_path(example_release.archive)
    assert report.ok and report.archive_digest is None and not hashed


@pytest.mark.parametrize("seed", range(6))
def test_the_digest_is_right_in_any_reading_order(tmp_path: Path, seed: int) -> None:
    """Entries read out of file order, twice, partly or not at all, stored or deflated, with
    or without data descriptors: the digest is always the file's."""
    rng = random.Random(seed)  # noqa: S311 - test data, not secrets
    entries = [(f"f{i:02d}", rng.randbytes(rng.choice([0, 1, 300, 70_000, 1_500_000])))
               for i in range(12)]
    method = zipfile.ZIP_STORED if seed % 2 else zipfile.ZIP_DEFLATED
    stream = _Unseekable() if seed % 3 == 0 else None
    path = tmp_path / "a.zip"
    path.write_bytes(make_zip(entries, method=method, stream=stream))
    reader = validate_archive(path)
    try:
        reader.start_digest()
        names = list(reader.entries)
        rng.shuffle(names)
        for name in names[: rng.randint(0, len(names))]:
            with reader.open(name) as entry:
                if rng.random() < 0.3:
                    entry.read(rng.randint(1, 5000))  # a part only
                else:
                    hash_stream(entry)  # type: ignore[arg-type]
        assert reader.digest().sha256 == _sha256(path)
    finally:
        reader.close()


@pytest.mark.parametrize(("order", "size"), [("forwards", 3 * MIB), ("backwards", 200_000)])
def test_entries_read_once_need_no_second_read(tmp_path: Path, order: str, size: int) -> None:
    """In file order (here 15 MiB, past the held budget), or backwards within the budget
    (each piece held until its turn): every byte hashed is a byte a stream read."""
    path = tmp_path / "a.zip"
    path.write_bytes(make_zip([(f"f{i}", os.urandom(size)) for i in range(5)],
                              stream=_Unseekable()))  # data descriptors too
    reader = validate_archive(path)
    try:
        reader.start_digest()
        names = sorted(reader.entries, key=lambda n: reader.entries[n].header_offset)
        for name in names if order == "forwards" else names[::-1]:
            with reader.open(name) as entry:
                hash_stream(entry)  # type: ignore[arg-type]
        assert reader.digest().sha256 == _sha256(path)
        assert reader.reread == 0
    finally:
        reader.close()


def test_pieces_beyond_the_held_budget_are_read_again_not_kept(tmp_path: Path) -> None:
    """Memory stays bounded: an entry read far ahead of the hash is dropped past the budget
    (and read again for the digest), never held whole."""
    big = os.urandom(archive_hasher.HELD_LIMIT + 3 * MIB)
    path = tmp_path / "a.zip"
    path.write_bytes(make_zip([("a", b"first"), ("b", big)], method=zipfile.ZIP_STORED))
    reader = validate_archive(path)
    try:
        reader.start_digest()
        with reader.open("b") as entry:  # ahead of "a": nothing of it can be hashed yet
            hash_stream(entry)  # type: ignore[arg-type]
            hasher = reader._hasher
            assert hasher is not None and hasher._held_bytes <= archive_hasher.HELD_LIMIT
        with reader.open("a") as entry:
            hash_stream(entry)  # type: ignore[arg-type]
        assert reader.digest().sha256 == _sha256(path)
        assert 0 < reader.reread < len(big) - archive_hasher.HELD_LIMIT + 1000
    finally:
        reader.close()


def _compressible(size: int, seed: int = 1) -> bytes:
    """Like a library: compressible, never repeating within deflate's window. One MiB of
    random words, then that block with each of its bytes XORed by the block's number (as
    compressible, other bytes: a seek landing a block off reads something else)."""
    rng = random.Random(seed)  # noqa: S311 - test data, not secrets
    words = [rng.randbytes(rng.randint(3, 12)) for _ in range(4000)]
    block = b"".join(rng.choices(words, k=MIB // 4))[:MIB]
    blocks = [block.translate(bytes(b ^ (n % 251) for b in range(256)))
              for n in range(-(-size // MIB))]
    return b"".join(blocks)[:size]


@pytest.fixture(scope="module")
def big_entry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, bytes]:
    data = _compressible(40 * MIB)
    path = tmp_path_factory.mktemp("resume") / "big.zip"
    path.write_bytes(make_zip([("lib/big.so", data)], level=1))  # level 1: quicker to write
    return path, data


def test_a_seek_inflates_from_the_nearest_resume_point(big_entry: tuple[Path, bytes],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path, data = big_entry
    reader = validate_archive(path)
    try:
        with reader.open("lib/big.so", resumable=True) as first:
            assert hash_stream(first).sha256 == hashlib.sha256(data).hexdigest()  # type: ignore[arg-type]
        compressed = reader.entries["lib/big.so"].compressed_size
        reads = _count_reads(monkeypatch)
        for position in (0, 5, MIB - 1, 17 * MIB + 12345, len(data) - 300, len(data)):
            reads.clear()
            with reader.open("lib/big.so") as again:
                again.seek(position)
                got = again.read(1000)
            assert got == data[position:position + 1000], position
            # at most one spacing of points (1 MiB of output here) plus one read chunk
            assert sum(reads) < compressed / 8, (position, sum(reads), compressed)
    finally:
        reader.close()


def test_without_resume_points_a_seek_still_reads_the_right_bytes(
        big_entry: tuple[Path, bytes]) -> None:
    path, data = big_entry
    reader = validate_archive(path)
    try:
        with reader.open("lib/big.so") as stream:
            stream.seek(23 * MIB + 7)
            assert stream.read(64) == data[23 * MIB + 7:23 * MIB + 71]
            while stream.read():  # to its end: a part has no CRC to fail
                pass
    finally:
        reader.close()
    stored = path.with_name("stored.zip")
    stored.write_bytes(make_zip([("x", data[:3 * MIB])], method=zipfile.ZIP_STORED))
    reader = validate_archive(stored)
    try:
        with reader.open("x") as part:  # a stored entry seeks directly
            part.seek(MIB + 3)
            assert part.read(10) == data[MIB + 3:MIB + 13]
    finally:
        reader.close()


def test_resume_points_stay_few_and_evenly_spaced() -> None:
    index = ResumeIndex()
    inflater = zlib.decompressobj()
    for produced in range(0, 1 << 30, MIB):
        index.offer(produced, produced // 2, inflater)
    assert len(index.points) <= ResumeIndex.MAX_POINTS
    gaps = {b.produced - a.produced for a, b in zip(index.points, index.points[1:], strict=False)}
    assert max(gaps) <= (1 << 30) // 32
    point = index.before(700 * MIB)
    assert point is not None and 700 * MIB - (1 << 30) // 32 <= point.produced <= 700 * MIB


def test_the_section_of_a_large_zipped_library_is_read_without_a_second_inflation(
        big_entry: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    """What verify does for the library: hash it with windows, then read a range in the
    middle (where a large library keeps its section): one bounded re-inflation."""
    path, data = big_entry
    reader = validate_archive(path)
    try:
        windows = StreamWindows()
        with reader.open("lib/big.so", resumable=True) as stream:
            hash_stream(stream, windows.feed)  # type: ignore[arg-type]
        reads = _count_reads(monkeypatch)
        access = WindowedAccess(windows, lambda: reader.open("lib/big.so"))
        middle = len(data) // 2 + 999
        assert access.read_at(middle, 137) == data[middle:middle + 137]
        assert access.rereads == 1
        assert sum(reads) < reader.entries["lib/big.so"].compressed_size / 8
    finally:
        reader.close()


def test_a_stream_already_read_cannot_seek(big_entry: tuple[Path, bytes]) -> None:
    reader = validate_archive(big_entry[0])
    try:
        with reader.open("lib/big.so") as stream:
            stream.read(10)
            with pytest.raises(ValueError, match="cannot seek"):
                stream.seek(100)
    finally:
        reader.close()


def test_publish_preflight_reads_each_archive_once(example_release: BuiltExample,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Preflight verifies the archive and takes its digest from that same pass: no second
    read, no hashing thread beside it."""
    reads = _count_reads(monkeypatch)
    opened: list[str] = []
    real_open = os.open

    def counting_open(path: str | os.PathLike[str], *args: object, **kwargs: object) -> int:
        opened.append(os.fspath(path))
        return real_open(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", counting_open)
    item, findings = check_archive(example_release.archive, None)
    assert item is not None and not findings, findings
    assert item.digest.sha256 == _sha256(example_release.archive)
    size = example_release.archive.stat().st_size
    with zipfile.ZipFile(example_release.archive) as archive:
        entries = len(archive.namelist())
    # the archive once, plus the re-read of plugin.json that proves it did not change
    assert sum(reads) < size + 2 * (70_000 + 100 * entries) + 64 * 1024
    assert opened.count(str(example_release.archive)) == 2  # verify, then plugin.json again
