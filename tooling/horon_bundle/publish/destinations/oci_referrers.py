"""OCI 1.1 referrers: attaching an artifact to a manifest, and finding what refers to one.

A registry with the referrers API indexes a pushed manifest that has a `subject` itself and
says so with the `OCI-Subject` response header. Without it (Debian's distribution 2.8,
GHCR today) the client keeps the **referrers tag schema**: the image index tagged
`sha256-<hex>` of the subject lists every referrer with its `artifactType` and annotations.
It is updated read-modify-write: read (with its ETag), add the descriptor unless it is
listed, write with `If-Match` (a registry honouring it answers 412 to a writer that lost a
race, and we read again), read again to check the descriptor is listed, a few attempts in
all. A registry that honours no conditional write can still lose an entry to two writers
updating one index at the same instant; the check after writing narrows that window, and a
re-run lists what is missing (docs/publishing.md).

Lookups follow the specification: the referrers API first, the tag on its 404; an answer
that is not an image index counts as no referrers. An index entry is only a hint: its
artifactType may be wrong (tools that write the fallback without pulling it up, as GHCR's
listings show), so `find` fetches each referrer by digest and reads its own manifest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.strictjson import read_json
from horon_bundle.publish.destinations.oci_client import ConcurrentWrite, RegistryClient
from horon_bundle.publish.destinations.oci_layout import (
    INDEX_MEDIA_TYPE,
    MANIFEST_MEDIA_TYPE,
    empty_index,
    encode,
    index_descriptor,
    index_entries,
    referrers_tag,
)

MAX_ATTEMPTS = 4
VIA_API = "referrers API"


@dataclass(frozen=True, slots=True, kw_only=True)
class Referrer:
    """A manifest whose `subject` is the one asked about, as read from the manifest itself."""

    digest: str
    artifact_type: str
    annotations: dict[str, str]
    layers: list[dict[str, Any]]


def _document(client: RegistryClient, data: bytes, where: str) -> Any:
    try:
        return read_json(data, source=where, max_bytes=len(data) + 1)
    except Refused as exc:
        raise Refused(Finding(codes.PUBLISH_DESTINATION_STATE,
                              f"{client.address.display}: {f.message}") for f in exc.findings
                      ) from None


def _subject(document: dict[str, Any]) -> Digest:
    subject = document["subject"]
    return Digest(subject["digest"][len("sha256:"):], subject["size"])


def tag_findings(client: RegistryClient, repository: str, subject: Digest) -> list[Finding]:
    """Read only: the referrers tag of `subject` is absent or an image index we can extend
    (checked before anything is uploaded, so that a foreign tag is refused, not replaced)."""
    try:
        _read_tag(client, repository, subject)
    except Refused as exc:
        return list(exc.findings)
    return []


def _read_tag(client: RegistryClient, repository: str,
              subject: Digest) -> tuple[dict[str, Any], str | None]:
    """The referrers index under the tag (empty when absent), and its ETag."""
    tag = referrers_tag(subject)
    held = client.get_manifest(repository, tag)
    if held is None or hash_bytes(held.data) == subject:  # some registries resolve the tag
        return empty_index(), None  # `sha256-<hex>` to the digest: that is no index yet
    where = f"/v2/{repository}/manifests/{tag}"
    document = _document(client, held.data, where)
    if index_entries(document, subject) is None:
        raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                          f"{client.address.display}: {where} is not an OCI image index; the "
                          "referrers tag schema needs that tag, nothing was overwritten",
                          "Remove or rename that tag by hand, then publish again.")
    return document, held.etag


def attach(client: RegistryClient, repository: str, document: dict[str, Any],
           reference: str | None = None) -> str:
    """Push a manifest with a `subject` (under `reference`, by default its digest) and make
    it listed among the subject's referrers. Returns how: `VIA_API` or the fallback tag."""
    encoded = encode(document)
    digest = "sha256:" + hash_bytes(encoded).sha256
    response = client.put_manifest(repository, reference or digest, encoded)
    subject = _subject(document)
    if response.headers.get("OCI-Subject") == "sha256:" + subject.sha256:
        return VIA_API
    entry = index_descriptor(document, encoded)
    tag = referrers_tag(subject)
    for attempt in range(MAX_ATTEMPTS + 1):  # every write is followed by a read
        index, etag = _read_tag(client, repository, subject)
        if any(e.get("digest") == digest for e in index["manifests"] if isinstance(e, dict)):
            return tag
        if attempt == MAX_ATTEMPTS:
            break
        index["manifests"].append(entry)
        try:
            client.put_manifest(repository, tag, encode(index), media_type=INDEX_MEDIA_TYPE,
                                if_match=etag)
        except ConcurrentWrite:
            continue
        # a writer without If-Match may have replaced the index between our read and write
    raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                      f"{client.address.display}: /v2/{repository}/manifests/{tag}: the "
                      f"referrers index kept changing under {MAX_ATTEMPTS} updates",
                      "Another publisher is writing the same referrers; run the same command "
                      "again when it has finished.")


def listed(client: RegistryClient, repository: str, subject: Digest) -> list[dict[str, Any]]:
    """The subject's referrers as the registry lists them: the referrers API, else the tag."""
    answer = client.get_referrers(repository, "sha256:" + subject.sha256)
    if answer is not None:
        where = f"/v2/{repository}/referrers/sha256:{subject.sha256}"
        entries = index_entries(_document(client, answer, where), subject)
        if entries is None:
            raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                              f"{client.address.display}: {where} is not an OCI image index")
        return entries
    held = client.get_manifest(repository, referrers_tag(subject))
    if held is None:
        return []
    where = f"/v2/{repository}/manifests/{referrers_tag(subject)}"
    return index_entries(_document(client, held.data, where), subject) or []


def find(client: RegistryClient, repository: str, subject: Digest) -> list[Referrer]:
    """Every listed referrer whose own manifest (fetched by digest, digest checked) names
    `subject`; in the order listed."""
    found: list[Referrer] = []
    for entry in listed(client, repository, subject):
        digest = entry["digest"]
        held = client.get_manifest(repository, digest)
        if held is None or "sha256:" + hash_bytes(held.data).sha256 != digest:
            continue
        document = _document(client, held.data, f"/v2/{repository}/manifests/{digest}")
        if (not isinstance(document, dict) or document.get("mediaType") != MANIFEST_MEDIA_TYPE
                or not isinstance(document.get("subject"), dict)
                or document["subject"].get("digest") != "sha256:" + subject.sha256):
            continue
        config = document.get("config")
        artifact_type = document.get("artifactType") or (
            config.get("mediaType") if isinstance(config, dict) else "") or ""
        annotations = document.get("annotations")
        layers = document.get("layers")
        found.append(Referrer(
            digest=digest, artifact_type=str(artifact_type),
            annotations={k: v for k, v in (annotations or {}).items() if isinstance(v, str)}
            if isinstance(annotations, dict) else {},
            layers=[layer for layer in layers if isinstance(layer, dict)]
            if isinstance(layers, list) else []))
    return found
