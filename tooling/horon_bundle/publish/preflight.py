"""Everything publish checks before the first byte is uploaded, for every archive at once.

Each archive is fully verified by the judge of its kind and must be a release bundle whose
every check that proves a release passed (`verify.check_table.unproven`: graph present and
QA-free, compiled = claimed, advertised = claimed, evidence bound …); the files beside it must
describe it; its signature must verify when one is required. The destination must be
reachable and writable, and every id/version/target must be absent there or hold exactly
these archive bytes. All findings are collected; one is enough for nothing to be uploaded.
"""

from __future__ import annotations

import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings, Refused
from horon_bundle.core.file_identity import FileIdentity, identity_of
from horon_bundle.core.hashing import Digest, hash_bytes, hash_file
from horon_bundle.core.inputs import file_kind
from horon_bundle.core.reporter import Reporter
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.declaration import DECLARATION_NAME, load_declaration
from horon_bundle.model.harness.catalogue import MAX_CATALOGUE_BYTES, Catalogue
from horon_bundle.model.harness.layout import CATALOGUE_NAME, is_harness
from horon_bundle.model.manifest import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    Manifest,
    bundle_name,
    parse_manifest,
)
from horon_bundle.model.sidefiles import PROVENANCE_SIGNATURE_SUFFIX, SIGNATURE_SUFFIX
from horon_bundle.publish.destinations.interface import PRESENT, YANKED, Destination, RemoteState
from horon_bundle.publish.marketplace import attach_indexes
from horon_bundle.publish.release import (
    ROLE_PROVENANCE_SIGNATURE,
    BundleKey,
    HarnessRelease,
    ReleaseItem,
    digest_file_findings,
    find_archives,
    read_build_record,
    read_ref_file,
    read_signature,
)
from horon_bundle.publish.signature import VerifierFactory, signature_findings
from horon_bundle.publish.statements import attested, select_archives
from horon_bundle.verify.audit import AuditOptions
from horon_bundle.verify.check_table import unproven
from horon_bundle.verify.harness.judge import HARNESS_CHECKS
from horon_bundle.verify.harness.report import HarnessOptions, HarnessReport
from horon_bundle.verify.judge import NATIVE_CHECKS, verify_opened
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.route import verify_any
from horon_bundle.verify.signature import SignatureVerifier


@dataclass(frozen=True, slots=True, kw_only=True)
class PublishRequest:
    dist_dir: Path
    dry_run: bool = False
    signature_verifier: VerifierFactory | None = None  # set: every archive must be signed
    workspaces: tuple[Path, ...] = ()
    leave_out_unlisted: bool = False  # archives no release statement names: left out, not refused
    upload_ahead: bool = False  # oci://: bytes sent while verified, stored only after preflight


@dataclass(frozen=True, slots=True, kw_only=True)
class PlannedItem:
    item: ReleaseItem
    state: RemoteState
    location: str


class _Hashing(threading.Thread):
    """A harness zip's digest, hashed beside its judge (which has no one-pass digest yet:
    harness zips are small, native archives are what `archive_digest=True` is for)."""

    def __init__(self, path: Path) -> None:
        super().__init__(name="archive-hash", daemon=True)
        self.path = path
        self.digest: Digest | None = None
        self.error = ""
        self.refused: list[Finding] = []

    def run(self) -> None:
        try:
            self.digest = hash_file(self.path, what="archive", follow_symlinks=False)
        except OSError as exc:
            self.error = exc.strerror or str(exc)
        except Refused as exc:  # not a regular file, or over the limit
            self.refused = list(exc.findings)


def _identity(path: Path) -> FileIdentity:
    """What changes when a file is written, replaced or touched (ctime cannot be set back)."""
    return identity_of(path.lstat())


def _verified_native(path: Path) -> VerifyReport | None:
    """The native judge's report, its archive digest taken from the bytes judged; None for a
    harness zip. The archive is opened and validated once, to route it and to judge it."""
    report = VerifyReport(path=str(path))
    try:
        source = open_bundle(path)
    except Refused as exc:
        report.judged("archive", list(exc.findings))
        return report
    with source:
        if is_harness(source.files):
            return None
        return verify_opened(source, report, archive_digest=True)


def check_archive(path: Path, verifier: SignatureVerifier | None, *,
                  attested: frozenset[str] = frozenset(),
                  ) -> tuple[ReleaseItem | None, list[Finding]]:
    """Verify one archive and the files beside it; the item is None when it cannot be used.

    The archive is opened once, to route it and to judge it, and read once: verify hashes
    the archive file from the very bytes it judged (`verify_opened(..., archive_digest=True)`);
    its identity (inode, size, times) is compared after the checks instead of hashing it
    again, and the upload is checked against this digest."""
    findings = Findings()
    try:
        before_identity = _identity(path)
        mode = path.lstat().st_mode
    except OSError as exc:
        return None, [Finding(codes.INPUT_UNREADABLE, f"{path.name}: {exc.strerror}")]
    if not stat.S_ISREG(mode):  # what the archive's hash would refuse; never opened
        kind = "a symbolic link" if stat.S_ISLNK(mode) else f"{file_kind(mode)}, not a regular file"
        return None, [Finding(codes.INPUT_NOT_A_FILE, f"archive {path}: {kind}")]
    report = _verified_native(path)
    if report is None:
        return check_harness_archive(path, verifier, attested=attested)
    findings.extend(report.findings)
    manifest = report.manifest
    before = report.archive_digest
    if manifest is None or before is None:
        return None, list(findings)
    where = path.name
    if manifest.channel != "release":
        findings.add(codes.PUBLISH_CHANNEL, f"{where}: channel {manifest.channel!r}; only release "
                                            "bundles are published")
    expected = bundle_name(manifest.id, manifest.version, manifest.target, manifest.channel)
    if path.name != expected + ".zip":
        findings.add(codes.PUBLISH_ARCHIVE_NAME, f"{where}: plugin.json names it {expected}.zip")
    findings.extend(unproven(report, NATIVE_CHECKS, code=codes.PUBLISH_UNPROVEN, where=where))
    return _checked_item(path, report, manifest, findings, before=before,
                         before_identity=before_identity, verifier=verifier,
                         attested=attested)


def check_harness_archive(path: Path, verifier: SignatureVerifier | None, *,
                          attested: frozenset[str] = frozenset(),
                          ) -> tuple[ReleaseItem | None, list[Finding]]:
    """A harness zip: the harness judge (its ref beside it checked first), the name build
    gives it, every proving check passed, and the files beside it — as for native archives,
    plus its ref, which must name this zip's plugin and digest."""
    findings = Findings()
    try:
        before_identity = _identity(path)
    except OSError as exc:
        return None, [Finding(codes.INPUT_UNREADABLE, f"{path.name}: {exc.strerror}")]
    hashing = _Hashing(path)
    hashing.start()
    report = verify_any(path, AuditOptions(), HarnessOptions())
    hashing.join()
    if hashing.refused:
        return None, hashing.refused
    if hashing.digest is None:
        return None, [Finding(codes.INPUT_UNREADABLE, f"{path.name}: {hashing.error}")]
    before = hashing.digest
    findings.extend(report.findings)
    if not isinstance(report, HarnessReport) or report.catalogue is None:
        return None, list(findings)
    catalogue, where = report.catalogue, path.name
    expected = f"{catalogue.name}-{catalogue.version}.zip"
    if path.name != expected:
        findings.add(codes.PUBLISH_ARCHIVE_NAME, f"{where}: its plugin names it {expected}")
    findings.extend(unproven(report, HARNESS_CHECKS, code=codes.PUBLISH_UNPROVEN, where=where))
    return _checked_item(path, report, catalogue, findings, before=before,
                         before_identity=before_identity, verifier=verifier,
                         attested=attested)


def _checked_item(path: Path, report: VerifyReport, bundle: Manifest | Catalogue,
                  findings: Findings, *, before: Digest, before_identity: FileIdentity,
                  verifier: SignatureVerifier | None, attested: frozenset[str] = frozenset(),
                  ) -> tuple[ReleaseItem | None, list[Finding]]:
    """What publish checks of either kind once its judge has read the archive as `bundle`
    (plugin.json of a native bundle, the catalogue of a harness zip): the files beside it
    (and a harness zip's ref), the signature when one is required, and that the archive is
    unchanged (its identity, and its configuration document read again is the one judged).
    The item is None when the archive vanished meanwhile."""
    manifest = bundle if isinstance(bundle, Manifest) else None
    catalogue = bundle if isinstance(bundle, Catalogue) else None
    where = path.name
    findings.extend(digest_file_findings(path, before))
    build_record = read_build_record(path, before, findings)
    # with a signer required, the signature's digest is checked by its verification
    signature = read_signature(path, findings, over=before if verifier is None else None)
    provenance_signature = read_signature(path, findings, suffix=PROVENANCE_SIGNATURE_SUFFIX,
                                          role=ROLE_PROVENANCE_SIGNATURE)
    ref = None if catalogue is None else read_ref_file(path, before, catalogue.name, findings)
    if verifier is not None and before.sha256 not in attested:  # else: a signed statement
        findings.extend(signature_findings(path, path.with_name(path.name + SIGNATURE_SUFFIX),
                                           verifier))
    name, limit = ((MANIFEST_NAME, MAX_MANIFEST_BYTES) if catalogue is None
                   else (CATALOGUE_NAME, MAX_CATALOGUE_BYTES))
    config = b""
    try:
        with open_bundle(path) as source:
            config = source.read_small(name, limit)
    except (Refused, OSError, KeyError):
        findings.add(codes.PUBLISH_INTEGRITY, f"{where}: {name} could not be read again")
    verified = report.digests.get(name)
    try:
        after_identity = _identity(path)
    except OSError as exc:
        return None, [*findings, Finding(codes.INPUT_UNREADABLE, f"{where}: {exc.strerror}")]
    if after_identity != before_identity or verified is None or hash_bytes(config) != verified:
        findings.add(codes.PUBLISH_INTEGRITY, f"{where}: changed while it was being checked")
    harness = None if catalogue is None else HarnessRelease(
        name=catalogue.name, version=catalogue.version, description=catalogue.description,
        events=catalogue.events, hosts=catalogue.hosts, ref=ref)
    item = ReleaseItem(archive=path, digest=before, manifest=manifest, manifest_bytes=config,
                       signature=signature, build_record=build_record,
                       provenance_signature=provenance_signature, harness=harness,
                       identity=before_identity)
    return item, list(findings)


def _upload_ahead(archive: Path, destination: Destination) -> None:
    """Let the destination start sending a native archive while it is verified, named by
    its plugin.json as read before the verify (a hint: the verified item decides what is
    stored, `Destination.upload_ahead`); an archive that cannot be read so is not sent."""
    try:
        size = archive.lstat().st_size
        with open_bundle(archive) as source:
            if is_harness(source.files) or MANIFEST_NAME not in source.files:
                return
            manifest = parse_manifest(source.read_small(MANIFEST_NAME, MAX_MANIFEST_BYTES))
    except (Refused, OSError, KeyError):
        return  # its verify says why
    destination.upload_ahead(archive, BundleKey(kind=BundleKind.NATIVE, name=manifest.id,
                                                version=manifest.version,
                                                target=manifest.target), size)


def declaration_findings(request: PublishRequest) -> list[Finding]:
    """A horon-release.toml beside the release, in the working directory or in a --workspace
    must still say `destination = "unconfigured"` (and be valid): the destination comes only
    from HORON_PUBLISH_DESTINATION."""
    findings: list[Finding] = []
    seen: set[Path] = set()
    for directory in (request.dist_dir, Path.cwd(), *request.workspaces):
        declaration = (directory / DECLARATION_NAME).resolve()
        if declaration in seen or not declaration.is_file():
            continue
        seen.add(declaration)
        try:
            load_declaration(declaration.parent)
        except Refused as exc:
            findings.extend(Finding(f.code, f"{declaration}: {f.message}", f.hint)
                            for f in exc.findings)
    return findings


def state_findings(item: ReleaseItem, state: RemoteState) -> list[Finding]:
    if state.status == PRESENT and state.archive_sha256 != item.digest.sha256:
        held = (f"archive sha256 {state.archive_sha256}" if state.archive_sha256
                else "an artifact that is not a horon bundle")
        return [Finding(codes.PUBLISH_CONFLICT, f"{item.label}: {state.location} holds {held}, "
                                                f"this release has {item.digest.sha256}")]
    if state.status == YANKED:
        return [Finding(codes.PUBLISH_YANKED, f"{item.label}: {state.location} was yanked "
                                              "and can never be reused")]
    return []


def preflight(request: PublishRequest, destination: Destination, reporter: Reporter,
              warnings: list[Finding] | None = None) -> list[PlannedItem]:
    """Check everything; return the plan in publishing order, or raise listing every reason.
    Warnings (no release statement in DIST_DIR) go into `warnings`."""
    findings = Findings()
    findings.extend(declaration_findings(request))
    items: list[ReleaseItem] = []
    selection = select_archives(request.dist_dir, find_archives(request.dist_dir),
                                leave_out_unlisted=request.leave_out_unlisted)
    findings.extend(selection.findings)
    if warnings is not None:
        warnings.extend(selection.warnings)
    for name in selection.left_out:
        reporter.note(f"left out {name}: no release statement names it (--leave-out-unlisted)")
    if not selection.archives and not selection.findings:
        raise Refused.one(codes.PUBLISH_NOTHING, f"{request.dist_dir}: every archive was left "
                                                 "out; nothing to publish")
    verifier = request.signature_verifier() if request.signature_verifier else None
    signed_by_statement: frozenset[str] = frozenset()
    if verifier is not None:
        signed_by_statement, problems = attested(selection, verifier)
        findings.extend(problems)
    for archive in selection.archives:
        if request.upload_ahead and not request.dry_run:
            _upload_ahead(archive, destination)
        reporter.detail(f"verifying {archive.name}")
        item, problems = check_archive(archive, verifier, attested=signed_by_statement)
        findings.extend(problems)
        if item is not None:
            item, unbound = selection.bound(item)
            findings.extend(unbound)
            items.append(item)
    items, index_problems = attach_indexes(request.dist_dir, items)
    findings.extend(index_problems)
    items.sort(key=lambda i: i.key.order)
    nameable = []
    for item in items:
        naming = destination.naming_findings(item)
        findings.extend(naming)
        if not naming:
            nameable.append(item)
    reporter.step(f"checking {destination.display}")
    access = destination.access_findings(nameable)
    findings.extend(access)
    plan: list[PlannedItem] = []
    if not access:
        for item in nameable:
            state = destination.state_of(item.key)
            findings.extend(state_findings(item, state))
            plan.append(PlannedItem(item=item, state=state, location=destination.location(item)))
    findings.raise_if_any()
    return plan
