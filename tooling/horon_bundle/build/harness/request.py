"""What a harness build is asked and what it answers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core.errors import Finding
from horon_bundle.model.harness.profile import HostProfile


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessBuildRequest:
    workspace: Path  # a plugin directory, or a marketplace repository
    out: Path
    host: HostProfile | None = None
    strict: bool = False
    builder: str | None = None
    epoch: int | None = None  # set: this SOURCE_DATE_EPOCH, whatever the environment says
    environ: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessBuilt:
    name: str
    version: str
    zip: Path
    ref: Path
    sha256: str
    events: tuple[str, ...]
    notes: tuple[str, ...] = ()  # e.g. a stale signature removed
    sbom: Path | None = None  # the CycloneDX SBOM written beside the zip


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessBuildResult:
    built: tuple[HarnessBuilt, ...]
    warnings: tuple[Finding, ...] = ()
    skipped: tuple[str, ...] = ()  # marketplace plugins that cannot be built offline
    index: Path | None = None  # the marketplace index, for a marketplace build
    notes: tuple[str, ...] = field(default_factory=tuple)
    statement: Path | None = None  # the run's release statement (*.intoto.jsonl)
