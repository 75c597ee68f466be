"""The verify report of a harness bundle: the native report's checks plus what a harness
bundle is (name, version, catalogue) and the host it was judged against."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.verify.harness.options import HarnessOptions
from horon_bundle.verify.report import VerifyReport

if TYPE_CHECKING:  # a native verify builds this report too: no harness model at start-up
    from horon_bundle.model.harness.catalogue import Catalogue
    from horon_bundle.model.harness.profile import HostProfile
    from horon_bundle.model.harness.statement import HarnessFacts

__all__ = ["REPORT_FORMAT", "HarnessOptions", "HarnessReport"]

REPORT_FORMAT = "horon.harness-verify-report.v1"


@dataclass(slots=True)
class HarnessReport(VerifyReport):
    catalogue: Catalogue | None = None
    host: HostProfile | None = None
    ref_sha256: str | None = None
    scripts: list[str] = field(default_factory=list)
    facts: HarnessFacts | None = None  # what its provenance statement says (policies read it)

    def to_json(self) -> dict[str, Any]:
        return {
            "format": REPORT_FORMAT, "path": self.path, "ok": self.ok,
            "kind": BundleKind.HARNESS,
            "bundle": None if self.catalogue is None else {
                "name": self.catalogue.name, "version": self.catalogue.version,
                "events": list(self.catalogue.events),
                "host": None if self.host is None else self.host.token},
            "ref": self.ref_sha256,
            "checks": [c.to_json() for c in self.checks],
            "warnings": [f.to_dict() for f in self.warnings],
            "notes": list(self.notes),
        }
