"""The index entries of a `file://` store: what each one holds, and how one is read back.

    index/<id>/<version>/<target>.json     horon.store-entry.v1          (a native bundle)
    harness/index/<name>/<version>.json    horon.store-harness-entry.v1  (a harness zip)

Each is written once (docs/publishing.md shows both); the archive's SHA-256 in it is the
bundle's identity.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import hash_bytes
from horon_bundle.core.identifiers import SHA256_HEX
from horon_bundle.publish.release import ReleaseItem, SideFile

ENTRY_FORMAT = "horon.store-entry.v1"
HARNESS_ENTRY_FORMAT = "horon.store-harness-entry.v1"


def _side(file: SideFile | None) -> dict[str, Any] | None:
    if file is None:
        return None
    return {"name": file.name, "sha256": file.digest.sha256, "size": file.digest.size,
            "media_type": file.media_type}


def entry_document(item: ReleaseItem) -> dict[str, Any]:
    """The index entry that makes `item` visible."""
    manifest = hash_bytes(item.manifest_bytes)
    archive = {"name": item.archive.name, "sha256": item.digest.sha256, "size": item.digest.size}
    if item.harness is not None:
        return {
            "format": HARNESS_ENTRY_FORMAT, "name": item.harness.name,
            "version": item.harness.version, "archive": archive,
            "catalogue": {"sha256": manifest.sha256, "size": manifest.size},
            "files": [{"role": f.role, **(_side(f) or {})} for f in item.side_files],
        }
    plugin_id, version, target = item.native_key
    return {
        "format": ENTRY_FORMAT, "id": plugin_id, "version": version, "target": target,
        "archive": archive, "plugin_json": {"sha256": manifest.sha256, "size": manifest.size},
        "signature": _side(item.signature), "build_record": _side(item.build_record),
    }


def entry_digest(path: Path, document: dict[str, Any], entry_format: str = ENTRY_FORMAT,
                 field: str = "archive") -> str:
    """The SHA-256 an entry gives for its archive (or its `catalogue`), checked to be one."""
    held = document.get(field)
    sha256 = held.get("sha256") if isinstance(held, dict) else None
    if document.get("format") != entry_format or not isinstance(sha256, str) \
            or not SHA256_HEX.fullmatch(sha256):
        raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                          f"{path}: not a {entry_format} entry with {field}.sha256")
    return sha256
