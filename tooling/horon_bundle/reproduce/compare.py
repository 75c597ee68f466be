"""Comparing a rebuilt bundle with the recorded one: bytes, digests, first difference, fields.

The library and sidecars are compared byte for byte (both digests and the first differing
offset, in one streaming pass over each); JSON files field by field (provenance: every field
but the builder identity); the archive by digest.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.hashing import CHUNK, Digest, hash_file
from horon_bundle.core.streams import ByteStream
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.manifest import MANIFEST_NAME, Manifest
from horon_bundle.reproduce.report import (
    DIFFERENT,
    EXTRA,
    IDENTICAL,
    MISSING,
    FieldDifference,
    FileComparison,
    ReproduceReport,
)
from horon_bundle.verify.reading.interface import BundleSource

BUILDER_ID_FIELD = "predicate.runDetails.builder.id"
MAX_JSON_BYTES = 32 << 20


def _role(path: str, manifest: Manifest) -> str:
    if path == manifest.library.path:
        return "library"
    if any(s.file.path == path for s in manifest.sidecars):
        return "sidecar"
    asset = manifest.asset("provenance")
    if asset is not None and asset.file.path == path:
        return "provenance"
    return "file"


def compare_files(recorded: BundleSource, rebuilt: BundleSource, manifest: Manifest,
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


def compare_archive(recorded: Path, rebuilt: Path, report: ReproduceReport) -> None:
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
