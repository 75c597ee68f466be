"""A bundle directory, walked and read by the one hardened tree reader (`core.tree`).

The bundle policy (`limits.bundle_tree`): at most `limits.MAX_ENTRIES` entries,
`limits.MAX_DEPTH` levels and `limits.MAX_NAME_BYTES` bytes per relative path, files of at
most `limits.MAX_ENTRY_BYTES` and `limits.MAX_TOTAL_BYTES` in all (judged from the listing's
lstat, before a byte is read: the archive's limits, so both forms of a bundle hold the same);
past a limit the walk stops with `layout.limit` instead of going on. An unpacked harness
bundle has the entries and depth of the plugin tree it was built from
(`limits.harness_bundle_tree`), chosen before the walk from the root's names (the root files
build writes, no native plugin.json) and kept only when the files walked are a harness bundle
(`limits.harness_shaped`); otherwise the directory is walked again with the bundle policy, as
if the harness policy had never been tried: a native bundle never has the larger limits.

Every entry is judged by the same rules as an archive's: regular files only (no symbolic
link, hard link, FIFO, socket or device), no setuid, setgid or world-writable file *or
directory* (the bundle directory itself included), no empty directory. Each file is opened
once for reading, judged again on that descriptor and streamed from it: a file replaced,
removed, retyped or grown between the walk and the read is `layout.changed`.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.tree import Tree, TreePolicy
from horon_bundle.core.tree_cursor import DIR_FDS
from horon_bundle.core.tree_stream import TreeStream
from horon_bundle.verify import limits
from horon_bundle.verify.reading.interface import BundleFile, BundleSource

__all__ = ["DIR_FDS", "DirectorySource"]  # DIR_FDS: switched off by tests (the path walk)


class DirectorySource(BundleSource):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.label = root.name
        harness = _harness_root(root)
        self._tree = self._walked(limits.harness_bundle_tree() if harness else
                                  limits.bundle_tree())
        if harness and not limits.harness_shaped(self._tree.files):
            self._tree.close()  # its root changed since it was looked at: read it as native
            self._tree = self._walked(limits.bundle_tree())
        self.layout_findings = self._tree.findings
        self.files = {path: BundleFile(path, item.size, item.executable)
                      for path, item in self._tree.files.items()}

    def _walked(self, policy: TreePolicy) -> Tree:
        root = self.root
        try:
            tree = Tree(root, policy, label=self.label, descriptors=DIR_FDS)
        except OSError as exc:
            # replaced by a link since open_bundle's lstat: ELOOP, or ENOTDIR where
            # O_DIRECTORY is judged before O_NOFOLLOW (Linux)
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and root.is_symlink()):
                raise Refused.one(codes.LAYOUT_SYMLINK,
                                  f"{root}: the bundle path is a symbolic link") from None
            raise Refused.one(codes.INPUT_UNREADABLE, f"{root}: {exc.strerror or exc}") from None
        try:
            tree.walk()
        except BaseException:
            tree.close()
            raise
        return tree

    def open(self, path: str, *, resumable: bool = False) -> TreeStream:
        return self._tree.open(path)

    def close(self) -> None:
        self._tree.close()


def _harness_root(root: Path) -> bool:
    """Whether the root holds a harness bundle's root files, as regular files, and nothing
    named plugin.json: an lstat each, before the walk (the files walked decide in the end)."""
    if _lstat(root / limits.NATIVE_MANIFEST) is not None:
        return False
    return all((info := _lstat(root / name)) is not None and stat.S_ISREG(info.st_mode)
               for name in limits.HARNESS_ROOT_FILES)


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None
