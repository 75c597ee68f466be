"""The publish receipt (format horon.publish-receipt.v1): what went where, with digests.

Written atomically as `DIST_DIR/publish-receipt.json` after a real run and printed by
`--json`; a dry run prints the same document with `"dry_run": true` and writes nothing. It
names the destination by its address only: credentials never appear in it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from horon_bundle.core.files import write_atomic
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.strictjson import canonical_bytes
from horon_bundle.publish.preflight import PlannedItem
from horon_bundle.publish.release import (
    ARCHIVE_MEDIA_TYPE,
    CATALOGUE_MEDIA_TYPE,
    CONFIG_MEDIA_TYPE,
    HARNESS_ARCHIVE_MEDIA_TYPE,
    RECEIPT_NAME,
    ROLE_ARCHIVE,
    ROLE_CATALOGUE,
    ROLE_MANIFEST,
)

RECEIPT_FORMAT = "horon.publish-receipt.v1"
WOULD_PUBLISH = "would-publish"


def _file(role: str, name: str, digest: Digest, media_type: str) -> dict[str, Any]:
    return {"role": role, "name": name, "sha256": digest.sha256, "size": digest.size,
            "media_type": media_type}


def bundle_entry(planned: PlannedItem, status: str, extra: dict[str, str]) -> dict[str, Any]:
    item = planned.item
    if item.harness is None:
        files = [_file(ROLE_ARCHIVE, item.archive.name, item.digest, ARCHIVE_MEDIA_TYPE),
                 _file(ROLE_MANIFEST, "plugin.json", hash_bytes(item.manifest_bytes),
                       CONFIG_MEDIA_TYPE)]
    else:
        files = [_file(ROLE_ARCHIVE, item.archive.name, item.digest,
                       HARNESS_ARCHIVE_MEDIA_TYPE),
                 _file(ROLE_CATALOGUE, "catalogue.json", hash_bytes(item.manifest_bytes),
                       CATALOGUE_MEDIA_TYPE)]
    files += [_file(side.role, side.name, side.digest, side.media_type)
              for side in item.side_files]
    key = item.key
    return {"kind": key.kind, "id": key.name, "version": key.version, "target": key.target,
            "status": status,
            "location": planned.location, "archive": {"name": item.archive.name,
                                                      "sha256": item.digest.sha256,
                                                      "size": item.digest.size},
            "files": files, **extra}


def receipt(destination: str, *, dry_run: bool, bundles: list[dict[str, Any]],
            marketplace: dict[str, Any] | None = None,
            log: dict[str, Any] | None = None) -> dict[str, Any]:
    """The receipt; `marketplace` is what a `file://` store's Claude Code marketplace became
    (name, location, url, sha256, plugins, status `written` or `unchanged`), when it has one."""
    document = {"format": RECEIPT_FORMAT, "ok": True, "skipped": False, "dry_run": dry_run,
                "destination": destination, "bundles": bundles}
    if marketplace is not None:
        document["marketplace"] = marketplace
    if log is not None:
        document["log"] = log
    return document


def skipped_receipt(reason: str) -> dict[str, Any]:
    return {"format": RECEIPT_FORMAT, "ok": True, "skipped": True, "dry_run": False,
            "reason": reason, "destination": None, "bundles": []}


def write_receipt(dist_dir: Path, document: dict[str, Any]) -> Path:
    path = dist_dir / RECEIPT_NAME
    write_atomic(path, canonical_bytes(document))
    return path
