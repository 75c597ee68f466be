"""The OCI layout of a published bundle: repository, tag, media types, manifest, annotations.

Pure functions, no I/O: docs/publishing.md describes the same layout for other tools.

- repository `<namespace>/<id>`, one per plugin id;
- tag `<version with + as _>__<target>` (injective: a semver has no `_` and at most one
  `+`, never last, so the first `__` in a tag is the separator);
- an OCI image manifest with `artifactType` application/vnd.horon.plugin.bundle.v1, the
  bundle's plugin.json as its config blob, and one layer: the archive;
- its Sigstore bundles and its build record are OCI 1.1 referrers: one manifest each, with
  the empty config, the file as its one layer, `artifactType` set and `subject` naming the
  bundle manifest; on a registry without the referrers API they are listed in the image
  index tagged `sha256-<hex>` of that manifest (the referrers tag schema);
- a yank is a manifest tagged `yanked.<tag>` whose `subject` is the yanked manifest (a
  referrer too).

Versions before this layout put the Sigstore bundles and the build record after the archive
as extra layers of the bundle manifest; `archive_sha256` reads both.

A harness zip: repository `<namespace>/<name>`, tag `<version>` with `+` as `_` (its version
must hold no `_`, no `__` and not start with a reserved tag prefix, so the mapping is
injective and never meets a native tag, which always holds `__`); artifactType
application/vnd.horon.harness.bundle.v1, catalogue.json as the config, the zip as the one
layer; its ref, signatures, build record and marketplace index are referrers.
"""

from __future__ import annotations

import json
import re
from typing import Any

from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.manifest import Manifest
from horon_bundle.publish.destinations.interface import OCI_COMPONENT
from horon_bundle.publish.release import (
    ARCHIVE_MEDIA_TYPE,
    CATALOGUE_MEDIA_TYPE,
    CONFIG_MEDIA_TYPE,
    HARNESS_ARCHIVE_MEDIA_TYPE,
    ROLE_PROVENANCE_SIGNATURE,
    ROLE_SIGNATURE,
    ROLE_STATEMENT_SIGNATURE,
    ReleaseItem,
    SideFile,
)

MANIFEST_MEDIA_TYPE = "application/vnd.oci.image.manifest.v1+json"
INDEX_MEDIA_TYPE = "application/vnd.oci.image.index.v1+json"
ARTIFACT_TYPE = "application/vnd.horon.plugin.bundle.v1"
HARNESS_ARTIFACT_TYPE = "application/vnd.horon.harness.bundle.v1"
HARNESS_PREFIX = "dev.horon.harness."
_KINDS = {BundleKind.NATIVE: (ARTIFACT_TYPE, ARCHIVE_MEDIA_TYPE),
          BundleKind.HARNESS: (HARNESS_ARTIFACT_TYPE, HARNESS_ARCHIVE_MEDIA_TYPE)}
YANK_ARTIFACT_TYPE = "application/vnd.horon.plugin.yank.v1"
YANK_CONFIG_MEDIA_TYPE = "application/vnd.horon.plugin.yank.v1+json"
EMPTY_MEDIA_TYPE = "application/vnd.oci.empty.v1+json"
EMPTY_BLOB = b"{}"
TITLE = "org.opencontainers.image.title"
VERSION = "org.opencontainers.image.version"
LICENSES = "org.opencontainers.image.licenses"
PREFIX = "dev.horon.plugin."
ROLE = PREFIX + "role"  # on a referrer: signature, provenance-signature or build-record
SIGSTORE_CONTENT = "dev.sigstore.bundle.content"  # as cosign annotates its bundle referrers
_SIGSTORE_CONTENT = {ROLE_SIGNATURE: "message-signature",
                     ROLE_PROVENANCE_SIGNATURE: "dsse-envelope",
                     ROLE_STATEMENT_SIGNATURE: "dsse-envelope"}
REFERRERS_TAG_PREFIX = "sha256-"

TAG = re.compile(r"[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}")
YANK_PREFIX = "yanked."
MAX_TAG = 128 - len(YANK_PREFIX)  # so that the yank tag of every tag is a tag too
SEPARATOR = "__"


def repository(namespace: str, plugin_id: str) -> str:
    return f"{namespace}/{plugin_id}"


def version_tag(version: str, target: str) -> str:
    return version.replace("+", "_") + SEPARATOR + target


def parse_version_tag(tag: str) -> tuple[str, str] | None:
    """The inverse of `version_tag` (None for a tag it never produces)."""
    version, sep, target = tag.partition(SEPARATOR)
    if not sep or tag.startswith(YANK_PREFIX):
        return None
    return version.replace("_", "+"), target


def yank_tag(tag: str) -> str:
    return YANK_PREFIX + tag


def naming_problem(plugin_id: str, version: str, target: str) -> str | None:
    if not OCI_COMPONENT.fullmatch(plugin_id):
        return f"plugin id {plugin_id!r} is not a valid repository name component"
    tag = version_tag(version, target)
    if len(tag) > MAX_TAG:
        return f"tag {tag!r} is {len(tag)} characters, at most {MAX_TAG} fit"
    if not TAG.fullmatch(tag):
        return f"tag {tag!r} is not a valid OCI tag"
    return None


def harness_tag(version: str) -> str:
    return version.replace("+", "_")


def harness_naming_problem(name: str, version: str) -> str | None:
    if not OCI_COMPONENT.fullmatch(name):
        return f"harness bundle name {name!r} is not a valid repository name component"
    if "_" in version:
        return f"version {version!r} holds '_': its tag would not say which characters were '+'"
    tag = harness_tag(version)
    if SEPARATOR in tag or tag.startswith((YANK_PREFIX, REFERRERS_TAG_PREFIX)):
        return f"version {version!r} would make tag {tag!r}, which this layout reserves"
    if len(tag) > MAX_TAG or not TAG.fullmatch(tag):
        return f"tag {tag!r} is not a valid OCI tag of at most {MAX_TAG} characters"
    return None


def encode(document: dict[str, Any]) -> bytes:
    """Manifests are written compact with sorted keys: their digest is a pure function."""
    return json.dumps(document, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode("ascii")


def descriptor(media_type: str, digest: Digest, title: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"mediaType": media_type, "digest": "sha256:" + digest.sha256,
                              "size": digest.size}
    if title is not None:
        result["annotations"] = {TITLE: title}
    return result


def plugin_annotations(manifest: Manifest, archive: Digest) -> dict[str, str]:
    """plugin.json's fields as manifest annotations (strings; lists comma-joined)."""
    return {
        TITLE: f"{manifest.id}-{manifest.version}-{manifest.target}",
        VERSION: manifest.version,
        LICENSES: manifest.license.spdx,
        PREFIX + "format": "horon.plugin.v1",
        PREFIX + "id": manifest.id,
        PREFIX + "name": manifest.name,
        PREFIX + "version": manifest.version,
        PREFIX + "target": manifest.target,
        PREFIX + "profile": manifest.profile,
        PREFIX + "channel": manifest.channel,
        PREFIX + "abi": f"{manifest.abi_major}.{manifest.abi_minor}",
        PREFIX + "wire-schema": manifest.wire_schema,
        PREFIX + "features": ",".join(manifest.features),
        PREFIX + "library.sha256": manifest.library.sha256,
        PREFIX + "archive.sha256": archive.sha256,
    }


def bundle_manifest(item: ReleaseItem) -> bytes:
    if item.harness is not None:
        return _harness_manifest(item)
    assert item.manifest is not None
    document = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": ARTIFACT_TYPE,
        "config": descriptor(CONFIG_MEDIA_TYPE, hash_bytes(item.manifest_bytes)),
        "layers": [descriptor(ARCHIVE_MEDIA_TYPE, item.digest, item.archive.name)],
        "annotations": plugin_annotations(item.manifest, item.digest),
    }
    return encode(document)


def _harness_manifest(item: ReleaseItem) -> bytes:
    harness = item.harness
    assert harness is not None
    annotations = {
        TITLE: f"{harness.name}-{harness.version}",
        VERSION: harness.version,
        HARNESS_PREFIX + "format": "horon.harness-catalogue.v1",
        HARNESS_PREFIX + "name": harness.name,
        HARNESS_PREFIX + "version": harness.version,
        HARNESS_PREFIX + "hosts": ",".join(harness.hosts),
        HARNESS_PREFIX + "events": ",".join(harness.events),
        HARNESS_PREFIX + "archive.sha256": item.digest.sha256,
    }
    if harness.description:
        annotations["org.opencontainers.image.description"] = harness.description[:500]
    document = {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": HARNESS_ARTIFACT_TYPE,
        "config": descriptor(CATALOGUE_MEDIA_TYPE, hash_bytes(item.manifest_bytes)),
        "layers": [descriptor(HARNESS_ARCHIVE_MEDIA_TYPE, item.digest, item.archive.name)],
        "annotations": annotations,
    }
    return encode(document)


def referrer_manifest(side: SideFile, subject: bytes, archive: Digest) -> dict[str, Any]:
    """One file published beside the bundle as an OCI 1.1 artifact whose subject it is."""
    annotations = {ROLE: side.role, PREFIX + "archive.sha256": archive.sha256}
    if side.role in _SIGSTORE_CONTENT:
        annotations[SIGSTORE_CONTENT] = _SIGSTORE_CONTENT[side.role]
    return {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": side.media_type,
        "config": descriptor(EMPTY_MEDIA_TYPE, hash_bytes(EMPTY_BLOB)),
        "layers": [descriptor(side.media_type, side.digest, side.name)],
        "subject": descriptor(MANIFEST_MEDIA_TYPE, hash_bytes(subject)),
        "annotations": annotations,
    }


def referrers_tag(subject: Digest) -> str:
    """The referrers tag schema's name for the referrers of `subject` (`sha256-<hex>`)."""
    return REFERRERS_TAG_PREFIX + subject.sha256


def index_descriptor(document: dict[str, Any], encoded: bytes) -> dict[str, Any]:
    """A referrer's entry in a referrers index: its artifactType and annotations pulled up
    from the manifest (`encoded` is `document` as pushed), as the referrers API lists it."""
    entry = descriptor(MANIFEST_MEDIA_TYPE, hash_bytes(encoded))
    entry["artifactType"] = document.get("artifactType") or document["config"]["mediaType"]
    if document.get("annotations"):
        entry["annotations"] = document["annotations"]
    return entry


def empty_index() -> dict[str, Any]:
    return {"schemaVersion": 2, "mediaType": INDEX_MEDIA_TYPE, "manifests": []}


def index_entries(document: object, subject: Digest) -> list[dict[str, Any]] | None:
    """The manifests listed by a referrers index; None when `document` is not an image index
    (e.g. a registry that resolves `sha256-<hex>` to the subject itself, as GitLab's does)."""
    if not isinstance(document, dict) or document.get("mediaType") != INDEX_MEDIA_TYPE:
        return None
    entries = document.get("manifests")
    if not isinstance(entries, list):
        return None
    return [e for e in entries if isinstance(e, dict) and isinstance(e.get("digest"), str)
            and e["digest"] != "sha256:" + subject.sha256]


def archive_sha256(document: object, kind: BundleKind = BundleKind.NATIVE) -> str | None:
    """The archive digest a bundle manifest of `kind` read back from a registry names (None:
    not ours, or another kind's)."""
    artifact_type, archive_type = _KINDS[kind]
    if not isinstance(document, dict) or document.get("artifactType") != artifact_type:
        return None
    found = [layer.get("digest") for layer in document.get("layers") or []
             if isinstance(layer, dict) and layer.get("mediaType") == archive_type]
    if len(found) != 1 or not isinstance(found[0], str) or not found[0].startswith("sha256:"):
        return None
    return found[0][len("sha256:"):]


def yank_manifest(subject: bytes, record: bytes, reason: str) -> dict[str, Any]:
    return {
        "schemaVersion": 2,
        "mediaType": MANIFEST_MEDIA_TYPE,
        "artifactType": YANK_ARTIFACT_TYPE,
        "config": descriptor(YANK_CONFIG_MEDIA_TYPE, hash_bytes(record)),
        "layers": [descriptor(EMPTY_MEDIA_TYPE, hash_bytes(EMPTY_BLOB))],
        "subject": descriptor(MANIFEST_MEDIA_TYPE, hash_bytes(subject)),
        "annotations": {PREFIX + "yank.reason": reason},
    }
