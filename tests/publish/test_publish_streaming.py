"""How the file store copies: one pass, the digest of the bytes stored, both copy paths, and
an archive changed between preflight and upload refused with nothing committed."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.file_identity import identity_of
from horon_bundle.core.hashing import Digest
from horon_bundle.core.reporter import SilentReporter
from horon_bundle.publish.destinations import file_store, store_copy
from horon_bundle.publish.preflight import PublishRequest
from horon_bundle.publish.publisher import publish
from tests.helpers import tree_snapshot
from tests.publish_support import (
    Releases,
    make_dist,
    publish_env,
)

SHM = Path("/dev/shm")  # tmpfs: another file system than the test's temp directory


def _payload(path: Path, size: int) -> bytes:
    data = os.urandom(size)
    path.write_bytes(data)
    return data


@pytest.mark.parametrize("size", [0, 1, store_copy.COPY_CHUNK, 3 * store_copy.COPY_CHUNK + 17])
def test_the_kernel_copy_hashes_the_bytes_it_stored(tmp_path: Path, size: int) -> None:
    source = tmp_path / "source"
    data = _payload(source, size)
    temp = tmp_path / "copy"
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        digest = store_copy.copy_and_hash(source, handle, temp)
    finally:
        os.close(handle)
    assert digest.sha256 == hashlib.sha256(data).hexdigest() and digest.size == size
    assert temp.read_bytes() == data


@pytest.mark.skipif(not SHM.is_dir(), reason="no /dev/shm on this system")
def test_across_file_systems_the_copy_falls_back_to_read_hash_write(tmp_path: Path) -> None:
    """copy_file_range between two file systems is refused (EXDEV) on current kernels; the
    copy then reads, hashes and writes each chunk, with the same result."""
    source = SHM / f"horon-test-{os.getpid()}-{tmp_path.name}"
    try:
        data = _payload(source, 2 * store_copy.COPY_CHUNK + 5)
        temp = tmp_path / "copy"
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            digest = store_copy.copy_and_hash(source, handle, temp)
        finally:
            os.close(handle)
    finally:
        source.unlink()
    assert digest.sha256 == hashlib.sha256(data).hexdigest()
    assert temp.read_bytes() == data


def test_user_copy_path(tmp_path: Path) -> None:
    """The path systems without copy_file_range take (macOS, Windows), run directly."""
    source = tmp_path / "source"
    data = _payload(source, store_copy.COPY_CHUNK + 3)
    temp = tmp_path / "copy"
    reader = os.open(source, os.O_RDONLY)
    handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        digest = store_copy._user_copy(reader, handle, source)
    finally:
        os.close(reader)
        os.close(handle)
    assert digest.sha256 == hashlib.sha256(data).hexdigest()
    assert temp.read_bytes() == data


def test_an_archive_changed_after_preflight_is_not_stored(tmp_path: Path,
                                                          releases: Releases) -> None:
    dist = make_dist(tmp_path / "dist", releases.example)
    archive = dist / releases.example.name
    store = tmp_path / "store"
    store.mkdir()

    class FlipAByteBeforeUpload(SilentReporter):
        def step(self, text: str) -> None:
            if text.startswith("uploading "):
                data = bytearray(archive.read_bytes())
                data[len(data) // 2] ^= 0x01
                archive.write_bytes(bytes(data))

    with pytest.raises(Refused) as refused:
        publish(PublishRequest(dist_dir=dist), publish_env(f"file://{store}"),
                FlipAByteBeforeUpload())
    assert refused.value.codes() == ["publish.integrity"]
    assert "when checked; nothing was published" in str(refused.value)
    # the store's marker and its (empty) temp directory: no blob, no index entry
    assert set(tree_snapshot(store)) == {"horon-store.json", ".tmp"}
    assert not (dist / "publish-receipt.json").exists()
    shutil.rmtree(store)


def test_an_unchanged_archive_is_stored_by_the_kernel_without_a_second_read(
        tmp_path: Path, releases: Releases, monkeypatch: pytest.MonkeyPatch) -> None:
    """The preflight read and hashed the archive; the store copies it by the kernel alone
    while its identity is the one the preflight saw: no byte is read or hashed again."""
    dist = make_dist(tmp_path / "dist", releases.example)
    archive = dist / releases.example.name
    store = tmp_path / "store"
    store.mkdir()
    hashed_again: list[Path] = []
    real = store_copy.copy_and_hash

    def counting(source: Path, handle: int, temp: Path) -> Digest:
        hashed_again.append(source)
        return real(source, handle, temp)

    monkeypatch.setattr(file_store, "copy_and_hash", counting)
    publish(PublishRequest(dist_dir=dist), publish_env(f"file://{store}"), SilentReporter())
    assert hashed_again == []
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    [blob] = list(store.rglob(digest))
    assert blob.read_bytes() == archive.read_bytes()


def test_the_kernel_only_copy_refuses_a_file_whose_identity_moved(tmp_path: Path) -> None:
    source = tmp_path / "source"
    data = _payload(source, store_copy.COPY_CHUNK + 9)
    identity = identity_of(source.lstat())
    source.write_bytes(data + b"!")  # written after it was judged
    temp = tmp_path / "copy"
    handle = os.open(temp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        assert not store_copy.copy_judged(source, handle, identity)
        assert os.fstat(handle).st_size == 0 and os.lseek(handle, 0, os.SEEK_CUR) == 0
        assert store_copy.copy_judged(source, handle, identity_of(source.lstat()))
    finally:
        os.close(handle)
    assert temp.read_bytes() == data + b"!"
