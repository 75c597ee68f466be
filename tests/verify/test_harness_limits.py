"""A harness bundle's own limits, zip and unpacked, chosen before the work and kept only for a
harness bundle: a native bundle is judged exactly as before, whatever it pretends to be.

The zip's limits are chosen from its end record (its entry count, its central directory's
size) before one record is parsed; above a native bundle's entries the records parsed must
name a harness bundle (`limits.harness_shaped`), else the zip is refused with the native
limit's own words. A directory's are chosen from its root's names before the walk, and kept
only when the files walked are a harness bundle. Both forms of a bundle are held to the depth
and the entries of the directory they are (or unpack into). Small limits are patched in where
a real one would need thousands of entries (tests/verify/test_harness_archive_scale.py has
the real figures).
"""

from __future__ import annotations

import math
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core.errors import Refused
from horon_bundle.model.harness.layout import REQUIRED, is_harness
from horon_bundle.verify import limits
from horon_bundle.verify.reading import archive_reader
from horon_bundle.verify.reading.archive_entries import unpacked_entries
from horon_bundle.verify.reading.archive_reader import validate_archive
from horon_bundle.verify.reading.directory import DirectorySource
from tests.archive_support import HARNESS_ROOT, write_zip
from tests.helpers import assert_refused, cli, tree_snapshot

ZIP64 = ("archive.format", "z.zip: ZIP64 end records (bundle archives are below 2 GiB and "
                           "65,535 entries and never need ZIP64)")


@pytest.fixture(name="small")
def small_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A native bundle of 10 entries at most, a harness zip of 20, unpacked 40."""
    monkeypatch.setattr(limits, "MAX_ENTRIES", 10)
    monkeypatch.setattr(limits, "HARNESS_MAX_ARCHIVE_ENTRIES", 20)
    monkeypatch.setattr(limits, "HARNESS_MAX_ENTRIES", 40)


def _read(tmp_path: Path, names: list[str], **options: object) -> list[str]:
    """The entry names the reader accepts from a zip of `names` (nothing written but it)."""
    path = write_zip(tmp_path / "z.zip", names, **options)  # type: ignore[arg-type]
    before = tree_snapshot(tmp_path)
    reader = validate_archive(path)
    reader.close()
    assert tree_snapshot(tmp_path) == before
    return list(reader.entries)


def _refused(tmp_path: Path, names: list[str], **options: object) -> list[tuple[str, str]]:
    path = write_zip(tmp_path / "z.zip", names, **options)  # type: ignore[arg-type]
    before = tree_snapshot(tmp_path)
    with pytest.raises(Refused) as caught:
        validate_archive(path)
    assert tree_snapshot(tmp_path) == before
    return [(finding.code.name, finding.message) for finding in caught.value.findings]


def _files(count: int) -> list[str]:
    return [f"f{index:02d}" for index in range(count)]


# --- the zip: which limits, from the end record --------------------------------------------

def test_a_harness_zip_over_a_native_bundles_entries_is_read_with_its_own(
        tmp_path: Path, small: None) -> None:
    names = [*HARNESS_ROOT, *_files(17)]
    assert _read(tmp_path, names) == names  # 20 entries, twice the native limit
    assert _read(tmp_path, [*HARNESS_ROOT, "marketplace-entry.json", *_files(16)])[3] == \
        "marketplace-entry.json"


def test_one_entry_over_a_harness_zips_limit_is_refused_before_a_record_is_parsed(
        tmp_path: Path, small: None) -> None:
    """21 entries, one named with a NUL: only the count is refused, so no record was read."""
    assert _refused(tmp_path, [*HARNESS_ROOT, "bad\0name", *_files(17)]) == [
        ("archive.limit", "z.zip: 21 entries, limit 20 (a harness bundle's; 10 a native one's)")]


NOT_HARNESS = {
    "a native bundle": ["plugin.json", *_files(10)],
    "a native bundle with the harness root files too": ["plugin.json", *HARNESS_ROOT, *_files(7)],
    "no SHA256SUMS": ["catalogue.json", "provenance.json", *_files(9)],
    "no catalogue.json": ["SHA256SUMS", "provenance.json", *_files(9)],
    "no provenance.json": ["SHA256SUMS", "catalogue.json", *_files(9)],
    "the root files one directory down": [f"x/{name}" for name in HARNESS_ROOT] + _files(8),
    "the root files as directory entries": [f"{name}/" for name in HARNESS_ROOT] + [
        f"{name}/x" for name in HARNESS_ROOT] + _files(5),
    "a harness manifest but not the root files": [".claude-plugin/plugin.json", *_files(10)],
    "a bad record besides": ["plugin.json", "bad\0name", *_files(9)],
}


@pytest.mark.parametrize("case", sorted(NOT_HARNESS))
def test_a_zip_over_a_native_bundles_entries_that_is_no_harness_bundle_is_refused_as_before(
        case: str, tmp_path: Path, small: None) -> None:
    """11 entries that do not name a harness bundle: the native limit's one refusal, in the
    words it had before its records were ever parsed (whatever else is wrong with them)."""
    assert _refused(tmp_path, NOT_HARNESS[case]) == [
        ("archive.limit", "z.zip: 11 entries, limit 10")]


def test_records_that_cannot_name_a_harness_bundle_are_not_even_parsed(
        tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Over a native bundle's entries, a central directory whose bytes do not hold the root
    files' names is refused unparsed (a native bundle's zip: as cheaply as before); one that
    holds them is parsed, and its records decide."""
    parsed: list[int] = []
    parse = archive_reader._central_directory

    def counted(*args: Any, **kwargs: Any) -> Any:
        parsed.append(1)
        return parse(*args, **kwargs)
    monkeypatch.setattr(archive_reader, "_central_directory", counted)
    native = ("archive.limit", "z.zip: 11 entries, limit 10")
    assert _refused(tmp_path, ["plugin.json", "SHA256SUMS", "provenance.json", *_files(8)]) == [
        native]
    assert parsed == []
    assert _refused(tmp_path, ["plugin.json", *HARNESS_ROOT, *_files(7)]) == [native]
    assert parsed == [1]


def test_a_native_looking_zip_of_20000_entries_is_refused_as_before(tmp_path: Path) -> None:
    """The real limits, through the CLI: twice a native bundle's entries, which a harness zip
    may hold, naming a native bundle: the one refusal it always had, nothing written."""
    path = write_zip(tmp_path / "many.zip",
                     ["plugin.json", *(f"lib/f{index:05d}" for index in range(19_999))])
    before = tree_snapshot(tmp_path)
    result = cli("verify", path)
    assert_refused(result, "archive.limit")
    assert result.codes == ["archive.limit"]
    assert "ERROR archive.limit: many.zip: 20000 entries, limit 10000\n" in result.stderr
    assert tree_snapshot(tmp_path) == before


def test_a_harness_zips_central_directory_is_held_to_its_count(
        tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above the native entries, the directory may be as large as its records can be, and not
    a byte more: judged from the end record, so a record past it is never parsed."""
    names = [*HARNESS_ROOT, *_files(8)]
    directory = sum(46 + len(name) for name in names)
    record = math.ceil(directory / len(names))
    monkeypatch.setattr(limits, "MAX_RECORD_BYTES", record)
    assert _read(tmp_path, names) == names
    monkeypatch.setattr(limits, "MAX_RECORD_BYTES", record - 1)
    assert _refused(tmp_path, names) == [(
        "archive.limit", f"z.zip: a {directory}-byte central directory for 11 entries, limit "
                         f"{11 * (record - 1)} ({record - 1} bytes a record)")]


def test_at_or_under_a_native_bundles_entries_the_native_directory_limit_stands(
        tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [*HARNESS_ROOT, *_files(7)]
    directory = sum(46 + len(name) for name in names)
    monkeypatch.setattr(limits, "MAX_CENTRAL_DIRECTORY_BYTES", directory - 1)
    monkeypatch.setattr(limits, "MAX_RECORD_BYTES", directory)  # not the one judged here
    assert _refused(tmp_path, names) == [
        ("archive.limit", f"z.zip: a {directory}-byte central directory, limit {directory - 1}")]


def test_a_zip_over_65534_entries_is_zip64_and_refused_before_parsing(tmp_path: Path) -> None:
    """A zip without ZIP64 counts its entries in 16 bits, and 0xFFFF says "see the ZIP64
    record": 65,535 entries written plainly (as CPython's zipfile writes them) and 65,536 with
    the ZIP64 end record they need are both ZIP64, refused before one record is read (one of
    them a NUL name that no one reports)."""
    names = [*HARNESS_ROOT, "bad\0name", *(f"f{index:05d}" for index in range(65_531))]
    assert len(names) == 0xFFFF
    assert _refused(tmp_path, names) == [ZIP64]
    assert _refused(tmp_path, [*names, "one-more"], zip64=True) == [ZIP64]


# --- depth and entries unpacked, as the directory form judges them -------------------------

@pytest.mark.parametrize(("root", "depth"), [((), limits.MAX_DEPTH),
                                             (HARNESS_ROOT, limits.HARNESS_MAX_DEPTH)])
def test_an_entry_deeper_than_the_directory_it_unpacks_into_is_refused(
        tmp_path: Path, root: tuple[str, ...], depth: int) -> None:
    deepest = ["d/" * depth + "f", "e/" * (depth - 1) + "e/", "e/" * depth + "g"]
    assert _read(tmp_path, [*root, *deepest])[len(root):] == [deepest[0], deepest[2]]
    too_deep = ["d/" * (depth + 1) + "f", "e/" * depth + "e/"]
    assert _refused(tmp_path, [*root, *too_deep]) == [
        ("archive.limit", f"z.zip: entry {too_deep[0]!r}: lies deeper than {depth} directories"),
        ("archive.limit", f"z.zip: entry {too_deep[1]!r}: lies deeper than {depth} directories")]


def test_a_native_zip_unpacks_into_no_more_entries_than_a_native_directory(
        tmp_path: Path, small: None) -> None:
    within = [f"d{index}/f" for index in range(5)]  # 5 files in 5 directories: 10 entries
    assert _read(tmp_path, within) == within
    over = [*within, "d5/f"]
    assert _refused(tmp_path, over) == [
        ("archive.limit", "z.zip: 6 files and 6 directories unpacked, limit 10 entries")]


def test_a_harness_zip_unpacks_into_no_more_entries_than_an_unpacked_harness_bundle(
        tmp_path: Path, small: None, monkeypatch: pytest.MonkeyPatch) -> None:
    names = [*HARNESS_ROOT, *(f"d{index:02d}/e/f" for index in range(8))]  # 11 entries
    monkeypatch.setattr(limits, "HARNESS_MAX_ENTRIES", 11 + 16)  # 11 files, 16 directories
    assert _read(tmp_path, names) == names
    monkeypatch.setattr(limits, "HARNESS_MAX_ENTRIES", 26)
    assert _refused(tmp_path, names) == [
        ("archive.limit", "z.zip: 11 files and 16 directories unpacked, limit 26 entries")]


def test_the_entries_a_zip_unpacks_into_are_counted_as_the_walk_counts_them(
        tmp_path: Path) -> None:
    root = tmp_path / "tree"
    names = ["a/b/c", "a/b/d", "a/bc", "a-b/x", "a.b/y", "z", "a/b/e/f", "q/"]
    for name in names:
        (root / name.rstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        if name.endswith("/"):
            (root / name).mkdir()
        else:
            (root / name).touch()
    walked = sum(len(files) + len(directories) for _, directories, files in os.walk(root))
    assert unpacked_entries(names) == walked == 13  # 7 files, 6 directories


@given(st.lists(st.from_regex(r"[ab.\-]{1,2}(/[ab.\-]{1,2}){0,3}/?", fullmatch=True),
                max_size=8, unique=True))
def test_unpacked_entries_are_the_files_and_every_directory_of_them_once(
        names: list[str]) -> None:
    directories = {"/".join(parts[:depth]) for parts in (name.split("/") for name in names)
                   for depth in range(1, len(parts))}
    files = [name for name in names if not name.endswith("/")]
    assert unpacked_entries(names) == len(files) + len(directories)


@pytest.mark.parametrize(("chain", "listed"), [(3, 3), (4, 3)])
def test_pairs_of_entries_that_collide_are_listed_up_to_a_limit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chain: int, listed: int) -> None:
    """Files each inside the one before: a chain of n makes n(n-1)/2 pairs (a chain of 64,
    2,016); at most `MAX_LISTED` are listed and no more are looked for."""
    monkeypatch.setattr(limits, "MAX_LISTED", 3)
    names = ["/".join("abcd"[:length]) for length in range(1, chain + 1)]
    found = _refused(tmp_path, names)
    assert [code for code, _ in found] == ["archive.duplicate"] * (listed + (chain > 3))
    assert found[0] == ("archive.duplicate", "z.zip: entries 'a' and 'a/b' collide")
    if chain > 3:
        assert found[-1] == ("archive.duplicate", "z.zip: … and more pairs of entries that "
                                                  "collide (the first 3 are listed)")


# --- which bundles are harness bundles to the readers --------------------------------------

def test_the_readers_know_a_harness_bundle_by_the_root_files_build_writes() -> None:
    assert set(limits.HARNESS_ROOT_FILES) == set(REQUIRED) == set(HARNESS_ROOT)
    assert limits.harness_shaped(set(REQUIRED))
    assert not limits.harness_shaped({*REQUIRED, limits.NATIVE_MANIFEST})


@given(st.sets(st.sampled_from([*REQUIRED, "plugin.json", ".claude-plugin/plugin.json",
                                ".muse-plugin/plugin.json", "marketplace-entry.json", "x"])))
def test_a_bundle_the_readers_give_harness_limits_is_judged_as_a_harness_bundle(
        names: set[str]) -> None:
    """Whatever the readers let through with the larger limits, verify routes to the harness
    judge (`is_harness`): never to the native one."""
    if limits.harness_shaped(names):
        assert is_harness(dict.fromkeys(names))


# --- the directory: which limits, from the root's names ------------------------------------

def _tree(root: Path, names: list[str], *, depth: int = 0) -> Path:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    if depth:
        deep = root / Path(*["d"] * depth)
        deep.mkdir(parents=True)
        (deep / "f").write_bytes(b"")
    return root


def _walked(root: Path) -> tuple[list[str], list[str]]:
    """(files, findings as `code: message`) of the directory reader, nothing written."""
    before = tree_snapshot(root)
    with DirectorySource(root) as source:
        found = sorted(source.files), [f"{f.code.name}: {f.message}"
                                       for f in source.layout_findings]
    assert tree_snapshot(root) == before
    return found


def test_an_unpacked_harness_bundle_over_a_native_bundles_entries_is_read_whole(
        tmp_path: Path, small: None) -> None:
    root = _tree(tmp_path / "bundle", [*HARNESS_ROOT, *(f"d/f{i:02d}" for i in range(16))])
    files, findings = _walked(root)
    assert (len(files), findings) == (19, [])  # 20 entries with d/, twice the native limit
    (root / "d" / "f16").write_bytes(b"")  # 21 more: the harness directory's own limit
    for index in range(17, 38):
        (root / "e" / f"f{index}").parent.mkdir(exist_ok=True)
        (root / "e" / f"f{index}").write_bytes(b"")
    assert _walked(root)[1] == ["layout.limit: bundle: more than 40 entries"]


@pytest.mark.parametrize("case", ["plugin.json at the root", "a root file missing",
                                  "catalogue.json a directory", "SHA256SUMS a link"])
def test_a_directory_that_is_no_harness_bundle_has_a_native_bundles_limits(
        tmp_path: Path, small: None, case: str) -> None:
    root = _tree(tmp_path / "bundle", [*HARNESS_ROOT, *(f"d/f{i:02d}" for i in range(16))])
    if case == "plugin.json at the root":
        (root / "plugin.json").write_bytes(b"{}")
    elif case == "a root file missing":
        (root / "provenance.json").unlink()
    elif case == "catalogue.json a directory":
        (root / "catalogue.json").unlink()
        (root / "catalogue.json").mkdir()
        (root / "catalogue.json" / "x").write_bytes(b"")
    else:
        (root / "SHA256SUMS").unlink()
        (root / "SHA256SUMS").symlink_to("d/f00")
    assert "layout.limit: bundle: more than 10 entries" in _walked(root)[1]


def test_a_harness_root_whose_files_are_refused_is_walked_again_as_a_native_bundle(
        tmp_path: Path, small: None) -> None:
    """The root holds the three files, so the walk starts with the harness policy; one of them
    is refused (world-writable), so the files walked are no harness bundle: the directory is
    walked again with the native policy, and reported exactly as a native bundle."""
    root = _tree(tmp_path / "bundle", [*HARNESS_ROOT, *(f"d/f{i:02d}" for i in range(16))])
    (root / "SHA256SUMS").chmod(0o646)
    files, findings = _walked(root)
    assert "SHA256SUMS" not in files
    assert findings == ["layout.mode: bundle: file 'SHA256SUMS' has mode 646",
                        "layout.limit: bundle: more than 10 entries"]  # the native walk's only


@pytest.mark.parametrize(("root_files", "depth"), [((), limits.MAX_DEPTH),
                                                   (HARNESS_ROOT, limits.HARNESS_MAX_DEPTH)])
def test_a_directory_is_held_to_its_kinds_depth(tmp_path: Path, root_files: tuple[str, ...],
                                                depth: int) -> None:
    root = _tree(tmp_path / "deepest", list(root_files), depth=depth)
    assert _walked(root)[1] == []
    root = _tree(tmp_path / "deeper", list(root_files), depth=depth + 1)
    too_deep = "/".join(["d"] * (depth + 1))
    assert _walked(root)[1] == [
        f"layout.limit: deeper: {too_deep!r} lies deeper than {depth} directories"]


def test_a_harness_root_file_that_is_a_fifo_gives_no_harness_limits(
        tmp_path: Path, small: None) -> None:
    root = _tree(tmp_path / "bundle", ["SHA256SUMS", "provenance.json",
                                       *(f"d/f{i:02d}" for i in range(16))])
    os.mkfifo(root / "catalogue.json")
    assert stat.S_ISFIFO(os.lstat(root / "catalogue.json").st_mode)
    assert "layout.limit: bundle: more than 10 entries" in _walked(root)[1]
