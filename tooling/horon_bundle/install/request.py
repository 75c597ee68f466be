"""What `install` is asked to do (native and harness bundles alike)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.install.lock import DEFAULT_LOCK_TIMEOUT
from horon_bundle.verify.audit import AuditOptions
from horon_bundle.verify.harness.report import HarnessOptions


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallRequest:
    source: Path
    home: Path
    create_parents: bool = False
    options: AuditOptions = field(default_factory=AuditOptions)
    allow_qa: bool = False
    enable: bool = False
    lock_timeout: float = DEFAULT_LOCK_TIMEOUT
    harness: HarnessOptions = field(default_factory=HarnessOptions)  # harness zips only
    # the archive's SHA-256 a check before the install took (`--log`): the bytes admitted
    # must be those
    expected_sha256: str | None = None
