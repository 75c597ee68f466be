"""`install`: a verified bundle into `<home>/native-plugins/<id>/<version>/<target>`.

1. admit (install.admission): full verify + trust options + install's own requirements; the home
   is not touched before this passes.
2. under the home's lock (install.home.writing), after sweeping debris: walk native-plugins,
   id, version, target through descriptors (install.dirs); read the state file.
3. the final directory exists: verify it; the same content is "already installed" (zero
   writes, unless the state lacks its record or --enable changes something); other content
   is install.version-conflict; something that does not verify is install.occupied.
4. otherwise stage (install.staging) the first missing component, copy every file with a
   normalised mode, hashing each as it lands (one read of the source: `copy_file_range`
   where no inflating is needed), sync the file system once; require of the staged copy the
   file set and digests the verify of the admitted bundle found (the verify's rules hold of
   the copy because it is those bytes); recheck every directory of the chain; rename
   without replacing.
5. record the copy (and enable it with --enable) in one atomic state replacement.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.core.reporter import Reporter, SilentReporter
from horon_bundle.install.admission import Admitted, admit
from horon_bundle.install.copies import installed_copy
from horon_bundle.install.dirs import Chain
from horon_bundle.install.harness_installer import HarnessInstallResult, install_harness
from horon_bundle.install.home import Home, require_posix, writing
from horon_bundle.install.layout import NATIVE_DIR, relative
from horon_bundle.install.request import InstallRequest
from horon_bundle.install.staging import Staging
from horon_bundle.install.state import HomeState, InstalledCopy, now_utc, source_name
from horon_bundle.install.statefile import read_state, replace_state, state_fitting
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.verify.reading.open import open_bundle
from horon_bundle.verify.route import bundle_kind

INSTALLED, ALREADY_INSTALLED = "installed", "already-installed"
__all__ = ["ALREADY_INSTALLED", "INSTALLED", "InstallRequest", "InstallResult", "install"]
RESULT_FORMAT = "horon.install-result.v1"


@dataclass(frozen=True, slots=True, kw_only=True)
class InstallResult:
    status: str
    plugin_id: str
    version: str
    target: str
    home: Path
    content_sha256: str
    archive_sha256: str | None
    enabled: bool
    wrote: tuple[str, ...]  # what this run changed: "files", "state"
    notes: tuple[str, ...] = ()

    @property
    def location(self) -> str:
        return relative(NATIVE_DIR, self.plugin_id, self.version, self.target)

    def to_json(self) -> dict[str, Any]:
        return {"format": RESULT_FORMAT, "kind": BundleKind.NATIVE, "status": self.status,
                "id": self.plugin_id,
                "version": self.version, "target": self.target, "home": str(self.home),
                "location": self.location, "content_sha256": self.content_sha256,
                "archive_sha256": self.archive_sha256, "enabled": self.enabled,
                "wrote": list(self.wrote), "notes": list(self.notes)}


def install(request: InstallRequest,
            reporter: Reporter | None = None) -> InstallResult | HarnessInstallResult:
    """Install the bundle `request.source` names: a native bundle (directory or archive), or
    a harness zip or its ref (install.harness_installer), decided by content."""
    require_posix()
    if bundle_kind(request.source) == BundleKind.HARNESS:
        return install_harness(request, reporter)
    asked = [flag for flag, given in (("--host", request.harness.host is not None),
                                      ("--strict", request.harness.strict),
                                      ("--zip", request.harness.zip_path is not None)) if given]
    if asked:
        raise Refused.one(codes.USAGE_INVALID, f"{' and '.join(asked)}: harness-bundle "
                                               f"options; {request.source.name} is a native "
                                               "bundle")
    reporter = reporter or SilentReporter()
    reporter.step(f"verifying {request.source}")
    admitted = admit(request.source, request.options, allow_qa=request.allow_qa,
                     expected_sha256=request.expected_sha256)
    manifest = admitted.manifest
    parts = (manifest.id, manifest.version, manifest.target)
    with writing(request.home, parents=request.create_parents,
                 lock_timeout=request.lock_timeout) as home:
        chain = home.native(create=True)
        assert chain is not None
        with chain:
            area = chain.fd
            for part in parts:
                if not chain.descend(part):
                    break
            chain.same_device(area)
            checkpoint("walked")
            state = read_state(home.fd)
            present = len(chain.links) - 1  # how many of id, version, target exist
            if present == len(parts):
                return _already(request, home, chain, admitted, state)
            _refuse_other_recorded(state, parts, admitted)
            new_state = state.with_copy(*parts, _record(admitted))
            notes = []
            if request.enable:
                notes += _enable_note(state, parts)
                new_state = new_state.with_enabled(manifest.id, manifest.target,
                                                   manifest.version)
            state_fitting(new_state)  # before staging: a refusal leaves no copy behind
            reporter.step(f"installing {' '.join(parts)} into {home.path}")
            _stage_and_commit(home, chain, admitted, parts, present)
        checkpoint("renamed")
        replace_state(home.fd, new_state)
    return _result(INSTALLED, admitted, request, enabled=request.enable,
                   wrote=("files", "state"), notes=tuple(notes))


def _refuse_other_recorded(state: HomeState, parts: tuple[str, str, str],
                           admitted: Admitted) -> None:
    """A version whose copy is gone (deleted by hand) but whose record remains was installed
    with the recorded content: other bytes under it are a version conflict, as when the copy
    is there (the same bytes put the copy back)."""
    record = state.copy(*parts)
    if record is not None and record.content_sha256 != admitted.content_sha256:
        raise Refused.one(codes.INSTALL_VERSION_CONFLICT,
                          f"{relative(NATIVE_DIR, *parts)}: state.json records content sha256 "
                          f"{record.content_sha256} (its copy is missing); "
                          f"{admitted.path.name} has {admitted.content_sha256}")


def _record(admitted: Admitted) -> InstalledCopy:
    return InstalledCopy(installed_at=now_utc(), content_sha256=admitted.content_sha256,
                         archive_sha256=admitted.archive_sha256,
                         source=source_name(admitted.path), channel=admitted.manifest.channel)


def _enable_note(state: HomeState, parts: tuple[str, str, str]) -> list[str]:
    plugin_id, version, target = parts
    before = state.enabled(plugin_id, target)
    if before is not None and before != version:
        return [f"{plugin_id} {before} is no longer enabled for {target}"]
    return []


def _result(status: str, admitted: Admitted, request: InstallRequest, *, enabled: bool,
            wrote: tuple[str, ...], notes: tuple[str, ...] = ()) -> InstallResult:
    manifest = admitted.manifest
    return InstallResult(status=status, plugin_id=manifest.id, version=manifest.version,
                         target=manifest.target, home=request.home,
                         content_sha256=admitted.content_sha256,
                         archive_sha256=admitted.archive_sha256, enabled=enabled, wrote=wrote,
                         notes=notes)


def _stage_and_commit(home: Home, chain: Chain, admitted: Admitted,
                      parts: tuple[str, str, str], present: int) -> None:
    missing = list(parts[present:])
    area = chain.links[0]
    with Staging(area.fd, NATIVE_DIR, home.path / NATIVE_DIR, missing[1:]) as staging:
        staged = _copy(admitted, staging)
        staging.finish()
        checkpoint("staged")
        root = staging.root
        if staged != admitted.report.digests:
            changed = sorted(path for path in {*staged, *admitted.report.digests}
                             if staged.get(path) != admitted.report.digests.get(path))
            raise Refused.one(codes.INSTALL_INTEGRITY,
                              f"{root.where}: the staged copy differs from the verified bundle "
                              f"{admitted.path.name} ({', '.join(map(repr, changed[:5]))})")
        checkpoint("before-rename")
        home.recheck()
        chain.recheck()
        staging.recheck()
        where = chain.child_where(missing[0])
        staging.commit(chain.fd, missing[0], where)


def _copy(admitted: Admitted, staging: Staging) -> dict[str, Digest]:
    """Every file of the bundle into staging, hashed as it lands (one read of the source);
    the caller compares these digests with the ones the verify found, which proves the copy
    is the bundle verified, byte for byte, without reading it again."""
    try:
        source = open_bundle(admitted.path)
    except Refused as exc:
        raise Refused([Finding(codes.INSTALL_INTEGRITY, f"{admitted.path.name}: changed since "
                                                        "it was verified"),
                       *exc.findings]) from None
    staged: dict[str, Digest] = {}
    with source:  # names come from a directory walk or a validated archive
        for index, path in enumerate(sorted(source.files)):
            try:
                stream = source.open(path)
            except OSError as exc:
                raise Refused.one(codes.INSTALL_INTEGRITY,
                                  f"{admitted.path.name}: {path}: {exc.strerror}") from None
            try:
                staged[path] = staging.add_file(path, stream,
                                                executable=bool(source.files[path].executable))
            finally:
                stream.close()
            if index == 0:
                checkpoint("copying")
    return staged


def _already(request: InstallRequest, home: Home, chain: Chain, admitted: Admitted,
             state: HomeState) -> InstallResult:
    manifest = admitted.manifest
    parts = (manifest.id, manifest.version, manifest.target)
    copy = installed_copy(chain, parts, code=codes.INSTALL_OCCUPIED)
    record = state.copy(*parts)
    if record is not None and record.content_sha256 != copy.content_sha256:
        raise Refused.one(codes.INSTALL_RECORD_MISMATCH,
                          f"{copy.where}: content sha256 {copy.content_sha256}, state.json "
                          f"recorded {record.content_sha256}")
    if copy.content_sha256 != admitted.content_sha256:
        raise Refused.one(codes.INSTALL_VERSION_CONFLICT,
                          f"{copy.where} holds other bytes: installed content sha256 "
                          f"{copy.content_sha256}, {admitted.path.name} has "
                          f"{admitted.content_sha256}")
    new_state, notes = state, []
    if record is None:
        new_state = new_state.with_copy(*parts, _record(admitted))
        notes.append("recorded the copy an interrupted install had put in place")
    if request.enable and state.enabled(manifest.id, manifest.target) != manifest.version:
        notes += _enable_note(state, parts)
        new_state = new_state.with_enabled(manifest.id, manifest.target, manifest.version)
    wrote: tuple[str, ...] = ()
    if new_state != state:
        replace_state(home.fd, new_state)
        wrote = ("state",)
    return _result(ALREADY_INSTALLED, admitted, request,
                   enabled=new_state.enabled(manifest.id, manifest.target) == manifest.version,
                   wrote=wrote, notes=tuple(notes))
