"""`horon-bundle reproduce`: rebuild a bundle from source as recorded and compare, byte by byte.

Order: the bundle must verify; its evidence must be a recorded cargo invocation; the
toolchain here (cargo, rustc, host, horon-bundle) must equal the recorded one, and a git
checkout must be at the recorded revision, clean — both checked *before* anything is built.
Then the same pipeline as `build` (`build.build`) rebuilds it into a fresh directory, with
the recorded plugin, target, channel, builder id and SOURCE_DATE_EPOCH, and the recorded
(allowlisted) build environment in place of this shell's. Every file is compared: the
library and sidecars byte for byte (digests, sizes, first differing offset), JSON files
field by field (provenance: every field but the builder identity), the archive by digest.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import horon_bundle
from horon_bundle import codes
from horon_bundle.build import BuildRequest, build
from horon_bundle.bundle_source import BundleSource, ByteStream, open_bundle
from horon_bundle.cargo_build import PathNormaliser, recorded_environment
from horon_bundle.errors import Finding, Findings, Refused
from horon_bundle.evidence import EVIDENCE_INVOCATION
from horon_bundle.hashing import CHUNK, Digest, hash_file
from horon_bundle.manifest import MANIFEST_NAME, Manifest
from horon_bundle.provenance import BuildFacts
from horon_bundle.reporter import Reporter, SilentReporter
from horon_bundle.source_facts import source_facts
from horon_bundle.strictjson import read_json
from horon_bundle.toolchain import probe_toolchain
from horon_bundle.verify import verify_path

REPORT_FORMAT = "horon.reproduce-report.v1"
BUILDER_ID_FIELD = "predicate.runDetails.builder.id"
TOOLCHAIN_FACTS = ("cargo", "rustc", "rustc_commit", "host")
MAX_JSON_BYTES = 32 << 20
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


def reproduce(path: Path, source: Path, *, out: Path | None = None,
              reporter: Reporter | None = None) -> ReproduceReport:
    """Rebuild the bundle at `path` from the checkout `source` and compare everything."""
    reporter = reporter or SilentReporter()
    if not source.is_dir():
        raise Refused.one(codes.INPUT_UNREADABLE, f"--source {source}: not a directory")
    verified = verify_path(path)
    if not verified.ok:
        raise Refused(verified.findings)
    assert verified.manifest is not None and verified.provenance is not None
    facts = verified.provenance.facts
    report = ReproduceReport(path=str(path), source=str(source), manifest=verified.manifest)
    if facts.evidence != EVIDENCE_INVOCATION or facts.invocation is None:
        raise Refused.one(codes.REPRODUCE_EVIDENCE,
                          f"{path.name}: evidence is {facts.evidence!r}: no cargo invocation "
                          "recorded in this bundle to re-run")
    workspace = source.resolve()
    reporter.step("checking the recorded toolchain and source revision")
    _check_toolchain(workspace, facts, report)
    _check_revision(workspace, facts, report)
    if report.findings:
        return report
    with contextlib.ExitStack() as stack:
        base = out if out is not None else Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="horon-reproduce-")))
        target_dir = Path(stack.enter_context(
            tempfile.TemporaryDirectory(prefix="horon-reproduce-target-")))
        environment = _recorded_environment(facts, workspace=workspace, target_dir=target_dir)
        reporter.step(f"rebuilding {facts.plugin_id} {facts.version} for {facts.target} "
                      f"({facts.channel}) from {workspace}")
        with _environment(environment):
            results = build(BuildRequest(
                workspace=workspace, out=base, plugin_id=facts.plugin_id,
                targets=(facts.target,), channel=facts.channel, target_dir=target_dir,
                builder=facts.builder_id, epoch=facts.source_date_epoch), reporter)
        report.built = True
        rebuilt = results[0]
        reporter.step("comparing the rebuilt bundle with the recorded one")
        with open_bundle(path) as recorded_source, open_bundle(rebuilt.bundle) as new_source:
            _compare_files(recorded_source, new_source, verified.manifest, report)
        if path.is_file():
            _compare_archive(path, rebuilt.archive, report)
        if out is not None:
            report.notes.append(f"rebuilt bundle kept in {rebuilt.bundle}")
    return report


def _check_toolchain(workspace: Path, facts: BuildFacts, report: ReproduceReport) -> None:
    assert facts.invocation is not None
    recorded = {key: str(facts.invocation.toolchain.get(key, "(not recorded)"))
                for key in TOOLCHAIN_FACTS}
    recorded["horon-bundle"] = facts.tool_version or "(not recorded)"
    here = dict(probe_toolchain(workspace).to_json())
    here["horon-bundle"] = horon_bundle.__version__
    report.toolchain = {"recorded": recorded, "here": {k: here.get(k, "") for k in recorded}}
    for key, value in recorded.items():
        if here.get(key) != value:
            report.findings.append(Finding(
                codes.REPRODUCE_TOOLCHAIN,
                f"toolchain {key}: recorded {value!r}, here {here.get(key)!r}"))


def _check_revision(workspace: Path, facts: BuildFacts, report: ReproduceReport) -> None:
    here = source_facts(workspace)
    report.revision = {"recorded": facts.source_revision, "recorded_dirty": facts.source_dirty,
                       "here": here.revision, "here_dirty": here.dirty}
    if facts.source_revision is None:
        return
    if here.revision is None:
        report.notes.append(f"{workspace} is not a git checkout: its revision cannot be checked "
                            f"against the recorded {facts.source_revision}")
        return
    if here.revision != facts.source_revision:
        report.findings.append(Finding(
            codes.REPRODUCE_SOURCE, f"{workspace} is at revision {here.revision}, the bundle "
                                    f"was built from {facts.source_revision}"))
    elif here.dirty and not facts.source_dirty:
        report.findings.append(Finding(
            codes.REPRODUCE_SOURCE, f"{workspace} has local changes; the bundle was built from "
                                    f"a clean checkout of {facts.source_revision}"))


def _recorded_environment(facts: BuildFacts, *, workspace: Path,
                          target_dir: Path) -> dict[str, str | None]:
    """This shell's allowlisted build variables removed, the recorded ones set (expanded)."""
    assert facts.invocation is not None
    places = {"$WORKSPACE": str(workspace), "$TARGET_DIR": str(target_dir),
              "$CARGO_HOME": os.environ.get("CARGO_HOME") or str(Path.home() / ".cargo"),
              "$HOME": str(Path.home())}
    changes: dict[str, str | None] = dict.fromkeys(
        recorded_environment(os.environ, PathNormaliser({})))
    for name, recorded in facts.invocation.env.items():
        value = recorded
        for placeholder, actual in places.items():
            value = value.replace(placeholder, actual)
        changes[name] = value
    return changes


@contextlib.contextmanager
def _environment(changes: Mapping[str, str | None]) -> Iterator[None]:
    """Apply `changes` (None: unset) to this process's environment for the block."""
    saved = {name: os.environ.get(name) for name in changes}
    try:
        for name, value in changes.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _role(path: str, manifest: Manifest) -> str:
    if path == manifest.library.path:
        return "library"
    if any(s.file.path == path for s in manifest.sidecars):
        return "sidecar"
    asset = manifest.asset("provenance")
    if asset is not None and asset.file.path == path:
        return "provenance"
    return "file"


def _compare_files(recorded: BundleSource, rebuilt: BundleSource, manifest: Manifest,
                   report: ReproduceReport) -> None:
    findings = Findings()
    libraries = Findings()  # reported first: the library is what the auditor came for
    for path in sorted(set(recorded.files) | set(rebuilt.files)):
        role = _role(path, manifest)
        if path not in rebuilt.files:
            digest = _digest(recorded, path)
            report.files.append(FileComparison(path, role, MISSING, digest, None))
            findings.add(codes.REPRODUCE_FILE, f"{path}: not in the rebuilt bundle")
            continue
        if path not in recorded.files:
            digest = _digest(rebuilt, path)
            report.files.append(FileComparison(path, role, EXTRA, None, digest))
            findings.add(codes.REPRODUCE_FILE, f"{path}: only in the rebuilt bundle")
            continue
        comparison = _compare_streams(path, role, recorded, rebuilt)
        report.files.append(comparison)
        if comparison.result == IDENTICAL:
            continue
        assert comparison.recorded is not None and comparison.rebuilt is not None
        summary = (f"{path}: recorded sha256 {comparison.recorded.sha256} "
                   f"({comparison.recorded.size} bytes), rebuilt sha256 "
                   f"{comparison.rebuilt.sha256} ({comparison.rebuilt.size} bytes), first "
                   f"difference at byte {comparison.first_difference}")
        if role in ("library", "sidecar"):
            libraries.add(codes.REPRODUCE_LIBRARY, summary)
            continue
        differences = _json_differences(path, recorded, rebuilt)
        if role == "provenance" and differences is not None:
            report.fields.extend(differences)
            for item in differences:
                findings.add(codes.REPRODUCE_PROVENANCE,
                             f"{path}: {item.field}: recorded {_short(item.recorded)}, "
                             f"rebuilt {_short(item.rebuilt)}")
            if not differences:
                findings.add(codes.REPRODUCE_FILE, summary + " (same fields, other bytes)")
            continue
        if differences:
            report.fields.extend(differences)
            fields = ", ".join(d.field for d in differences[:5])
            more = f" and {len(differences) - 5} more" if len(differences) > 5 else ""
            summary += f"; fields: {fields}{more}"
        findings.add(codes.REPRODUCE_FILE, summary)
    report.findings.extend(libraries)
    report.findings.extend(findings)


def _digest(source: BundleSource, path: str) -> Digest:
    hasher = hashlib.sha256()
    size = 0
    stream = source.open(path)
    try:
        while chunk := stream.read(CHUNK):
            hasher.update(chunk)
            size += len(chunk)
    finally:
        stream.close()
    return Digest(hasher.hexdigest(), size)


def _read_exact(stream: ByteStream, size: int) -> bytes:
    parts: list[bytes] = []
    wanted = size
    while wanted > 0:
        chunk = stream.read(wanted)
        if not chunk:
            break
        parts.append(chunk)
        wanted -= len(chunk)
    return b"".join(parts)


def _compare_streams(path: str, role: str, recorded: BundleSource,
                     rebuilt: BundleSource) -> FileComparison:
    """Both digests and the first differing offset, in one streaming pass over each."""
    left, right = recorded.open(path), rebuilt.open(path)
    try:
        hashers = (hashlib.sha256(), hashlib.sha256())
        sizes = [0, 0]
        first: int | None = None
        while True:
            a, b = _read_exact(left, CHUNK), _read_exact(right, CHUNK)
            if not a and not b:
                break
            if first is None and a != b:
                common = min(len(a), len(b))
                offset = next((i for i in range(common) if a[i] != b[i]), common)
                first = sizes[0] + offset
            hashers[0].update(a)
            hashers[1].update(b)
            sizes[0] += len(a)
            sizes[1] += len(b)
    finally:
        left.close()
        right.close()
    return FileComparison(path, role, IDENTICAL if first is None else DIFFERENT,
                          Digest(hashers[0].hexdigest(), sizes[0]),
                          Digest(hashers[1].hexdigest(), sizes[1]), first)


def _json_differences(path: str, recorded: BundleSource,
                      rebuilt: BundleSource) -> list[FieldDifference] | None:
    """Field-by-field differences of two JSON files (None: not both JSON)."""
    if not (path.endswith(".json") or path == MANIFEST_NAME):
        return None
    try:
        old = read_json(recorded.read_small(path, MAX_JSON_BYTES), source=path,
                        max_bytes=MAX_JSON_BYTES)
        new = read_json(rebuilt.read_small(path, MAX_JSON_BYTES), source=path,
                        max_bytes=MAX_JSON_BYTES)
    except Refused:
        return None
    flat_old, flat_new = flatten(old), flatten(new)
    return [FieldDifference(path, key, flat_old.get(key), flat_new.get(key))
            for key in sorted(set(flat_old) | set(flat_new))
            if key != BUILDER_ID_FIELD and flat_old.get(key) != flat_new.get(key)]


def flatten(value: object, prefix: str = "") -> dict[str, Any]:
    """Dotted paths to leaves; list items are keyed by `name` (or `path`, `id`) when they have
    one, so an inserted entry shows as one difference, not a shifted list."""
    if isinstance(value, dict):
        flat: dict[str, Any] = {}
        for key, item in value.items():
            flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
        return flat if value else {prefix: {}}
    if isinstance(value, list):
        flat = {}
        labels = [_item_label(item) for item in value]
        unique = None not in labels and len(set(labels)) == len(labels)
        for index, item in enumerate(value):
            key = f"{prefix}[{labels[index] if unique else index}]"
            flat.update(flatten(item, key))
        return flat if value else {prefix: []}
    return {prefix: value}


def _item_label(item: object) -> str | None:
    if isinstance(item, dict):
        for key in ("name", "path", "id", "bom-ref"):
            label = item.get(key)
            if isinstance(label, str):
                return f"{key}={label}"
    return None


def _compare_archive(recorded: Path, rebuilt: Path, report: ReproduceReport) -> None:
    old, new = hash_file(recorded), hash_file(rebuilt)
    report.archive = {"recorded": {"sha256": old.sha256, "size": old.size},
                      "rebuilt": {"sha256": new.sha256, "size": new.size},
                      "identical": old == new}
    if old != new and not report.findings:
        report.findings.append(Finding(
            codes.REPRODUCE_FILE, f"{recorded.name}: every file is identical but the archive "
                                  f"is not: recorded sha256 {old.sha256}, rebuilt {new.sha256}"))


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 160 else text[:157] + "..."
