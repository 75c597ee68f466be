"""`enable`, `disable` and `uninstall`: changes to what a home holds, each under its lock.

Every change is one atomic state replacement (install.statefile): a kill leaves the old state
file or the new one. A change that changes nothing writes nothing. `enable` re-verifies the
copy first — a host should never be pointed at bytes that no longer verify — and replaces
the version enabled for that target, so at most one is. `uninstall` disables and forgets the
version in the state first, then renames its directory into `native-plugins/.trash-*`
(atomically gone from its place) and removes that: a kill leaves a copy the state no longer
names (the next `uninstall` removes it) or trash (the next writer sweeps it).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.checkpoint import checkpoint
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.core.files import renameat2_noreplace
from horon_bundle.core.versions import highest
from horon_bundle.install.copies import installed_copy
from horon_bundle.install.dirs import Chain, io_error, lstat_at, remove_tree_at
from horon_bundle.install.harness_store import collect_garbage
from horon_bundle.install.harness_survey import check_name
from horon_bundle.install.home import Home, writing
from horon_bundle.install.layout import (
    DIGEST_DIR,
    HARNESS_DIR,
    NATIVE_DIR,
    TRASH_PREFIX,
    check_id,
    check_target,
    check_version,
    stored_where,
)
from horon_bundle.install.lock import DEFAULT_LOCK_TIMEOUT
from horon_bundle.install.state import HomeState
from horon_bundle.install.statefile import read_state, replace_state
from horon_bundle.model.bundle_kind import BundleKind

CHANGE_FORMAT = "horon.install-change.v1"
_ZIP_LEFT = ("state.json no longer names this bundle (it is uninstalled); fix what the error "
             "names: the next harness install or uninstall removes the zip left.")
_PARTLY_REMOVED = ("state.json no longer names this version (it is uninstalled); fix what "
                   "the error names: the next writer removes the files left in "
                   "native-plugins/.trash-* (files still in place: the same uninstall again).")
ENABLED, ALREADY_ENABLED = "enabled", "already-enabled"
DISABLED, NOT_ENABLED = "disabled", "not-enabled"
UNINSTALLED = "uninstalled"


@dataclass(frozen=True, slots=True, kw_only=True)
class Change:
    status: str
    plugin_id: str
    version: str | None
    targets: tuple[str, ...]
    wrote: bool
    notes: tuple[str, ...] = ()
    kind: BundleKind = BundleKind.NATIVE  # a harness bundle has no targets

    def to_json(self) -> dict[str, Any]:
        return {"format": CHANGE_FORMAT, "kind": self.kind, "status": self.status,
                "id": self.plugin_id,
                "version": self.version, "targets": list(self.targets), "wrote": self.wrote,
                "notes": list(self.notes)}


def _not_native(state: HomeState, name: str) -> None:
    """A harness bundle of that name has nothing to enable or disable: say so."""
    if name in state.harness:
        raise Refused.one(codes.HARNESS_UNSUPPORTED,
                          f"{name} is a harness bundle: there is nothing to enable or disable "
                          "(a host hands its sandboxes refs)")


def _walk(home: Home, parts: tuple[str, ...]) -> Chain | None:
    """A chain down to native-plugins/<parts…>; None when a component is absent."""
    chain = home.native(create=False)
    if chain is None:
        return None
    for part in parts:
        if not chain.descend(part):
            chain.close()
            return None
    return chain


def enable(home_path: Path, plugin_id: str, *, target: str, version: str | None = None,
           lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Change:
    check_id(plugin_id)
    check_target(target)
    if version is not None:
        check_version(version)
    with writing(home_path, create=False, lock_timeout=lock_timeout) as home:
        state = read_state(home.fd)
        plugin = state.plugin(plugin_id)
        if plugin is None:
            _not_native(state, plugin_id)
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{plugin_id}: not installed in {home_path}")
        if version is None:
            version = highest([v for v, targets in plugin.installed.items()
                               if target in targets])
            if version is None:
                raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                                  f"{plugin_id}: no version installed for {target}")
        parts = (plugin_id, version, target)
        if plugin.copy(version, target) is None:
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{'/'.join((NATIVE_DIR, *parts))}: not installed")
        chain = _walk(home, parts)
        if chain is None:
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{'/'.join((NATIVE_DIR, *parts))}: recorded in state.json but "
                              "missing")
        with chain:
            copy = installed_copy(chain, parts)
        record = plugin.copy(version, target)
        assert record is not None
        if record.content_sha256 != copy.content_sha256:
            raise Refused.one(codes.INSTALL_RECORD_MISMATCH,
                              f"{copy.where}: content sha256 {copy.content_sha256}, state.json "
                              f"recorded {record.content_sha256}")
        before = plugin.enabled.get(target)
        if before == version:
            return Change(status=ALREADY_ENABLED, plugin_id=plugin_id, version=version,
                          targets=(target,), wrote=False)
        replace_state(home.fd, state.with_enabled(plugin_id, target, version))
        notes = (f"{plugin_id} {before} is no longer enabled for {target}",) if before else ()
        return Change(status=ENABLED, plugin_id=plugin_id, version=version, targets=(target,),
                      wrote=True, notes=notes)


def disable(home_path: Path, plugin_id: str, *, target: str | None = None,
            lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Change:
    """Disable `plugin_id` for `target` (every target when None); it stays installed."""
    check_id(plugin_id)
    if target is not None:
        check_target(target)
    with writing(home_path, create=False, lock_timeout=lock_timeout) as home:
        state = read_state(home.fd)
        plugin = state.plugin(plugin_id)
        if plugin is None:
            _not_native(state, plugin_id)
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{plugin_id}: not installed in {home_path}")
        targets = tuple(sorted(t for t in plugin.enabled if target in (None, t)))
        if not targets:
            return Change(status=NOT_ENABLED, plugin_id=plugin_id, version=None,
                          targets=(target,) if target else (), wrote=False)
        new_state = state
        for each in targets:
            new_state = new_state.with_enabled(plugin_id, each, None)
        replace_state(home.fd, new_state)
        return Change(status=DISABLED, plugin_id=plugin_id, version=None, targets=targets,
                      wrote=True)


def uninstall(home_path: Path, plugin_id: str, version: str, *, target: str | None = None,
              lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Change:
    """Remove `version` of `plugin_id` (one target, or all of them) from the home."""
    check_id(plugin_id)
    check_version(version)
    if target is not None:
        check_target(target)
    with writing(home_path, create=False, lock_timeout=lock_timeout) as home:
        state = read_state(home.fd)
        plugin = state.plugin(plugin_id)
        recorded = set(plugin.installed.get(version, {})) if plugin is not None else set()
        chain = _walk(home, (plugin_id, version))
        with chain if chain is not None else contextlib.nullcontext():
            on_disk = set(_entries(chain.fd, chain.where)) if chain is not None else set()
            targets = {target} if target is not None else recorded | on_disk
            if not targets & (recorded | on_disk):
                where = "/".join(filter(None, (NATIVE_DIR, plugin_id, version, target)))
                raise Refused.one(codes.INSTALL_NOT_INSTALLED, f"{where}: not installed")
            new_state = state
            for each in sorted(targets & recorded):
                new_state = new_state.without_copy(plugin_id, version, each)
            notes = tuple(f"{plugin_id} {version} was enabled for {t}; it is disabled now"
                          for t in sorted(targets) if state.enabled(plugin_id, t) == version)
            if new_state != state:
                replace_state(home.fd, new_state)
            if chain is not None and targets & on_disk:
                try:
                    _remove(chain, targets & on_disk, on_disk)
                except Refused as exc:  # after the state change: say so, not "unchanged"
                    raise Refused([Finding(f.code, f.message, _PARTLY_REMOVED)
                                   for f in exc.findings]) from None
        return Change(status=UNINSTALLED, plugin_id=plugin_id, version=version,
                      targets=tuple(sorted(targets)), wrote=True, notes=notes)


def _entries(fd: int, where: str) -> list[str]:
    try:
        with os.scandir(fd) as scan:
            return sorted(entry.name for entry in scan)
    except OSError as exc:
        raise io_error(where, exc) from None


def _remove(chain: Chain, targets: set[str], on_disk: set[str]) -> None:
    """Rename the highest directory that only holds what goes into trash, then remove it.

    `chain` is opened down to the version directory: native-plugins, id, version."""
    native, by_id, by_version = chain.links[0], chain.links[1], chain.links[2]
    if on_disk - targets:
        victims = [(by_version.fd, name, f"{by_version.where}/{name}") for name in targets]
    else:
        versions = _entries(by_id.fd, by_id.where)
        if len(versions) > 1:
            victims = [(by_id.fd, by_version.name, by_version.where)]
        else:
            victims = [(native.fd, by_id.name, by_id.where)]
    for parent, name, where in sorted(victims):
        info = lstat_at(parent, name, where)
        if info is None:
            continue
        trash = TRASH_PREFIX + secrets.token_hex(8)
        try:
            if not renameat2_noreplace(name, trash, source_dir=parent,
                                       destination_dir=native.fd):
                os.rename(name, trash, src_dir_fd=parent, dst_dir_fd=native.fd)
            os.fsync(parent)
            os.fsync(native.fd)
            checkpoint("trashed")
            remove_tree_at(native.fd, trash)
            os.fsync(native.fd)
        except OSError as exc:
            raise io_error(where, exc) from None



def uninstall_harness(home_path: Path, name: str, version: str, *,
                      lock_timeout: float = DEFAULT_LOCK_TIMEOUT) -> Change:
    """Remove harness bundle `name` `version`: its record first (the commit point), then its
    stored zip (a kill between leaves a zip no record names, which the next harness writer
    removes)."""
    check_name(name)
    with writing(home_path, create=False, lock_timeout=lock_timeout) as home:
        state = read_state(home.fd)
        record = state.harness_record(name, version)
        if record is None:
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{name} {version}: no such harness bundle is installed")
        replace_state(home.fd, state.without_harness(name, version))
        checkpoint("trashed")
        store = home.area(HARNESS_DIR, DIGEST_DIR, create=False)
        if store is not None:
            with store:
                try:
                    collect_garbage(store, state.without_harness(name, version))
                except Refused as exc:  # after the record went: say so, not "unchanged"
                    raise Refused([Finding(f.code, f.message, _ZIP_LEFT)
                                   for f in exc.findings]) from None
        return Change(status=UNINSTALLED, plugin_id=name, version=version, targets=(),
                      wrote=True, notes=(f"removed {stored_where(record.sha256)}",),
                      kind=BundleKind.HARNESS)
