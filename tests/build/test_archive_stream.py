"""The archive written in one pass (`build.archive_stream`): the bytes zipfile writes for the
same bundle (`build.archive.write_archive`, the reference), its digest taken while writing
equal to the file's, and a file that is not the bytes staging wrote refused with nothing left."""

from __future__ import annotations

import hashlib
import random
import zipfile
from pathlib import Path

import pytest

from horon_bundle.build import archive_stream
from horon_bundle.build.archive import write_archive
from horon_bundle.build.archive_stream import write_streamed_archive
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.verify import limits
from tests.conftest import BuiltExample

MIB = 1 << 20


def _bundle(root: Path) -> tuple[Path, list[tuple[str, bool]], dict[str, Digest]]:
    """Every way an entry is written: stored and streamed (noise past one sample), stored
    from the sample (small noise, an empty file), deflated from the sample (small text),
    deflated through the spool (text past one sample), a UTF-8 name, an executable."""
    noise = random.Random(7).randbytes  # noqa: S311 - reproducible noise, no secret
    text = b"".join(b"line %d of a text that repeats\n" % (n % 50) for n in range(90_000))
    files = {"lib/libnoise.so": noise(3 * MIB), "LICENSE": text, "notes.txt": text[:5000],
             "empty": b"", "tiny-noise": noise(5000), "sidecars/h\u00e9llo": b"#!/bin/sh\n",
             "zeros": bytes(2 * MIB + 17)}
    bundle = root / "bundle"
    written = {}
    for name, data in files.items():
        (bundle / name).parent.mkdir(parents=True, exist_ok=True)
        (bundle / name).write_bytes(data)
        written[name] = hash_bytes(data, crc=True)
    return bundle, [(name, name.startswith("sidecars/")) for name in files], written


@pytest.mark.parametrize("epoch", [0, 1_700_000_001])
def test_the_bytes_are_zipfiles_and_the_digest_is_the_files(
        tmp_path: Path, epoch: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(archive_stream, "SPOOL_IN_MEMORY", 64 << 10)  # the spill path too
    bundle, files, written = _bundle(tmp_path)
    reference = write_archive(bundle, files, tmp_path / "zipfile.zip", epoch=epoch)
    streamed = write_streamed_archive(bundle, files, written, tmp_path / "stream.zip",
                                      epoch=epoch)
    data = (tmp_path / "stream.zip").read_bytes()
    assert data == (tmp_path / "zipfile.zip").read_bytes()
    assert streamed == reference
    assert streamed == Digest(hashlib.sha256(data).hexdigest(), len(data))
    with zipfile.ZipFile(tmp_path / "stream.zip") as archive:
        assert archive.testzip() is None
        methods = {info.filename: info.compress_type for info in archive.infolist()}
    assert methods["lib/libnoise.so"] == methods["empty"] == zipfile.ZIP_STORED
    assert methods["LICENSE"] == methods["notes.txt"] == zipfile.ZIP_DEFLATED


def test_the_example_release_is_the_bytes_zipfile_writes(
        example_release: BuiltExample, tmp_path: Path) -> None:
    """The real bundle of the example, archived both ways: the same archive; and the digest
    build recorded beside its archive is that of the file on disk."""
    bundle = example_release.bundle
    names = sorted(str(p.relative_to(bundle)) for p in bundle.rglob("*") if p.is_file())
    files = [(name, name.startswith("sidecars/")) for name in names]
    written = {name: hash_bytes((bundle / name).read_bytes(), crc=True) for name in names}
    write_archive(bundle, files, tmp_path / "zipfile.zip", epoch=0)
    write_streamed_archive(bundle, files, written, tmp_path / "stream.zip", epoch=0)
    assert (tmp_path / "stream.zip").read_bytes() == (tmp_path / "zipfile.zip").read_bytes()
    recorded = example_release.archive.with_name(example_release.archive.name + ".sha256")
    on_disk = hashlib.sha256(example_release.archive.read_bytes()).hexdigest()
    assert recorded.read_text() == f"{on_disk}  {example_release.archive.name}\n"


@pytest.mark.parametrize("name", ["lib/libnoise.so", "LICENSE", "notes.txt", "tiny-noise"])
def test_a_file_rewritten_after_staging_is_refused(tmp_path: Path, name: str) -> None:
    """Same size, other bytes (after the self-check, before the archive): the CRC-32 of what
    was read is not the one staging took; refused, no archive and no partial left."""
    bundle, files, written = _bundle(tmp_path)
    path = bundle / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    destination = tmp_path / "out" / "x.zip"
    destination.parent.mkdir()
    with pytest.raises(Refused) as caught:
        write_streamed_archive(bundle, files, written, destination, epoch=0)
    assert caught.value.codes() == ["build.nondeterministic"]
    assert name in str(caught.value.findings[0].message)
    assert list(destination.parent.iterdir()) == []


@pytest.mark.parametrize("change", ["resized", "removed"])
def test_a_file_resized_or_removed_after_staging_is_refused(tmp_path: Path, change: str) -> None:
    bundle, files, written = _bundle(tmp_path)
    if change == "removed":
        (bundle / "LICENSE").unlink()
    else:
        with (bundle / "LICENSE").open("ab") as grown:
            grown.write(b"one more line\n")
    with pytest.raises(Refused) as caught:
        write_streamed_archive(bundle, files, written, tmp_path / "x.zip", epoch=0)
    assert caught.value.codes() == ["build.nondeterministic"]
    assert not (tmp_path / "x.zip").exists()
    assert not (tmp_path / ".x.zip.partial").exists()


def test_an_archive_verify_could_not_read_is_never_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `MAX_ARCHIVE_BYTES` (where zipfile would switch to ZIP64) the writer stops."""
    monkeypatch.setattr(limits, "MAX_ARCHIVE_BYTES", MIB)
    bundle, files, written = _bundle(tmp_path)
    with pytest.raises(Refused) as caught:
        write_streamed_archive(bundle, files, written, tmp_path / "x.zip", epoch=0)
    assert caught.value.codes() == ["archive.limit"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bundle"]
