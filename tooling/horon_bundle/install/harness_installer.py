"""`install` of a harness zip: stored under its digest, its catalogue recorded in state.json.

1. admit (install.harness_admission): the harness judge with verify's trust options; the home is
   not touched before this passes.
2. under the home's lock, after sweeping debris: walk harness-bundles/sha256 through
   descriptors, read the state file, remove stored zips no record names (debris).
3. the name and version are recorded: the same digest is "already installed" once the stored
   copy verifies (zero writes); another digest is install.version-conflict.
4. otherwise stage the zip (`.staging-*` in harness-bundles/, mode 0444, fsynced), hash it
   and judge it again through its descriptor (it must be the bytes admitted), recheck every
   directory, and rename the file alone onto `sha256/<hex>.zip`, never replacing.
5. record name, version, digest, size, when, from what and the catalogue: one atomic state
   replacement, the commit point (a kill before it leaves a zip no record names: debris).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.install.dirs import lstat_at
from horon_bundle.install.harness_admission import AdmittedHarness, admit_harness
from horon_bundle.install.harness_store import (
    collect_garbage,
    judge_opened,
    open_file_at,
    verify_stored,
)
from horon_bundle.install.home import Home, writing
from horon_bundle.install.layout import (
    DIGEST_DIR,
    HARNESS_DIR,
    STORED_MODE,
    stored_name,
    stored_where,
)
from horon_bundle.install.request import InstallRequest
from horon_bundle.install.staging import Staging
from horon_bundle.install.state import HarnessRecord, HomeState, now_utc, source_name
from horon_bundle.install.statefile import read_state, replace_state, state_fitting
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.harness.ref import BundleRef

if TYPE_CHECKING:
    from horon_bundle.install.dirs import Chain

INSTALLED, ALREADY_INSTALLED = "installed", "already-installed"
RESULT_FORMAT = "horon.install-result.v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessInstallResult:
    status: str
    name: str
    version: str
    sha256: str
    size: int
    home: Path
    catalogue: dict[str, Any]
    wrote: tuple[str, ...]  # what this run changed: "files", "state"
    notes: tuple[str, ...] = ()
    warnings: tuple[Finding, ...] = ()  # of the harness judge: named, never dropped

    @property
    def location(self) -> str:
        return stored_where(self.sha256)

    def to_json(self) -> dict[str, Any]:
        return {"format": RESULT_FORMAT, "kind": BundleKind.HARNESS, "status": self.status,
                "name": self.name, "version": self.version, "sha256": self.sha256,
                "size": self.size, "home": str(self.home), "location": self.location,
                "catalogue": self.catalogue, "wrote": list(self.wrote),
                "warnings": [f.to_dict() for f in self.warnings], "notes": list(self.notes)}


def install_harness(request: InstallRequest,
                    reporter: Reporter | None = None) -> HarnessInstallResult:
    """Install the harness zip (or ref) `request.source`."""
    reporter = reporter or SilentReporter()
    asked = [flag for flag, given in (("--enable", request.enable),
                                      ("--allow-qa", request.allow_qa)) if given]
    if asked:
        raise Refused.one(codes.HARNESS_UNSUPPORTED,
                          f"{' and '.join(asked)}: native-bundle options; {request.source.name} "
                          "is a harness bundle")
    reporter.step(f"verifying {request.source}")
    admitted = admit_harness(request.source, request.options, request.harness,
                             expected_sha256=request.expected_sha256)
    with writing(request.home, parents=request.create_parents,
                 lock_timeout=request.lock_timeout) as home:
        store = home.area(HARNESS_DIR, DIGEST_DIR, create=True)
        assert store is not None
        with store:
            store.same_device(store.links[0].fd)
            checkpoint("walked")
            state = read_state(home.fd)
            removed = collect_garbage(store, state)
            notes = tuple(f"removed {what}: no record names it (an interrupted install or "
                          "uninstall)" for what in removed)
            record = state.harness_record(admitted.name, admitted.version)
            if record is not None and record.sha256 == admitted.digest.sha256 \
                    and lstat_at(store.fd, stored_name(record.sha256), store.where) is None:
                reporter.step(f"restoring the missing {stored_where(record.sha256)}")
                _stage_and_commit(home, store, admitted)  # the recorded bytes: kept record
                return _result(INSTALLED, admitted, request, wrote=("files",), notes=(
                    *notes, f"restored {stored_where(record.sha256)}, which was missing"))
            if record is not None:
                return _already(request, store, admitted, record, notes=notes)
            _refuse_foreign_record(state, admitted)
            new_state = state.with_harness(admitted.name, admitted.version, HarnessRecord(
                sha256=admitted.digest.sha256, size=admitted.digest.size,
                installed_at=now_utc(), source=source_name(admitted.named),
                catalogue=admitted.catalogue))
            state_fitting(new_state)  # before the zip is stored: a refusal leaves no file
            reporter.step(f"storing {admitted.name} {admitted.version} in {home.path}")
            _stage_and_commit(home, store, admitted)
        checkpoint("renamed")
        replace_state(home.fd, new_state)
    return _result(INSTALLED, admitted, request, wrote=("files", "state"), notes=notes)


def _result(status: str, admitted: AdmittedHarness, request: InstallRequest, *,
            wrote: tuple[str, ...],
            notes: tuple[str, ...] = ()) -> HarnessInstallResult:
    return HarnessInstallResult(status=status, name=admitted.name, version=admitted.version,
                                sha256=admitted.digest.sha256, size=admitted.digest.size,
                                home=request.home, catalogue=admitted.catalogue, wrote=wrote,
                                notes=notes, warnings=tuple(admitted.report.warnings))


def _already(request: InstallRequest, store: Chain, admitted: AdmittedHarness,
             record: HarnessRecord, *, notes: tuple[str, ...]) -> HarnessInstallResult:
    if record.sha256 != admitted.digest.sha256:
        raise Refused.one(codes.INSTALL_VERSION_CONFLICT,
                          f"{admitted.name} {admitted.version} is installed with sha256 "
                          f"{record.sha256}; {admitted.named.name} has "
                          f"{admitted.digest.sha256}")
    problems = verify_stored(store, admitted.name, admitted.version, record)
    if problems:
        raise Refused([Finding(codes.INSTALL_OCCUPIED,
                               f"{stored_where(record.sha256)}: the stored copy of "
                               f"{admitted.name} {admitted.version} does not verify"),
                       *problems])
    return _result(ALREADY_INSTALLED, admitted, request,
                   wrote=("files",) if notes else (), notes=notes)


def _refuse_foreign_record(state: HomeState, admitted: AdmittedHarness) -> None:
    """The digest pins one name and version: a record of it under another is not ours."""
    for name, versions in state.harness.items():
        for version, record in versions.items():
            if record.sha256 == admitted.digest.sha256:
                raise Refused.one(codes.INSTALL_RECORD_MISMATCH,
                                  f"state.json records sha256 {record.sha256} for {name} "
                                  f"{version}; {admitted.named.name} is {admitted.name} "
                                  f"{admitted.version}")


def _stage_and_commit(home: Home, store: Chain, admitted: AdmittedHarness) -> None:
    area = store.links[0]
    member = stored_name(admitted.digest.sha256)
    where = stored_where(admitted.digest.sha256)
    with Staging(area.fd, HARNESS_DIR, home.path / HARNESS_DIR, []) as staging:
        try:
            with admitted.path.open("rb") as stream:
                staging.add_file(member, stream, executable=False, mode=STORED_MODE)
        except OSError as exc:
            raise Refused.one(codes.INSTALL_INTEGRITY, f"{admitted.path.name}: "
                                                       f"{exc.strerror}") from None
        checkpoint("copying")
        staging.finish()
        checkpoint("staged")
        parent, name = staging.member_fd(member)
        opened = open_file_at(parent, name, f"{staging.where}/{member}",
                              home.path / HARNESS_DIR / staging.name / member)
        assert opened is not None
        with opened:
            digest = opened.digest()
            judged = judge_opened(opened, BundleRef(name=admitted.name,
                                                    sha256=admitted.digest.sha256))
        same = (digest == admitted.digest and not isinstance(judged, list)
                and judged.digests == admitted.report.digests)
        if not same:
            raise Refused([Finding(codes.INSTALL_INTEGRITY,
                                   f"{staging.where}/{member}: the staged copy differs from the "
                                   f"verified zip {admitted.path.name}"),
                           *(judged if isinstance(judged, list) else [])])
        checkpoint("before-rename")
        home.recheck()
        store.recheck()
        staging.recheck()
        staging.commit_member(member, store.fd, member, where)
