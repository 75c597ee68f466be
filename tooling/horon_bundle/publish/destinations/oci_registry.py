"""`oci://host[:port]/namespace`: bundles as OCI artifacts, one repository per plugin id.

Upload: the blobs (plugin.json as config, the archive streamed from its file, the files
beside it) are pushed and confirmed by digest; then the bundle manifest by its digest, and
its signatures and build record as referrers (`oci_referrers`). Commit: the tag, written
last, so a half-finished publish shows nothing under the version's name, and a visible
version already has its referrers. A registry has no conditional write for tags: the tag is
checked before and after writing, which detects a conflicting publisher but cannot prevent
the last write of two simultaneous ones from winning (docs/publishing.md).
"""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.reporter import Reporter
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.publish.destinations import oci_layout, oci_referrers
from horon_bundle.publish.destinations.interface import (
    ABSENT,
    ALREADY_PUBLISHED,
    PRESENT,
    PUBLISHED,
    YANK_FORMAT,
    YANKED,
    Destination,
    OciAddress,
    RemoteState,
    YankResult,
)
from horon_bundle.publish.destinations.oci_ahead import AheadUploader
from horon_bundle.publish.destinations.oci_client import Fetched, RegistryClient
from horon_bundle.publish.release import BundleKey, ReleaseItem


class OciRegistry(Destination):
    uploads_ahead = True

    def __init__(self, address: OciAddress, environ: Mapping[str, str] | None = None,
                 reporter: Reporter | None = None) -> None:
        self.address = address
        self.oci = address
        self._environ = dict(os.environ if environ is None else environ)
        self._reporter = reporter
        self._client: RegistryClient | None = None
        self._ahead: AheadUploader | None = None

    @property
    def client(self) -> RegistryClient:
        if self._client is None:
            self._client = RegistryClient(
                self.oci, self._environ,
                on_retry=None if self._reporter is None else self._reporter.note)
        return self._client

    def close(self) -> None:
        if self._ahead is not None:
            self._ahead.close()  # cancels every session not finished
        if self._client is not None:
            self._client.close()

    def upload_ahead(self, archive: Path, key: BundleKey, size: int) -> None:
        """Send a native archive into an upload session of its repository while preflight
        verifies it (`oci_ahead`); only `upload` stores it."""
        if key.kind != BundleKind.NATIVE:
            return  # harness zips are small: no head start worth a thread
        if self._ahead is None:
            self._ahead = AheadUploader(lambda: RegistryClient(self.oci, self._environ))
        self._ahead.start(archive, oci_layout.repository(self.oci.namespace, key.name), size)

    def _names(self, plugin_id: str, version: str, target: str) -> tuple[str, str]:
        return (oci_layout.repository(self.oci.namespace, plugin_id),
                oci_layout.version_tag(version, target))

    def _reference(self, plugin_id: str, version: str, target: str) -> str:
        repository, tag = self._names(plugin_id, version, target)
        return f"oci://{self.oci.registry}/{repository}:{tag}"

    def _item_names(self, item: ReleaseItem) -> tuple[str, str]:
        """Repository and tag of an item of either kind."""
        key = item.key
        if key.kind == BundleKind.HARNESS:
            return (oci_layout.repository(self.oci.namespace, key.name),
                    oci_layout.harness_tag(key.version))
        return self._names(*item.native_key)

    def location(self, item: ReleaseItem) -> str:
        repository, tag = self._item_names(item)
        return f"oci://{self.oci.registry}/{repository}:{tag}"

    # --- checks --------------------------------------------------------------------------
    def naming_findings(self, item: ReleaseItem) -> list[Finding]:
        key = item.key
        problem = (oci_layout.harness_naming_problem(key.name, key.version)
                   if key.kind == BundleKind.HARNESS
                   else oci_layout.naming_problem(*item.native_key))
        return [] if problem is None else [Finding(codes.PUBLISH_NAME, f"{item.label}: {problem}")]

    def access_findings(self, items: list[ReleaseItem]) -> list[Finding]:
        findings = self.client.ping()
        if findings:
            return findings
        repositories = sorted({oci_layout.repository(self.oci.namespace, item.key.name)
                               for item in items})
        for repository in repositories:
            findings.extend(self.client.check_push(repository))
            if findings:
                return findings
        for item in items:
            subject = hash_bytes(oci_layout.bundle_manifest(item))
            findings.extend(oci_referrers.tag_findings(
                self.client, oci_layout.repository(self.oci.namespace, item.key.name),
                subject))
        return findings

    def _archive_sha256(self, held: Fetched | None, where: str,
                        kind: BundleKind = BundleKind.NATIVE) -> str | None:
        if held is None:
            return None
        try:
            return oci_layout.archive_sha256(read_json(held.data, source=where,
                                                       max_bytes=len(held.data) + 1), kind)
        except Refused:
            return None

    def harness_state(self, name: str, version: str) -> RemoteState:
        repository = oci_layout.repository(self.oci.namespace, name)
        tag = oci_layout.harness_tag(version)
        location = f"oci://{self.oci.registry}/{repository}:{tag}"
        manifest = self.client.get_manifest(repository, tag)
        sha = self._archive_sha256(manifest, location, BundleKind.HARNESS)
        if self.client.get_manifest(repository, oci_layout.yank_tag(tag)) is not None:
            return RemoteState(status=YANKED, archive_sha256=sha, location=location)
        if manifest is None:
            return RemoteState(status=ABSENT, location=location)
        return RemoteState(status=PRESENT, archive_sha256=sha, location=location)

    def state(self, plugin_id: str, version: str, target: str) -> RemoteState:
        repository, tag = self._names(plugin_id, version, target)
        location = self._reference(plugin_id, version, target)
        manifest = self.client.get_manifest(repository, tag)
        sha = self._archive_sha256(manifest, location)
        if self.client.get_manifest(repository, oci_layout.yank_tag(tag)) is not None:
            return RemoteState(status=YANKED, archive_sha256=sha, location=location)
        if manifest is None:
            return RemoteState(status=ABSENT, location=location)
        return RemoteState(status=PRESENT, archive_sha256=sha, location=location)

    def targets_of(self, plugin_id: str, version: str) -> list[str]:
        repository = oci_layout.repository(self.oci.namespace, plugin_id)
        found = []
        for tag in self.client.tags(repository):
            parsed = oci_layout.parse_version_tag(tag)
            if parsed is not None and parsed[0] == version:
                found.append(parsed[1])
        return sorted(found)

    def referrers(self, plugin_id: str, version: str, target: str) -> list[oci_referrers.Referrer]:
        """What refers to the manifest tagged id/version/target (signatures, build record,
        yank), by the standard lookup: the referrers API, else the referrers tag."""
        repository, tag = self._names(plugin_id, version, target)
        manifest = self.client.get_manifest(repository, tag)
        if manifest is None:
            return []
        return oci_referrers.find(self.client, repository, hash_bytes(manifest.data))

    # --- writing -------------------------------------------------------------------------
    def upload(self, item: ReleaseItem) -> dict[str, str]:
        repository, _tag = self._item_names(item)
        client = self.client
        client.push_blob(repository, item.manifest_bytes)
        self._push_archive(repository, item)
        for side in item.side_files:
            client.push_blob(repository, side.data)
        manifest = oci_layout.bundle_manifest(item)
        subject = hash_bytes(manifest)
        client.put_manifest(repository, "sha256:" + subject.sha256, manifest)
        extra = {"manifest": "sha256:" + subject.sha256}
        if item.side_files:
            client.push_blob(repository, oci_layout.EMPTY_BLOB)
            ways = {oci_referrers.attach(client, repository,
                                         oci_layout.referrer_manifest(side, manifest, item.digest))
                    for side in item.side_files}
            extra["referrers"] = _via(ways, subject)
        return extra

    def _push_archive(self, repository: str, item: ReleaseItem) -> None:
        """The archive's blob: already there, stored from the session sent ahead, or
        uploaded now; confirmed by digest and size."""
        client, ahead = self.client, self._ahead
        if ahead is None:
            client.push_file(repository, item.archive, item.digest, item.archive.name)
        elif client.blob_size(repository, item.digest) is not None:
            ahead.discard(item.archive)
        elif ahead.finish(item.archive, repository, item.digest):
            client.confirm_blob(repository, item.digest)
        else:
            client.push_file(repository, item.archive, item.digest, item.archive.name)

    def _conflict(self, item: ReleaseItem, held: str | None, when: str) -> Refused:
        what = f"archive sha256 {held}" if held else "an artifact that is not a horon bundle"
        return Refused.one(codes.PUBLISH_CONFLICT, f"{item.label}: {self.location(item)} holds "
                                                   f"{what} {when}; this release has "
                                                   f"{item.digest.sha256}")

    def commit(self, item: ReleaseItem) -> str:
        repository, tag = self._item_names(item)
        kind = item.key.kind
        client = self.client
        if client.get_manifest(repository, oci_layout.yank_tag(tag)) is not None:
            raise Refused.one(codes.PUBLISH_YANKED, f"{item.label}: was yanked and can never "
                                                    "be reused")
        manifest = oci_layout.bundle_manifest(item)
        before = client.get_manifest(repository, tag)
        if before is not None:
            held = self._archive_sha256(before, self.location(item), kind)
            if held == item.digest.sha256:
                return ALREADY_PUBLISHED
            raise self._conflict(item, held, "(checked before writing)")
        client.put_manifest(repository, tag, manifest)
        after = client.get_manifest(repository, tag)
        if after is None or after.data != manifest:
            held = self._archive_sha256(after, self.location(item), kind)
            if held == item.digest.sha256:
                return ALREADY_PUBLISHED
            raise self._conflict(item, held, "(another publisher wrote the tag concurrently)")
        return PUBLISHED

    def yank(self, plugin_id: str, version: str, target: str, reason: str) -> YankResult:
        repository, tag = self._names(plugin_id, version, target)
        location = self._reference(plugin_id, version, target)
        client = self.client
        manifest = client.get_manifest(repository, tag)
        if manifest is None:
            raise Refused.one(codes.YANK_NOT_PUBLISHED,
                              f"{plugin_id} {version} {target}: not published in {self.display}")
        held = self._archive_sha256(manifest, location)
        if held is None:
            raise Refused.one(codes.PUBLISH_DESTINATION_STATE,
                              f"{location}: not a horon bundle; nothing yanked")
        already = client.get_manifest(repository, oci_layout.yank_tag(tag)) is not None
        if not already:
            record = canonical_bytes({
                "format": YANK_FORMAT, "id": plugin_id, "version": version, "target": target,
                "archive_sha256": held, "reason": reason,
                "manifest": "sha256:" + hash_bytes(manifest.data).sha256,
                "yanked_at": datetime.datetime.now(datetime.timezone.utc).isoformat(
                    timespec="seconds")})
            client.push_blob(repository, record)
            client.push_blob(repository, oci_layout.EMPTY_BLOB)
            mark = oci_layout.yank_manifest(manifest.data, record, reason)
            oci_referrers.attach(client, repository, mark)  # listed, then tagged
            client.put_manifest(repository, oci_layout.yank_tag(tag), oci_layout.encode(mark))
        return YankResult(plugin_id=plugin_id, version=version, target=target,
                          archive_sha256=held, location=location, already=already)


def _via(ways: set[str], subject: Digest) -> str:
    """How the referrers were listed, for the receipt."""
    if ways == {oci_referrers.VIA_API}:
        return oci_referrers.VIA_API
    return f"referrers tag {oci_layout.referrers_tag(subject)}"
