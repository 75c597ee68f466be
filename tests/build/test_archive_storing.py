"""An archive entry that deflate does not shrink by the margin is stored: a rule on the
file's own bytes (its deflated sample), so an incompressible library is neither deflated at
build nor inflated by every verify, install and publish; the same bytes give the same
archive."""

from __future__ import annotations

import random
import zipfile
from pathlib import Path

from horon_bundle.build.archive import SAMPLE_BLOCK, SAMPLE_BLOCKS, stores, write_archive

MIB = 1 << 20


def _noise(size: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(size)  # noqa: S311 - reproducible noise, no secret


def _bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    (bundle / "lib").mkdir(parents=True)
    (bundle / "lib" / "libnoise.so").write_bytes(_noise(3 * MIB, 1))
    text = b"".join(b"line %d of a text that repeats\n" % (n % 50) for n in range(60_000))
    (bundle / "LICENSE").write_bytes(text)
    (bundle / "empty").write_bytes(b"")
    return bundle


def test_incompressible_entries_are_stored_and_the_rest_deflated(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    files = [("lib/libnoise.so", True), ("LICENSE", False), ("empty", False)]
    first = write_archive(bundle, files, tmp_path / "a.zip", epoch=0)
    second = write_archive(bundle, files, tmp_path / "b.zip", epoch=0)
    assert first == second  # deterministic
    with zipfile.ZipFile(tmp_path / "a.zip") as archive:
        methods = {info.filename: info.compress_type for info in archive.infolist()}
        assert archive.testzip() is None
        assert archive.read("lib/libnoise.so") == (bundle / "lib/libnoise.so").read_bytes()
    assert methods == {"lib/libnoise.so": zipfile.ZIP_STORED, "LICENSE": zipfile.ZIP_DEFLATED,
                       "empty": zipfile.ZIP_STORED}


def test_a_library_whose_head_compresses_and_whose_body_does_not_is_stored(
        tmp_path: Path) -> None:
    """An ELF header and some code in front of a large embedded blob: the file as a whole
    does not shrink, and neither does the sample, whose first block is the head."""
    head = b"".join(b"\x7fELF code %d\n" % (n % 64) for n in range(6_000))
    library = tmp_path / "lib.so"
    library.write_bytes(head + _noise(12 * MIB, 3))
    assert stores(library)


def test_the_rule_samples_fixed_blocks_of_a_large_file(tmp_path: Path) -> None:
    """Beyond the sample size the blocks at fixed places decide: noise there is stored even
    if the bytes between the blocks would compress, text there is deflated."""
    size = SAMPLE_BLOCK * SAMPLE_BLOCKS * 4
    noise, text = tmp_path / "noise", tmp_path / "text"
    noise.write_bytes(_noise(size, 2))
    text.write_bytes(b"a" * size)
    assert stores(noise)
    assert not stores(text)
    step = (size - SAMPLE_BLOCK) // (SAMPLE_BLOCKS - 1)
    mixed = bytearray(b"a" * size)
    for number in range(SAMPLE_BLOCKS):  # noise exactly where the rule looks
        mixed[number * step:number * step + SAMPLE_BLOCK] = _noise(SAMPLE_BLOCK, number)
    (tmp_path / "mixed").write_bytes(bytes(mixed))
    assert stores(tmp_path / "mixed")
