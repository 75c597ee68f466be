"""The tree against a naive recomputation: RFC 6962's MTH, PATH and PROOF written as the RFC
states them, over lists; the library builds its tiles by appending in random chunks and
answers from the tiles only."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.tlog.merkle import (
    consistency_proof,
    consistent,
    inclusion_proof,
    leaf_hash,
    node_hash,
    root_from_inclusion,
    tree_hash,
)
from horon_bundle.tlog.tiles import TileReader, append_tiles, overlay, tile_path

MAX_LEAVES = 3000


def _k(n: int) -> int:
    k = 1
    while k * 2 < n:
        k *= 2
    return k


class Naive:
    """RFC 6962 section 2.1 as written, over ranges of one list of leaf hashes (each range
    hash computed once: the recursion is the RFC's, the memo only saves repeating it)."""

    def __init__(self, leaves: list[bytes]) -> None:
        self.leaves = leaves
        self.memo: dict[tuple[int, int], bytes] = {}

    def mth(self, lo: int, hi: int) -> bytes:
        if hi - lo == 0:
            return hashlib.sha256(b"").digest()
        if hi - lo == 1:
            return self.leaves[lo]
        if (lo, hi) not in self.memo:
            k = _k(hi - lo)
            self.memo[lo, hi] = node_hash(self.mth(lo, lo + k), self.mth(lo + k, hi))
        return self.memo[lo, hi]

    def path(self, m: int, lo: int, hi: int) -> list[bytes]:
        if hi - lo == 1:
            return []
        k = _k(hi - lo)
        if m < k:
            return [*self.path(m, lo, lo + k), self.mth(lo + k, hi)]
        return [*self.path(m - k, lo + k, hi), self.mth(lo, lo + k)]

    def subproof(self, m: int, lo: int, hi: int, complete: bool) -> list[bytes]:
        if m == hi - lo:
            return [] if complete else [self.mth(lo, hi)]
        k = _k(hi - lo)
        if m <= k:
            return [*self.subproof(m, lo, lo + k, complete), self.mth(lo + k, hi)]
        return [*self.subproof(m - k, lo + k, hi, False), self.mth(lo, lo + k)]


def mth(d: list[bytes]) -> bytes:
    return Naive(d).mth(0, len(d))


def build(sizes: list[int]) -> tuple[list[bytes], dict[str, bytes]]:
    """Entries appended in chunks of `sizes`; the files the appends wrote."""
    files: dict[str, bytes] = {}
    entries: list[bytes] = []
    for chunk in sizes:
        new = [f"entry {len(entries) + i}".encode() for i in range(chunk)]
        files.update(append_tiles(TileReader(files.get, len(entries)), new))
        entries += new
    return entries, files


chunks = st.lists(st.integers(min_value=1, max_value=700), min_size=1, max_size=6).filter(
    lambda sizes: sum(sizes) <= MAX_LEAVES)


@pytest.mark.slow
@given(chunks, st.data())
def test_inclusion_proofs_match_the_rfc(sizes: list[int], data: st.DataObject) -> None:
    entries, files = build(sizes)
    leaves = [leaf_hash(e) for e in entries]
    size = data.draw(st.integers(min_value=1, max_value=len(entries)))
    index = data.draw(st.integers(min_value=0, max_value=size - 1))
    reader = TileReader(files.get, len(entries))  # the latest tree answers for older ones
    root = tree_hash(size, reader.node)
    naive = Naive(leaves)
    assert root == naive.mth(0, size)
    proof = inclusion_proof(index, size, reader.node)
    assert proof == naive.path(index, 0, size)
    assert root_from_inclusion(leaves[index], index, size, proof) == root
    assert root_from_inclusion(leaf_hash(b"other"), index, size, proof) != root
    if proof:
        assert root_from_inclusion(leaves[index], index, size, proof[:-1]) != root


@pytest.mark.slow
@given(chunks, st.data())
def test_consistency_proofs_match_the_rfc(sizes: list[int], data: st.DataObject) -> None:
    entries, files = build(sizes)
    leaves = [leaf_hash(e) for e in entries]
    new = data.draw(st.integers(min_value=1, max_value=len(entries)))
    old = data.draw(st.integers(min_value=1, max_value=new))
    reader = TileReader(files.get, len(entries))
    proof = consistency_proof(old, new, reader.node)
    naive = Naive(leaves)
    assert proof == (naive.subproof(old, 0, new, True) if old < new else [])
    old_root, new_root = naive.mth(0, old), naive.mth(0, new)
    assert consistent(old, new, old_root, new_root, proof)
    forked = mth([*leaves[:old - 1], leaf_hash(b"forked")])
    assert not consistent(old, new, forked, new_root, proof)
    if old < new:
        assert not consistent(old, new, old_root, mth([*leaves[:new - 1], leaf_hash(b"x")]),
                              proof)


def test_tiles_are_named_and_sized_as_the_spec_says() -> None:
    """70,000 leaves: 273 full level-0 tiles and one of width 112, one full level-1 tile and
    one of width 17, one level-2 tile of width 1 (tlog-tiles' own example)."""
    _, files = build([70_000 - 1, 1])
    assert len([p for p in files if p.startswith("tile/0/") and ".p/" not in p]) == 273
    assert "tile/0/273.p/112" in files and "tile/1/000" in files
    assert "tile/1/001.p/17" in files and "tile/2/000.p/1" in files
    assert tile_path(0, 1234067) == "tile/0/x001/x234/067"
    assert tile_path("entries", 5, 7) == "tile/entries/005.p/7"


def test_an_overlay_sees_its_writes_first() -> None:
    assert overlay({"a": b"1"}.get, {"a": b"2"})("a") == b"2"
