"""A bundle directory, walked and read by the one hardened tree reader (`core.tree`).

The bundle policy (`limits.bundle_tree`): at most `limits.MAX_ENTRIES` entries,
`limits.MAX_DEPTH` levels and `limits.MAX_NAME_BYTES` bytes per relative path, files of at
most `limits.MAX_ENTRY_BYTES` and `limits.MAX_TOTAL_BYTES` in all (judged from the listing's
lstat, before a byte is read: the archive's limits, so both forms of a bundle hold the same);
past a limit the walk stops with `layout.limit` instead of going on.

Every entry is judged by the same rules as an archive's: regular files only (no symbolic
link, hard link, FIFO, socket or device), no setuid, setgid or world-writable file *or
directory* (the bundle directory itself included), no empty directory. Each file is opened
once for reading, judged again on that descriptor and streamed from it: a file replaced,
removed, retyped or grown between the walk and the read is `layout.changed`.
"""

from __future__ import annotations

import errno
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.tree import Tree
from horon_bundle.core.tree_cursor import DIR_FDS
from horon_bundle.core.tree_stream import TreeStream
from horon_bundle.verify import limits
from horon_bundle.verify.reading.interface import BundleFile, BundleSource

__all__ = ["DIR_FDS", "DirectorySource"]  # DIR_FDS: switched off by tests (the path walk)


class DirectorySource(BundleSource):
    def __init__(self, root: Path) -> None:
        self.root = root
        self.label = root.name
        try:
            self._tree = Tree(root, limits.bundle_tree(), label=self.label,
                              descriptors=DIR_FDS)
        except OSError as exc:
            # replaced by a link since open_bundle's lstat: ELOOP, or ENOTDIR where
            # O_DIRECTORY is judged before O_NOFOLLOW (Linux)
            if exc.errno == errno.ELOOP or (exc.errno == errno.ENOTDIR and root.is_symlink()):
                raise Refused.one(codes.LAYOUT_SYMLINK,
                                  f"{root}: the bundle path is a symbolic link") from None
            raise Refused.one(codes.INPUT_UNREADABLE, f"{root}: {exc.strerror or exc}") from None
        try:
            self._tree.walk()
        except BaseException:
            self.close()
            raise
        self.layout_findings = self._tree.findings
        self.files = {path: BundleFile(path, item.size, item.executable)
                      for path, item in self._tree.files.items()}

    def open(self, path: str, *, resumable: bool = False) -> TreeStream:
        return self._tree.open(path)

    def close(self) -> None:
        self._tree.close()
