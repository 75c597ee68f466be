"""A validated archive as a `BundleSource`: its entries streamed, nothing extracted."""

from __future__ import annotations

import stat
from pathlib import Path

from horon_bundle.core.errors import Findings
from horon_bundle.core.hashing import Digest
from horon_bundle.verify.reading.archive_reader import ArchiveReader, validate_archive
from horon_bundle.verify.reading.archive_stream import ArchiveStream
from horon_bundle.verify.reading.interface import BundleFile, BundleSource


class ArchiveSource(BundleSource):
    def __init__(self, path: Path) -> None:
        self.label = path.name
        self._archive: ArchiveReader = validate_archive(path)
        self.files = {name: BundleFile(name, e.size, bool(e.mode & stat.S_IXUSR))
                      for name, e in self._archive.entries.items()}
        self.layout_findings = Findings()

    def open(self, path: str, *, resumable: bool = False) -> ArchiveStream:
        return self._archive.open(path, resumable=resumable)

    def start_digest(self) -> None:
        """Hash the archive from the bytes the entries are judged from (before reading)."""
        self._archive.start_digest()

    def archive_digest(self) -> Digest:
        return self._archive.digest()

    @property
    def digest_reread(self) -> int:
        """Bytes the digest read beyond what the entry streams read (0: one pass)."""
        return self._archive.reread

    def close(self) -> None:
        self._archive.close()
