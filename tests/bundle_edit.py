"""Editing a built bundle the way an attacker would: every digest fixed, so only the rule
under test can refuse it; and re-zipping a bundle directory into an archive."""

from __future__ import annotations

import hashlib
import json
import stat
import zipfile
from pathlib import Path
from typing import Any

from tests.helpers import edit_manifest, edit_provenance, rewrite_listing


def replace_library(bundle: Path, data: bytes) -> None:
    """Swap the library's bytes and fix every digest that names it: plugin.json, SHA256SUMS,
    the provenance subject and the recorded invocation's artifact."""
    manifest = json.loads((bundle / "plugin.json").read_text())
    path = manifest["library"]["path"]
    (bundle / path).write_bytes(data)
    rewrite_listing(bundle, path)
    digest = hashlib.sha256(data).hexdigest()
    name = path.rsplit("/", 1)[-1]

    def rebind(statement: dict[str, Any]) -> None:
        for subject in statement["subject"]:
            if subject["name"] == path:
                subject["digest"]["sha256"] = digest
        for item in statement["predicate"]["runDetails"]["byproducts"]:
            if item["name"] == "horon:invocation":
                for artifact in item["annotations"]["artifacts"]:
                    if artifact["path"].endswith("/" + name):
                        artifact["sha256"] = digest
                        artifact["size"] = len(data)

    edit_provenance(bundle, rebind)

    def library(document: dict[str, Any]) -> None:
        document["library"]["sha256"] = digest
        document["library"]["size"] = len(data)

    edit_manifest(bundle, library)


def byproduct_of(statement: dict[str, Any], name: str) -> dict[str, Any]:
    for item in statement["predicate"]["runDetails"]["byproducts"]:
        if item["name"] == name:
            return item["annotations"]  # type: ignore[no-any-return]
    raise KeyError(name)


def internal(statement: dict[str, Any]) -> dict[str, Any]:
    return statement["predicate"]["buildDefinition"]["internalParameters"]  # type: ignore[no-any-return]


def rezip(bundle: Path, archive: Path) -> Path:
    """A deterministic archive of the bundle directory, as `build` writes one."""
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for path in sorted((p for p in bundle.rglob("*") if p.is_file()),
                           key=lambda p: p.relative_to(bundle).as_posix().encode()):
            info = zipfile.ZipInfo(path.relative_to(bundle).as_posix(),
                                   date_time=(1980, 1, 1, 0, 0, 0))
            info.create_system = 3
            mode = 0o755 if path.stat().st_mode & stat.S_IXUSR else 0o644
            info.external_attr = (stat.S_IFREG | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, path.read_bytes())
    return archive
