"""`list`, `status [--verify]`, `check` and the lookup behind `doctor ID`: reading a home.

Readers take no lock and write nothing. What is installed is what is on disk; the state file
adds when, from what and which version is enabled. The two are reconciled for the report:
a copy on disk with no record is `unrecorded` (an install killed after its rename: the next
install of those bytes records it), a record with nothing on disk is `missing`. Every
directory is reached through descriptors, never through a link, as in install.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Finding, Findings, Refused, exit_status_for
from horon_bundle.core.versions import precedence
from horon_bundle.install.dirs import Chain, io_error
from horon_bundle.install.harness_survey import HarnessStatus, check_name, survey_harness
from horon_bundle.install.home import Home, open_home
from horon_bundle.install.layout import (
    NATIVE_DIR,
    STAGING_PREFIX,
    TRASH_PREFIX,
    check_id,
    check_target,
    check_version,
)
from horon_bundle.install.state import HomeState, InstalledCopy
from horon_bundle.install.statefile import read_state

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:  # the verifier of a copy only when one is verified (start-up of `list`)
    from typing import Any

    from horon_bundle.install.copies import VerifiedCopy

INSTALLED, UNRECORDED, MISSING = "installed", "unrecorded", "missing"
STATUS_FORMAT = "horon.install-status.v1"


@dataclass(slots=True, kw_only=True)
class CopyStatus:
    plugin_id: str
    version: str
    target: str
    record: InstalledCopy | None
    on_disk: bool
    enabled: bool
    verified: list[Finding] | None = None  # None: not verified; []: verified

    @property
    def presence(self) -> str:
        if not self.on_disk:
            return MISSING
        return INSTALLED if self.record is not None else UNRECORDED

    def to_json(self) -> dict[str, Any]:
        return {"id": self.plugin_id, "version": self.version, "target": self.target,
                "state": self.presence, "enabled": self.enabled,
                "record": None if self.record is None else self.record.to_json(),
                "verified": None if self.verified is None else not self.verified,
                "findings": [f.to_dict() for f in self.verified or []]}


@dataclass(slots=True)
class Survey:
    home: Path
    exists: bool
    copies: list[CopyStatus] = field(default_factory=list)
    findings: Findings = field(default_factory=Findings)  # of the walk (links, non-dirs)
    notes: list[str] = field(default_factory=list)
    harness: list[HarnessStatus] = field(default_factory=list)
    catalogue: bool = False  # the JSON carries each harness bundle's catalogue

    @property
    def all_findings(self) -> list[Finding]:
        return [*self.findings, *(f for c in self.copies for f in c.verified or []),
                *(f for h in self.harness for f in h.verified or [])]

    @property
    def exit_status(self) -> int:
        return exit_status_for(self.all_findings)

    def to_json(self) -> dict[str, Any]:
        return {"format": STATUS_FORMAT, "home": str(self.home), "exists": self.exists,
                "ok": not self.all_findings, "copies": [c.to_json() for c in self.copies],
                "harness_bundles": [h.to_json(catalogue=self.catalogue) for h in self.harness],
                "findings": [f.to_dict() for f in self.findings], "notes": list(self.notes)}


def _entries(fd: int, where: str) -> list[str]:
    try:
        with os.scandir(fd) as scan:
            return sorted(entry.name for entry in scan)
    except OSError as exc:
        raise io_error(where, exc) from None


def _sort_key(item: CopyStatus) -> tuple[Any, ...]:
    try:
        version_key: tuple[object, ...] = precedence(item.version)
    except ValueError:
        version_key = ()
    return (item.plugin_id, version_key, item.version, item.target)


def survey(home_path: Path, *, plugin_id: str | None = None, verify: bool = False,
           catalogue: bool = False) -> Survey:
    """What is installed (on disk and recorded), each copy verified when `verify`; native
    plugins and harness bundles (a name that is no native id can only be a harness one)."""
    native_name = plugin_id is None or identifiers.PLUGIN_ID.fullmatch(plugin_id) is not None
    if not native_name:
        assert plugin_id is not None
        check_name(plugin_id)
    home = open_home(home_path)
    if home is None:
        return Survey(home_path, exists=False, catalogue=catalogue)
    try:
        state = read_state(home.fd)
        result = Survey(home_path, exists=True, catalogue=catalogue)
        result.harness = survey_harness(home, state, name=plugin_id, verify=verify)
        seen: dict[tuple[str, str, str], CopyStatus] = {}
        native = home.native(create=False) if native_name else None
        if native is not None:
            with native:
                _Walker(state, plugin_id, verify, result, seen).native(native)
        for pid, plugin in sorted(state.native.items()):
            if plugin_id not in (None, pid) or not native_name:
                continue
            for version, targets in plugin.installed.items():
                for target, record in targets.items():
                    if (pid, version, target) not in seen:
                        seen[pid, version, target] = CopyStatus(
                            plugin_id=pid, version=version, target=target, record=record,
                            on_disk=False, enabled=plugin.enabled.get(target) == version,
                            verified=[Finding(codes.INSTALL_NOT_INSTALLED,
                                              f"{NATIVE_DIR}/{pid}/{version}/{target}: "
                                              "recorded in state.json but missing")]
                            if verify else None)
        result.copies = sorted(seen.values(), key=_sort_key)
        return result
    finally:
        os.close(home.fd)


@dataclass(slots=True)
class _Walker:
    state: HomeState
    only: str | None
    verify: bool
    result: Survey
    seen: dict[tuple[str, str, str], CopyStatus]

    def native(self, native: Chain) -> None:
        for pid in _entries(native.fd, NATIVE_DIR):
            if pid.startswith((STAGING_PREFIX, TRASH_PREFIX)) or self.only not in (None, pid):
                continue
            if not identifiers.PLUGIN_ID.fullmatch(pid):
                self.result.notes.append(f"{NATIVE_DIR}/{pid}: not a plugin id; ignored")
                continue
            try:
                with native.fork() as by_id:
                    by_id.descend(pid)
                    for version in _entries(by_id.fd, by_id.where):
                        self.version(by_id, version)
            except Refused as exc:
                self.result.findings.extend(exc.findings)

    def version(self, by_id: Chain, version: str) -> None:
        if not identifiers.SEMVER.fullmatch(version):
            self.result.notes.append(f"{by_id.child_where(version)}: not a version; ignored")
            return
        try:
            with by_id.fork() as by_version:
                by_version.descend(version)
                for target in _entries(by_version.fd, by_version.where):
                    self.target(by_version, target)
        except Refused as exc:
            self.result.findings.extend(exc.findings)

    def target(self, by_version: Chain, target: str) -> None:
        if identifiers.target_problem(target) is not None:
            self.result.notes.append(f"{by_version.child_where(target)}: not a target; ignored")
            return
        pid, version = by_version.links[-2].name, by_version.links[-1].name
        try:
            with by_version.fork() as chain:
                chain.descend(target)
                record = self.state.copy(pid, version, target)
                item = CopyStatus(plugin_id=pid, version=version, target=target, record=record,
                                  on_disk=True,
                                  enabled=self.state.enabled(pid, target) == version)
                if self.verify:
                    item.verified = _verify(chain, (pid, version, target), record)
                self.seen[pid, version, target] = item
        except Refused as exc:
            self.result.findings.extend(exc.findings)


def _verify(chain: Chain, parts: tuple[str, str, str],
            record: InstalledCopy | None) -> list[Finding]:
    from horon_bundle.install.copies import installed_copy  # noqa: PLC0415 - start-up

    try:
        copy = installed_copy(chain, parts)
    except Refused as exc:
        return list(exc.findings)
    return _record_findings(copy, record)


def _record_findings(copy: VerifiedCopy, record: InstalledCopy | None) -> list[Finding]:
    if record is not None and record.content_sha256 != copy.content_sha256:
        return [Finding(codes.INSTALL_RECORD_MISMATCH,
                        f"{copy.where}: content sha256 {copy.content_sha256}, state.json "
                        f"recorded {record.content_sha256}")]
    return []


@dataclass(frozen=True, slots=True, kw_only=True)
class Checked:
    """An installed copy that verified and is the one recorded (what a host may load)."""

    plugin_id: str
    version: str
    target: str
    path: Path
    record: InstalledCopy
    enabled: bool
    # why this version: "named", "enabled", or "only-installed" (none enabled, one installed)
    chosen: str = "enabled"

    def to_json(self) -> dict[str, Any]:
        return {"format": CHECK_FORMAT, "ok": True, "id": self.plugin_id,
                "version": self.version, "target": self.target, "path": str(self.path),
                "enabled": self.enabled, "record": self.record.to_json()}


CHECK_FORMAT = "horon.install-check.v1"


def check(home_path: Path, plugin_id: str, *, target: str, version: str | None = None,
          sole_installed: bool = False) -> Checked:
    """Re-verify the enabled (or the named) version of `plugin_id` for `target`: every file
    against its plugin.json and SHA256SUMS, and the whole against state.json's record. With
    `sole_installed`, a plugin with no version enabled and exactly one installed for the
    target gets that one (`doctor ID` right after `install ID`)."""
    check_id(plugin_id)
    check_target(target)
    if version is not None:
        check_version(version)
    home = open_home(home_path)
    if home is None:
        raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                          f"{home_path}: no agent home here, so nothing is installed")
    try:
        return _check(home, plugin_id, target, version, sole_installed=sole_installed)
    finally:
        os.close(home.fd)


def _check(home: Home, plugin_id: str, target: str, version: str | None, *,
           sole_installed: bool) -> Checked:
    state = read_state(home.fd)
    plugin = state.plugin(plugin_id)
    if plugin is None:
        if plugin_id in state.harness:  # e.g. `doctor NAME`: there is no library to load
            raise Refused.one(codes.LAYOUT_HARNESS_BUNDLE,
                              f"{plugin_id}: installed in {home.path} as a harness bundle, not "
                              "a native plugin",
                              f"`horon-bundle check {plugin_id}` re-verifies its stored zip; "
                              "`list --catalogue` shows what it offers.")
        raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                          f"{plugin_id}: not installed in {home.path}")
    enabled = plugin.enabled.get(target)
    chosen = "named" if version is not None else "enabled"
    if version is None:
        installed = sorted(v for v, targets in plugin.installed.items() if target in targets)
        if enabled is None and sole_installed and len(installed) == 1:
            version, chosen = installed[0], "only-installed"
        elif enabled is None:
            several = sole_installed and len(installed) > 1
            raise Refused.one(codes.INSTALL_NOT_ENABLED,
                              f"{plugin_id}: no version is enabled for {target}"
                              + (f" and {len(installed)} are installed "
                                 f"({', '.join(installed)})" if several else ""),
                              "Name one with --installed-version VERSION, or enable one first: "
                              f"`horon-bundle enable {plugin_id} VERSION`." if several else "")
        else:
            version = enabled
    record = plugin.copy(version, target)
    parts = (plugin_id, version, target)
    where = "/".join((NATIVE_DIR, *parts))
    if record is None:
        raise Refused.one(codes.INSTALL_NOT_INSTALLED, f"{where}: not installed")
    native = home.native(create=False)
    if native is None:
        raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                          f"{where}: recorded in state.json but missing")
    with native:
        for part in parts:
            if not native.descend(part):
                raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                                  f"{where}: recorded in state.json but missing")
        from horon_bundle.install.copies import installed_copy  # noqa: PLC0415 - start-up

        copy = installed_copy(native, parts)
    mismatch = _record_findings(copy, record)
    if mismatch:
        raise Refused(mismatch)
    return Checked(plugin_id=plugin_id, version=version, target=target, path=copy.path,
                   record=record, enabled=enabled == version, chosen=chosen)
