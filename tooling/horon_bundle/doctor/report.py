"""The doctor's report (format horon.doctor-report.v1): one check per contract clause.

Each check says what was expected and what the library did; a failed one carries findings
with registered codes, and the exit status follows from them (1 for a refused bundle, 3
when only the environment stood in the way).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from horon_bundle.model.checks import CheckList

REPORT_FORMAT = "horon.doctor-report.v1"


@dataclass(slots=True)
class DoctorReport(CheckList):
    path: str = ""
    host: str | None = None
    host_source: str = ""
    bundle: dict[str, Any] | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT, "path": self.path, "ok": self.ok,
            "exit_status": self.exit_status, "host": self.host,
            "host_source": self.host_source, "bundle": self.bundle,
            "environment": dict(self.environment),
            "checks": [c.to_json(values=True) for c in self.checks], "notes": list(self.notes),
        }
