"""A plugin's file list indexed once, so each question about it costs a lookup, not a scan.

An untrusted zip holds up to 65,534 files and a plugin.json may name thousands of paths; asking
"is this a directory?" by scanning every name, once per path, made a 419 KB zip cost minutes
(docs/threat-model.md, "Work budgets"). Here the names are sorted once: membership is a set
lookup, and a directory's files are one contiguous range of the sorted list found by bisection
(every name under `d/` sorts between `d/` and `d0`, '0' being the character after '/').
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable


class FileIndex:
    """Regular files by relative POSIX path: membership, directories and subtrees."""

    __slots__ = ("_names", "_sorted")

    def __init__(self, paths: Iterable[str]) -> None:
        self._sorted = sorted(paths)
        self._names = frozenset(self._sorted)

    def __contains__(self, path: object) -> bool:
        return path in self._names

    def __len__(self) -> int:
        return len(self._sorted)

    def _range(self, directory: str) -> tuple[int, int]:
        if not directory:
            return 0, len(self._sorted)
        return (bisect_left(self._sorted, directory + "/"),
                bisect_left(self._sorted, directory + "0"))

    def is_directory(self, path: str) -> bool:
        """Some file lies below `path` ('' is the root: any file at all)."""
        start, end = self._range(path)
        return end > start

    def exists(self, path: str) -> bool:
        """A file, or a directory holding one."""
        return path in self._names or self.is_directory(path)

    def under(self, directory: str) -> list[str]:
        """Every file below `directory`, at any depth, sorted."""
        start, end = self._range(directory)
        return self._sorted[start:end]
