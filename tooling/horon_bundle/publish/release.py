"""A release as publish sees it: the archives of one directory and the files beside them.

`DIST_DIR` is the directory `horon-bundle build --out` wrote. Publish takes every top-level
`*.zip` in it (dot files excluded; bundle directories and other files are ignored) — native
bundle archives and harness zips alike, told apart by content — and, beside each archive, the
optional `<archive>.sha256`, `<archive>.build.json`, `<archive>.sigstore.json` and
`<archive>.provenance.sigstore.json`; beside a harness zip also its `<zip>.ref.json`, and a
marketplace index (`<marketplace>.index.json`) that lists it. Side files are small and read
once: the bytes checked are the bytes uploaded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.file_identity import FileIdentity
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.inputs import read_input
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.harness.layout import REF_SUFFIX
from horon_bundle.model.harness.ref import parse_ref
from horon_bundle.model.manifest import Manifest
from horon_bundle.model.sidefiles import (
    BUILD_RECORD_FORMAT,
    BUILD_RECORD_SUFFIX,
    DIGEST_SUFFIX,
    SIGNATURE_SUFFIX,
    signed_digest,
)

RECEIPT_NAME = "publish-receipt.json"
MAX_SIDE_FILE_BYTES = 4 << 20
SIGSTORE_MEDIA_TYPE = re.compile(r"application/vnd\.dev\.sigstore\.bundle(?:\.v[0-9.]+)?\+json"
                                 r"(?:;version=[0-9.]+)?")
BUILD_RECORD_MEDIA_TYPE = "application/vnd.horon.build-run.v1+json"
ARCHIVE_MEDIA_TYPE = "application/vnd.horon.plugin.archive.v1+zip"
CONFIG_MEDIA_TYPE = "application/vnd.horon.plugin.config.v1+json"  # plugin.json

ROLE_ARCHIVE, ROLE_SIGNATURE, ROLE_BUILD_RECORD, ROLE_MANIFEST = (
    "archive", "signature", "build-record", "plugin.json")
ROLE_PROVENANCE_SIGNATURE = "provenance-signature"
ROLE_REF, ROLE_MARKETPLACE_INDEX, ROLE_CATALOGUE = "ref", "marketplace-index", "catalogue"
ROLE_STATEMENT, ROLE_STATEMENT_SIGNATURE = "release-statement", "release-statement-signature"
STATEMENT_MEDIA_TYPE = "application/vnd.in-toto+jsonl"  # a *.intoto.jsonl file
HARNESS_ARCHIVE_MEDIA_TYPE = "application/vnd.horon.harness.archive.v1+zip"
CATALOGUE_MEDIA_TYPE = "application/vnd.horon.harness.catalogue.v1+json"  # catalogue.json
REF_MEDIA_TYPE = "application/vnd.horon.harness.ref.v1+json"
MARKETPLACE_INDEX_MEDIA_TYPE = "application/vnd.horon.marketplace-index.v1+json"
MARKETPLACE_INDEX_SUFFIX = ".index.json"


@dataclass(frozen=True, slots=True, kw_only=True)
class BundleKey:
    """What names a published bundle: id, version and target, or a harness name and version."""

    kind: BundleKind
    name: str
    version: str
    target: str | None = None  # None for a harness bundle

    @property
    def label(self) -> str:
        return " ".join(filter(None, (self.name, self.version, self.target)))

    @property
    def order(self) -> tuple[bytes, ...]:
        """Publishing order: byte order of (name, version, target), native before harness."""
        return (self.name.encode(), self.version.encode(), (self.target or "").encode(),
                self.kind.encode())


@dataclass(frozen=True, slots=True, kw_only=True)
class SideFile:
    role: str
    name: str
    data: bytes
    digest: Digest
    media_type: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessRelease:
    """What a harness zip adds to its release item: its identity, what it offers (for the
    OCI annotations), its ref and the marketplace index listing it (and that marketplace's
    name), when present."""

    name: str
    version: str
    description: str | None
    events: tuple[str, ...]
    hosts: tuple[str, ...]
    ref: SideFile | None = None
    marketplace_index: SideFile | None = None
    marketplace: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseItem:
    """One verified archive with everything published alongside it.

    `manifest_bytes` is the configuration document of the bundle: plugin.json of a native
    bundle, catalogue.json of a harness zip (whose `manifest` is None)."""

    archive: Path
    digest: Digest
    manifest: Manifest | None
    manifest_bytes: bytes
    signature: SideFile | None
    build_record: SideFile | None
    provenance_signature: SideFile | None = None
    harness: HarnessRelease | None = None
    # the archive's stat when its digest was taken and judged (`core.file_identity`): a store
    # may copy it by the kernel alone while it still has it
    identity: FileIdentity | None = None
    statements: tuple[SideFile, ...] = ()  # release statements naming it (publish/statements)

    @property
    def key(self) -> BundleKey:
        if self.harness is not None:
            return BundleKey(kind=BundleKind.HARNESS, name=self.harness.name,
                             version=self.harness.version)
        assert self.manifest is not None
        return BundleKey(kind=BundleKind.NATIVE, name=self.manifest.id,
                         version=self.manifest.version, target=self.manifest.target)

    @property
    def native_key(self) -> tuple[str, str, str]:
        key = self.key
        assert key.target is not None
        return (key.name, key.version, key.target)

    @property
    def label(self) -> str:
        return self.key.label

    @property
    def side_files(self) -> tuple[SideFile, ...]:
        extra = () if self.harness is None else (self.harness.ref,
                                                 self.harness.marketplace_index)
        return tuple(f for f in (self.signature, self.provenance_signature, self.build_record,
                                 *extra, *self.statements) if f is not None)


def find_archives(dist_dir: Path) -> list[Path]:
    """The release's archives in byte order of their names; refused when there are none."""
    if not dist_dir.is_dir():
        raise Refused.one(codes.PUBLISH_NOTHING, f"{dist_dir}: not a directory")
    archives = sorted((p for p in dist_dir.iterdir()
                       if p.name.endswith(".zip") and not p.name.startswith(".")),
                      key=lambda p: os.fsencode(p.name))  # a name need not be UTF-8
    if not archives:
        raise Refused.one(codes.PUBLISH_NOTHING, f"{dist_dir}: no *.zip archive to publish")
    return archives


def read_side(path: Path, findings: Findings) -> bytes | None:
    """A side file's bytes, read once (`core.inputs`: never a link, FIFO or device, never past
    its limit); None when it is absent or refused (problems into `findings`)."""
    try:
        return read_input(path, limit=MAX_SIDE_FILE_BYTES, what="side file", missing_ok=True,
                          follow_symlinks=False)
    except Refused as exc:
        for finding in exc.findings:
            code = finding.code if finding.code is codes.INPUT_UNREADABLE \
                else codes.PUBLISH_SIDE_FILE
            findings.add(code, finding.message)
        return None


def digest_file_findings(archive: Path, digest: Digest) -> list[Finding]:
    """`<archive>.sha256`, when present, must be `<hex>  <name>\\n` for exactly this archive."""
    findings = Findings()
    data = read_side(archive.with_name(archive.name + DIGEST_SUFFIX), findings)
    if data is not None and data != f"{digest.sha256}  {archive.name}\n".encode():
        findings.add(codes.PUBLISH_SIDE_FILE,
                     f"{archive.name}{DIGEST_SUFFIX}: does not state sha256 {digest.sha256} "
                     f"for {archive.name}")
    return list(findings)


def read_build_record(archive: Path, digest: Digest, findings: Findings) -> SideFile | None:
    name = archive.name + BUILD_RECORD_SUFFIX
    data = read_side(archive.with_name(name), findings)
    if data is None:
        return None
    try:
        document = read_json(data, source=name, max_bytes=MAX_SIDE_FILE_BYTES)
    except Refused as exc:
        findings.extend(exc.findings)
        return None
    bound = document.get("archive") if isinstance(document, dict) else None
    if not isinstance(document, dict) or document.get("format") != BUILD_RECORD_FORMAT:
        findings.add(codes.PUBLISH_SIDE_FILE, f"{name}: not a {BUILD_RECORD_FORMAT} document")
        return None
    if bound != {"name": archive.name, "sha256": digest.sha256}:
        findings.add(codes.PUBLISH_SIDE_FILE,
                     f"{name}: archive is not {{name: {archive.name}, sha256: {digest.sha256}}}")
        return None
    return SideFile(role=ROLE_BUILD_RECORD, name=name, data=data, digest=hash_bytes(data),
                    media_type=BUILD_RECORD_MEDIA_TYPE)


def read_signature(archive: Path, findings: Findings, *, suffix: str = SIGNATURE_SUFFIX,
                   role: str = ROLE_SIGNATURE, over: Digest | None = None) -> SideFile | None:
    """A Sigstore bundle beside the archive, structurally checked (its identity is verified
    elsewhere, when a signer is required). With `over`, a message signature must sign those
    bytes: a signature left from an earlier build of the same name is never published as
    this archive's (no trust is needed to compare two digests)."""
    name = archive.name + suffix
    data = read_side(archive.with_name(name), findings)
    if data is None:
        return None
    try:
        document = read_json(data, source=name, max_bytes=MAX_SIDE_FILE_BYTES)
    except Refused as exc:
        findings.extend(exc.findings)
        return None
    media_type = document.get("mediaType") if isinstance(document, dict) else None
    if not isinstance(media_type, str) or not SIGSTORE_MEDIA_TYPE.fullmatch(media_type):
        findings.add(codes.PUBLISH_SIDE_FILE,
                     f"{name}: not a Sigstore bundle (mediaType {str(media_type)[:60]!r})")
        return None
    if over is not None:
        signed = signed_digest(document)
        if signed is not None and signed != over.sha256:
            what = f"signs sha256 {signed}" if signed else "names no SHA-256 it signs"
            findings.add(codes.PUBLISH_SIDE_FILE,
                         f"{name}: {what}, not this archive ({over.sha256}); left from an "
                         "earlier build? sign the archive again or remove it")
            return None
    return SideFile(role=role, name=name, data=data, digest=hash_bytes(data),
                    media_type=media_type.split(";", 1)[0])


def read_ref_file(archive: Path, digest: Digest, name: str, findings: Findings) -> SideFile | None:
    """`<zip>.ref.json`, when present: exactly `{name, sha256}` of this harness zip."""
    ref_name = archive.name + REF_SUFFIX
    data = read_side(archive.with_name(ref_name), findings)
    if data is None:
        return None
    try:
        ref = parse_ref(data, source=ref_name)
    except Refused as exc:
        findings.extend(exc.findings)
        return None
    if (ref.name, ref.sha256) != (name, digest.sha256):
        findings.add(codes.PUBLISH_SIDE_FILE, f"{ref_name}: names {ref.name} sha256 "
                                              f"{ref.sha256}, not {name} {digest.sha256}")
        return None
    return SideFile(role=ROLE_REF, name=ref_name, data=data, digest=hash_bytes(data),
                    media_type=REF_MEDIA_TYPE)
