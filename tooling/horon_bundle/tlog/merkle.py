"""RFC 6962 / RFC 9162 Merkle trees over a node reader: hashes, inclusion and consistency
proofs, and their checks.

A node is (level, index): level 0 holds leaf hashes, the node (h, i) is the hash of leaves
[i * 2**h, (i + 1) * 2**h). `NodeReader` answers for complete nodes only; every range hash
here is built from O(log n) of them, so a proof reads a few tiles.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence

HASH_SIZE = 32
NodeReader = Callable[[int, int], bytes]


def leaf_hash(data: bytes) -> bytes:
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    return hashlib.sha256(b"\x01" + left + right).digest()


EMPTY_ROOT = hashlib.sha256(b"").digest()


def _split(width: int) -> int:
    """The largest power of two below `width` (width >= 2)."""
    return 1 << ((width - 1).bit_length() - 1)


def range_hash(lo: int, hi: int, node: NodeReader) -> bytes:
    """MTH(D[lo:hi]) for a range that starts on a subtree boundary RFC 6962 produces."""
    width = hi - lo
    if width == 0:
        return EMPTY_ROOT
    if width & (width - 1) == 0 and lo % width == 0:
        level = width.bit_length() - 1
        return node(level, lo >> level)
    k = _split(width)
    return node_hash(range_hash(lo, lo + k, node), range_hash(lo + k, hi, node))


def tree_hash(size: int, node: NodeReader) -> bytes:
    return range_hash(0, size, node)


def inclusion_proof(index: int, size: int, node: NodeReader) -> list[bytes]:
    """RFC 6962 PATH(index, D[0:size])."""
    if not 0 <= index < size:
        raise ValueError(f"index {index} outside a tree of {size}")
    proof: list[bytes] = []
    lo, hi = 0, size
    while hi - lo > 1:
        k = _split(hi - lo)
        if index < lo + k:
            proof.append(range_hash(lo + k, hi, node))
            hi = lo + k
        else:
            proof.append(range_hash(lo, lo + k, node))
            lo = lo + k
    proof.reverse()
    return proof


def root_from_inclusion(leaf: bytes, index: int, size: int, proof: Sequence[bytes]) -> bytes | None:
    """The root `proof` leads to from `leaf` at `index` (RFC 9162 2.1.3.2), None if malformed."""
    if not 0 <= index < size:
        return None
    fn, sn, value = index, size - 1, leaf
    for sibling in proof:
        if sn == 0:
            return None
        if fn & 1 or fn == sn:
            value = node_hash(sibling, value)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            value = node_hash(value, sibling)
        fn >>= 1
        sn >>= 1
    return value if sn == 0 else None


def consistency_proof(old: int, new: int, node: NodeReader) -> list[bytes]:
    """RFC 6962 PROOF(old, D[0:new]) (empty when old is 0 or equal to new)."""
    if not 0 <= old <= new:
        raise ValueError(f"sizes {old} > {new}")
    if old in (0, new):
        return []
    proof: list[bytes] = []
    lo, hi, m, complete = 0, new, old, True
    while m != hi - lo:
        k = _split(hi - lo)
        if m <= k:
            proof.append(range_hash(lo + k, hi, node))
            hi = lo + k
        else:
            proof.append(range_hash(lo, lo + k, node))
            lo, m, complete = lo + k, m - k, False
    if not complete:
        proof.append(range_hash(lo, hi, node))
    proof.reverse()
    return proof


def consistent(old: int, new: int, old_root: bytes, new_root: bytes,
               proof: Sequence[bytes]) -> bool:
    """RFC 9162 2.1.4.2: does `proof` show the tree of `new` leaves extends that of `old`."""
    if old > new or old < 0:
        return False
    if old == new:
        return not proof and old_root == new_root
    if old == 0:
        return not proof
    path = list(proof)
    if old & (old - 1) == 0:
        path.insert(0, old_root)
    if not path:
        return False
    fn, sn = old - 1, new - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    first = second = path[0]
    for sibling in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            first = node_hash(sibling, first)
            second = node_hash(sibling, second)
            while not fn & 1 and fn != 0:
                fn >>= 1
                sn >>= 1
        else:
            second = node_hash(second, sibling)
        fn >>= 1
        sn >>= 1
    return sn == 0 and first == old_root and second == new_root
