"""The reproduce report (format horon.reproduce-report.v1): every file and field compared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core.errors import Finding
from horon_bundle.core.hashing import Digest
from horon_bundle.model.manifest import Manifest

REPORT_FORMAT = "horon.reproduce-report.v1"
IDENTICAL, DIFFERENT, MISSING, EXTRA = "identical", "different", "missing", "extra"


@dataclass(slots=True)
class FileComparison:
    path: str
    role: str
    result: str
    recorded: Digest | None
    rebuilt: Digest | None
    first_difference: int | None = None

    def to_json(self) -> dict[str, Any]:
        def digest(d: Digest | None) -> dict[str, Any] | None:
            return None if d is None else {"sha256": d.sha256, "size": d.size}

        return {"path": self.path, "role": self.role, "result": self.result,
                "recorded": digest(self.recorded), "rebuilt": digest(self.rebuilt),
                "first_difference": self.first_difference}


@dataclass(frozen=True, slots=True)
class FieldDifference:
    file: str
    field: str
    recorded: Any
    rebuilt: Any

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "field": self.field, "recorded": self.recorded,
                "rebuilt": self.rebuilt}


@dataclass(slots=True)
class ReproduceReport:
    path: str
    source: str
    manifest: Manifest | None = None
    built: bool = False
    toolchain: dict[str, dict[str, str]] = field(default_factory=dict)
    revision: dict[str, Any] = field(default_factory=dict)
    files: list[FileComparison] = field(default_factory=list)
    fields: list[FieldDifference] = field(default_factory=list)
    archive: dict[str, Any] | None = None
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def identical(self) -> bool:
        return self.built and not self.findings

    def to_json(self) -> dict[str, Any]:
        manifest = self.manifest
        return {
            "format": REPORT_FORMAT, "path": self.path, "source": self.source,
            "identical": self.identical, "built": self.built,
            "bundle": None if manifest is None else {
                "id": manifest.id, "version": manifest.version, "target": manifest.target,
                "channel": manifest.channel},
            "toolchain": self.toolchain, "source_revision": self.revision,
            "archive": self.archive,
            "files": [f.to_json() for f in self.files],
            "fields": [f.to_json() for f in self.fields],
            "findings": [f.to_dict() for f in self.findings],
            "notes": list(self.notes),
        }
