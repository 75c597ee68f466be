"""A tree judged path by path, as a listing names them (git's: the tracked files and the
untracked ones it does not ignore), by the rules of the walk (`core.tree`).

Each listed path is resolved component by component as the walk would (a link followed
inside the root, hop by hop); its file is taken, its directory walked whole; a path no longer
there is left out; nothing the listing does not name is looked at (ignored build output and
caches cost nothing). Each directory a listing passes through is resolved once, and the
listing's order (sorted: one directory's files together) keeps one directory open at a time.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from horon_bundle.core.tree import Frame, Tree, TreePolicy
from horon_bundle.core.tree_cursor import Cursor, Identity, Resolved, identity

_Place = tuple[tuple[str, ...], tuple[Identity, ...]]  # (real parts, ancestors' identities)


class ListedTree(Tree):
    """A `Tree` filled by `add`, one listed path at a time, instead of `walk`."""

    def __init__(self, root: Path, policy: TreePolicy, *, label: str, descriptors: bool,
                 exclude: tuple[Path, ...] = ()) -> None:
        super().__init__(root, policy, label=label, descriptors=descriptors, exclude=exclude)
        self._directories: dict[str, _Place | None] = {"": ((), (identity(self._root),))}
        self._held: tuple[tuple[str, ...], Cursor] | None = None

    def add(self, listed: str) -> None:
        """Judge one listed path: limits first (its length and depth, before any lookup),
        then each component resolved, then the entry itself as the walk judges one."""
        parts = listed.split("/")
        policy = self.policy
        if self._stopped or any(p in policy.skip_names for p in parts):
            return
        if len(listed.encode("utf-8", "surrogateescape")) > policy.max_path_bytes:
            self._add(policy.codes.limit, f"{self.label}: {listed[:80]!r}… is longer than "
                                          f"{policy.max_path_bytes} bytes")
            return
        if len(parts) - 1 > policy.max_depth:
            self._add(policy.codes.limit, f"{self._where(listed)} lies deeper than "
                                          f"{policy.max_depth} directories")
            return
        place = self._directory(parts[:-1])
        if place is None:
            return
        info = self._lstat(place[0], parts[-1], listed)
        if info is None:
            return
        prefix = "/".join(parts[:-1]) + "/" if len(parts) > 1 else ""
        subdirectory = self._entry(Frame(prefix, place[0], len(parts) - 1, place[1]),
                                   parts[-1], info)
        if subdirectory is not None:
            self._walk([subdirectory])

    def _directory(self, parts: list[str]) -> _Place | None:
        """Where the listed directory `parts` is (resolved once per directory); None when
        it is not there, or (with a finding) may not be entered."""
        place = self._directories[""]
        for index, name in enumerate(parts):
            relative = "/".join(parts[:index + 1])
            if relative not in self._directories:
                self._directories[relative] = self._step(place, name, relative)
            found = self._directories[relative]
            if found is None:
                return None
            place = found
        return place

    def _step(self, place: _Place | None, name: str, relative: str) -> _Place | None:
        if place is None:
            return None
        real, ancestors = place
        info = self._lstat(real, name, relative)
        if info is None:
            return None
        if stat.S_ISLNK(info.st_mode):
            target = self._follow(real, name, info, relative, ancestors)
        else:
            target = Resolved((*real, name), info)
        if target is None or self._left_out(target.real) or \
                not stat.S_ISDIR(target.info.st_mode):
            return None  # not followed, left out, or a file where git has a directory
        return target.real, (*ancestors, identity(target.info))

    def _lstat(self, real: tuple[str, ...], name: str, relative: str) -> os.stat_result | None:
        """lstat `name` in the directory `real` (kept open for the next listed path); None
        when it is not there (or, with a finding, cannot be looked at)."""
        try:
            if self._held is None or self._held[0] != real:
                self._release()
                self._held = (real, self._cursor(real))
            return self._held[1].lstat(name)
        except FileNotFoundError:
            return None
        except OSError as exc:
            self._add(self.policy.codes.changed, f"{self._where(relative)}: "
                                                 f"{exc.strerror or exc}")
            return None

    def _release(self) -> None:
        if self._held is not None:
            self._held[1].close()
            self._held = None

    def close(self) -> None:
        self._release()
        super().close()
