"""What `build` and `compile` are asked, and what they answer (the stage's models)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.model.manifest import Manifest
from horon_bundle.verify.signature import SignatureVerifier

CHANNELS = ("release", "qa")


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildRequest:
    workspace: Path | None  # None: the workspace holding the current directory
    out: Path | None  # None: <workspace>/dist
    plugin_id: str | None = None
    all_plugins: bool = False  # every declared plugin, in this one run (not with plugin_id)
    targets: tuple[str, ...] = ()
    all_targets: bool = False
    channel: str = "release"
    target_dir: Path | None = None
    prebuilt: Path | None = None
    record: Path | None = None
    builder: str | None = None
    probe_timeout: float = 20.0
    epoch: int | None = None  # set: this SOURCE_DATE_EPOCH, whatever the environment says
    record_signer: SignatureVerifier | None = None  # set: --record must carry its signature
    environ: Mapping[str, str] | None = None  # the build's environment (default: this one)


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildResult:
    bundle: Path
    archive: Path
    archive_sha256: str
    manifest: Manifest
    qa_providers: tuple[str, ...]
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()  # e.g. a dirty source tree: recorded, and said
    statement: Path | None = None  # the run's release statement (*.intoto.jsonl)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompileRequest:
    workspace: Path | None
    out: Path | None
    plugin_id: str | None = None
    targets: tuple[str, ...] = ()
    channel: str = "release"
    target_dir: Path | None = None
    probe_timeout: float = 20.0


@dataclass(frozen=True, slots=True, kw_only=True)
class Compiled:
    library: Path
    record: Path
    sha256: str
    target: str
