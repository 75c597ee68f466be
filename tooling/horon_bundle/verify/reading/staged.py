"""A bundle directory build has just written, judged with the digests build took writing it.

Build copies each file into its staging directory through one SHA-256 (the library out of
cargo's target dir, the licence and sidecars from the workspace) and hashes the files it
generates from their bytes: those digests are facts build computed from the bytes it wrote,
not claims read from the bundle. Its self-check (`build.assemble`) runs every rule of
`verify.judge.NATIVE_CHECKS` on this source: the directory is walked by the same hardened
reader (types, modes, sizes, limits), plugin.json, SHA256SUMS and the provenance are read and
parsed, and the library's static section is read from its headers; only the full-file hash
of a file whose walked size is the size build wrote is taken from `written` instead of being
streamed again. A file whose size differs is hashed as any other, and judged by the same
integrity rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from horon_bundle.core.hashing import Digest
from horon_bundle.verify.reading.directory import DirectorySource


class StagedSource(DirectorySource):
    def __init__(self, root: Path, written: Mapping[str, Digest]) -> None:
        super().__init__(root)
        self._written = dict(written)

    def known_digest(self, path: str) -> Digest | None:
        digest = self._written.get(path)
        walked = self.files.get(path)
        if digest is None or walked is None or walked.size != digest.size:
            return None
        return digest
