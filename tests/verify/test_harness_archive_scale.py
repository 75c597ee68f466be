"""Harness zips at their real limits: a real plugin's zip of 12,000 files (and that zip
unpacked) verifies; hostile zips at and around the limits are refused with their code, exit 1,
nothing written, in bounded time and memory, the CLI measured as a child (`cli_measured`).

Before (this branch's base, the same zips): a zip of 10,000 entries each 250 directories
deep was refused after 19.3 s at 884 MiB (every directory of every name kept in a set, the
pairs of names compared by joining their components); 10,000 files each inside the one before
(39 chains) took 102 s and 2.3 GiB to print 2.5 million lines (a finding for each of 1.26
million pairs). Entries over 10,000 were refused from the end record in 0.3 s, so a harness zip
of more files could not be read at all. Measured after, here (2 shared cores, loaded): the
largest legal harness zip, 65,534 entries of 512-byte names 64 directories deep (72 MB),
6.1 s and 236 MiB; the same records naming a native bundle, refused after parsing in 1.5 s at
144 MiB, or unparsed in 0.8 s at 57 MiB when no record can name the root files; 65,534 files in
1,009 chains, 3.4 s and 93 MiB; the two zips of before, 1.2 s / 65 MiB and 0.8 s / 33 MiB. The
bounds below are about three times those figures, for a loaded machine.
"""

from __future__ import annotations

import stat
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest

from horon_bundle.verify import limits
from tests.archive_support import HARNESS_ROOT, long_names, write_zip
from tests.conftest import ManyFiles
from tests.helpers import cli, cli_measured, tree_snapshot

LARGEST = limits.HARNESS_MAX_ARCHIVE_ENTRIES


def _largest_harness(path: Path) -> Path:
    """65,534 entries: the three root files (SHA256SUMS malformed) and 65,531 names of 512
    bytes, 64 directories deep, in 718 directories (66,252 entries unpacked)."""
    names = long_names(LARGEST - 3, depth=limits.HARNESS_MAX_DEPTH, length=512)
    return write_zip(path, [*HARNESS_ROOT, *names], {"SHA256SUMS": b"not a checksum line\n"})


def _largest_native(path: Path, root: tuple[str, ...] = ()) -> Path:
    names = long_names(LARGEST - 1 - len(root), depth=64, length=512)
    return write_zip(path, ["plugin.json", *root, *names])


def _chains(path: Path, *, root: tuple[str, ...], entries: int, depth: int) -> Path:
    """Files each inside the one before, `depth + 1` to a chain: every pair collides."""
    names = list(root)
    chain = 0
    while len(names) < entries:
        names += ["/".join([f"c{chain:04d}", *["a"] * level]) for level in range(depth + 1)]
        chain += 1
    return write_zip(path, names[:entries])


def _deep(path: Path) -> Path:
    """10,000 entries each 250 directories deep (within a native bundle's entries)."""
    return write_zip(path, [f"{index:05d}/" + "a/" * 250 + "f" for index in range(10_000)])


HOSTILE: dict[str, tuple[Callable[[Path], Path], str, str, int, float, float]] = {
    # case: (make, code, the start of its message, lines at most, seconds, MiB)
    "the largest legal harness zip": (
        _largest_harness, "checksum.format",
        "SHA256SUMS:1: 'not a checksum line' is not", 50, 30, 700),
    "the largest zip naming a native bundle": (  # refused unparsed: no root file's name
        _largest_native, "archive.limit", "z.zip: 65534 entries, limit 10000", 10, 10, 200),
    "the largest zip naming a native bundle and the root files": (  # refused once parsed
        lambda path: _largest_native(path, HARNESS_ROOT), "archive.limit",
        "z.zip: 65534 entries, limit 10000", 10, 10, 450),
    "65,534 files in chains, a harness bundle's": (  # 2 million pairs: 100 listed
        lambda path: _chains(path, root=HARNESS_ROOT, entries=LARGEST, depth=64),
        "archive.duplicate", "z.zip: entries 'c0000' and 'c0000/a' collide", 300, 15, 300),
    "10,000 files in chains, a native bundle's": (  # each entry past 32 levels: one line
        lambda path: _chains(path, root=(), entries=10_000, depth=255),
        "archive.limit", "z.zip: entry 'c0000/", 20_000, 10, 200),
    "10,000 entries 250 directories deep": (
        _deep, "archive.limit", "z.zip: entry '00000/a/a/", 20_010, 10, 200),
}


@pytest.mark.process
@pytest.mark.slow  # each zip is tens of MB, and the CLI reads it in a child: 2 to 10 s here
@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_zip_at_the_limits_is_refused_in_bounded_time_and_memory(
        tmp_path: Path, case: str) -> None:
    make, code, message, lines, seconds, mib = HOSTILE[case]
    path = make(tmp_path / "z.zip")
    before = tree_snapshot(tmp_path)
    measured = cli_measured("verify", path, timeout=180)
    assert measured.status == 1, measured.stderr[-2000:]
    assert code in measured.codes, measured.stderr[-2000:]
    assert f"ERROR {code}: {message}" in measured.stderr
    assert "Traceback" not in measured.stderr
    assert len(measured.stderr.splitlines()) <= lines  # a line per entry at most, not a pair
    assert tree_snapshot(tmp_path) == before
    assert measured.seconds < seconds, measured.seconds
    assert measured.peak_rss_mib < mib, measured.peak_rss_mib
    print(f"{case}: {measured.seconds:.2f} s, {measured.peak_rss_mib:.0f} MiB")


@pytest.mark.slow  # the shared build (about 20 s here), then the zip and a copy unpacked (20 s)
def test_a_real_plugins_zip_of_12000_files_verifies_and_so_does_that_zip_unpacked(
        many_files_harness: ManyFiles, tmp_path: Path) -> None:
    result = cli("verify", many_files_harness.zip)
    assert result.status == 0, result.stderr
    unpacked = tmp_path / "guard-kit"
    with zipfile.ZipFile(many_files_harness.zip) as archive:
        for info in archive.infolist():
            archive.extract(info, unpacked)
            (unpacked / info.filename).chmod(stat.S_IMODE(info.external_attr >> 16))
    for directory in [unpacked, *(p for p in unpacked.rglob("*") if p.is_dir())]:
        directory.chmod(0o755)
    result = cli("verify", unpacked)
    assert result.status == 0, result.stderr
