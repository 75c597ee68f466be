"""The verify report (format horon.verify-report.v1): every check of one bundle, in order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from horon_bundle.core.hashing import Digest
from horon_bundle.model.checks import CheckList

if TYPE_CHECKING:  # a harness report (a subclass) never reads a native manifest (start-up)
    from horon_bundle.model.manifest import Manifest
    from horon_bundle.model.provenance import Provenance
    from horon_bundle.model.qa import QaProvider

REPORT_FORMAT = "horon.verify-report.v1"


@dataclass(slots=True)
class VerifyReport(CheckList):
    path: str = ""
    manifest: Manifest | None = None
    provenance: Provenance | None = None
    digests: dict[str, Digest] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # where features.advertised took the advertised metadata from: "section" (recomputed from
    # the library), "recorded-only" (the build's claim alone), or None (not judged)
    advertised_source: str | None = None
    archive_digest: Digest | None = None  # of the archive file, when asked for (signatures)
    # the recorded graph's QA providers as graph.qa-free found them, and with which patterns
    # (inspect shows them rather than searching the graph again)
    qa_providers: tuple[QaProvider, ...] | None = None
    qa_patterns: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT, "path": self.path, "ok": self.ok,
            "bundle": None if self.manifest is None else {
                "id": self.manifest.id, "version": self.manifest.version,
                "target": self.manifest.target, "channel": self.manifest.channel},
            "advertised_source": self.advertised_source,
            "checks": [c.to_json() for c in self.checks],
            "notes": list(self.notes),
        }
