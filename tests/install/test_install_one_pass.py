"""install reads each byte of the source for the verify and once more for the copy, hashing it
as it lands; the staged copy is not verified again, and its data is made durable by one sync
of the file system, not an fsync per file (docs/install.md, "One pass")."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.install import copy_file
from horon_bundle.verify import judge
from horon_bundle.verify.report import VerifyReport
from tests.helpers import tree_snapshot
from tests.install_support import Bundles, copy_location, hb

pytestmark = pytest.mark.cargo


@pytest.mark.parametrize("form", ["archive", "directory"])
def test_install_verifies_once_copies_by_the_kernel_and_syncs_once(
        bundles: Bundles, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, form: str) -> None:
    source = bundles.v1 if form == "archive" else bundles.v1_dir
    verified: list[Path] = []
    real_verify: Callable[..., VerifyReport] = judge.verify_path
    home = tmp_path / "home"

    def counting_verify(path: Path, **options: Any) -> VerifyReport:
        if home in path.parents:  # a verify of what was staged or installed
            verified.append(path)
        return real_verify(path, **options)

    kernel: list[int] = []
    real_copy = os.copy_file_range

    def counting_copy(*args: int) -> int:
        copied = real_copy(*args)
        kernel.append(copied)
        return copied

    synced: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            synced.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(judge, "verify_path", counting_verify)  # imported where it is used
    monkeypatch.setattr(copy_file.os, "copy_file_range",  # type: ignore[attr-defined]
                        counting_copy)
    monkeypatch.setattr(os, "fsync", counting_fsync)
    result = hb("install", source, home=home)
    assert result.status == 0, result.stderr
    copy = copy_location(home, "0.1.0")
    assert tree_snapshot(copy) == tree_snapshot(bundles.v1_dir)
    assert verified == []  # the staged copy is proved by its digests, not verified again
    if form == "directory":
        assert sum(kernel) == sum(p.stat().st_size for p in bundles.v1_dir.rglob("*")
                                  if p.is_file())
    else:
        with zipfile.ZipFile(bundles.v1) as archive:
            stored = sum(i.file_size for i in archive.infolist()
                         if i.compress_type == zipfile.ZIP_STORED)
        assert sum(kernel) == stored
    assert len(synced) == 1, synced  # the state file's atomic write; no staged file



def _bytes_read() -> int:
    """Bytes this process (every thread) has read through read(2) and its kin."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="Linux /proc/self/io")
def test_an_archive_is_hashed_by_its_verify_not_by_a_pass_of_its_own(
        bundles: Bundles, tmp_path: Path) -> None:
    """The archive's SHA-256 (recorded in the state file) comes from the bytes the verify
    judged: the archive is read once for both, then the copy reads what it copies."""
    size = bundles.v1.stat().st_size
    hb("verify", bundles.v1, home=tmp_path / "unused")  # imports and caches warmed
    before = _bytes_read()
    hb("verify", bundles.v1, home=tmp_path / "unused")
    verify_read = _bytes_read() - before
    before = _bytes_read()
    result = hb("install", bundles.v1, "--json", home=tmp_path / "home")
    install_read = _bytes_read() - before
    assert result.status == 0, result.stderr
    assert json.loads(result.stdout)["archive_sha256"] == hashlib.sha256(
        bundles.v1.read_bytes()).hexdigest()
    # beyond the verify's own reads: the copy's hash of the staged bytes (at most the
    # inflated size), the archive's directory read again to copy (about half its size
    # here) and the home's small files; a separate hash of the archive
    # would add the archive's size again
    inflated = sum(i.file_size for i in zipfile.ZipFile(bundles.v1).infolist())
    assert install_read - verify_read < inflated + size * 3 // 2, (install_read, verify_read,
                                                               inflated, size)
