"""Reading a home's harness bundles: `list [--catalogue]`, `status [--verify]`, `check NAME`.

Readers take no lock and write nothing. `list` and `status` read the state file and list the
store directory — no zip is opened, so `list --catalogue` answers from state.json alone.
`--verify` and `check` hash and judge each stored zip through its descriptor and compare its
catalogue with the recorded one (install.harness_store.verify_stored).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Finding, Refused
from horon_bundle.install.dirs import Chain
from horon_bundle.install.harness_store import stored_names, verify_stored
from horon_bundle.install.home import Home, open_home
from horon_bundle.install.layout import (
    DIGEST_DIR,
    HARNESS_DIR,
    NATIVE_DIR,
    STORED_SUFFIX,
    stored_name,
    stored_where,
)
from horon_bundle.install.state import HarnessRecord, HomeState
from horon_bundle.install.statefile import read_state
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.harness.names import VERSION, name_problem

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any

INSTALLED, UNRECORDED, MISSING = "installed", "unrecorded", "missing"
CHECK_FORMAT = "horon.install-check.v1"


@dataclass(slots=True, kw_only=True)
class HarnessStatus:
    """One harness bundle of the home: its record, and whether its zip is stored."""

    sha256: str
    name: str | None = None      # None: a stored zip no record names
    version: str | None = None
    record: HarnessRecord | None = None
    on_disk: bool = True
    verified: list[Finding] | None = None  # None: not verified; []: verified

    @property
    def presence(self) -> str:
        if not self.on_disk:
            return MISSING
        return INSTALLED if self.record is not None else UNRECORDED

    @property
    def location(self) -> str:
        return stored_where(self.sha256)

    def to_json(self, *, catalogue: bool) -> dict[str, Any]:
        record = None
        if self.record is not None:
            record = self.record.to_json()
            if not catalogue:
                del record["catalogue"]
        return {"name": self.name, "version": self.version, "sha256": self.sha256,
                "location": self.location, "state": self.presence, "record": record,
                "verified": None if self.verified is None else not self.verified,
                "findings": [f.to_dict() for f in self.verified or []]}


def _store(home: Home) -> Chain | None:
    return home.area(HARNESS_DIR, DIGEST_DIR, create=False)


def survey_harness(home: Home, state: HomeState, *, name: str | None = None,
                   verify: bool = False) -> list[HarnessStatus]:
    """Every recorded bundle (of `name`), and every stored zip no record names."""
    store = _store(home)
    try:
        on_disk = set(stored_names(store)) if store is not None else set()
        found: list[HarnessStatus] = []
        for each, versions in sorted(state.harness.items()):
            if name not in (None, each):
                continue
            for version, record in sorted(versions.items()):
                item = HarnessStatus(sha256=record.sha256, name=each, version=version,
                                     record=record,
                                     on_disk=stored_name(record.sha256) in on_disk)
                if verify:
                    try:
                        item.verified = ([_missing(each, version, record)] if store is None
                                         else verify_stored(store, each, version, record))
                    except Refused as exc:  # a link or a FIFO in its place: this one only
                        item.verified = list(exc.findings)
                found.append(item)
        if name is None:
            recorded = {stored_name(sha) for sha in state.harness_digests()}
            found += [HarnessStatus(sha256=unrecorded[: -len(STORED_SUFFIX)])
                      for unrecorded in sorted(on_disk - recorded)]
        return found
    finally:
        if store is not None:
            store.close()


def _missing(name: str, version: str, record: HarnessRecord) -> Finding:
    return Finding(codes.INSTALL_NOT_INSTALLED, f"{stored_where(record.sha256)}: {name} "
                                                f"{version} is recorded in state.json but its "
                                                "zip is missing")


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckedHarness:
    """A stored harness zip that verified and is the one recorded (what a sandbox may fetch)."""

    name: str
    version: str
    path: Path
    record: HarnessRecord
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        record = self.record.to_json()
        del record["catalogue"]
        return {"format": CHECK_FORMAT, "ok": True, "kind": BundleKind.HARNESS,
                "name": self.name, "version": self.version, "path": str(self.path),
                "record": record, "ref": {"name": self.name, "sha256": self.record.sha256}}


def check_name(name: str) -> str:
    """A harness bundle name given on the command line (install.name otherwise)."""
    problem = name_problem(name)
    if problem is not None:
        raise Refused.one(codes.INSTALL_NAME, f"harness bundle name {name!r}: {problem}")
    return name


def check_harness(home_path: Path, name: str, *, version: str | None = None) -> CheckedHarness:
    """Re-verify the stored zip of `name` (its one installed version, or `version`): its
    digest, every harness rule, and its catalogue against the one state.json recorded."""
    check_name(name)
    if version is not None and not VERSION.fullmatch(version):
        raise Refused.one(codes.INSTALL_NAME, f"version {version!r} is not a version")
    home = open_home(home_path)
    if home is None:
        raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                          f"{home_path}: no agent home here, so nothing is installed")
    try:
        state = read_state(home.fd)
        versions = state.harness.get(name, {})
        if not versions:
            raise Refused.one(codes.INSTALL_NOT_INSTALLED,
                              f"{name}: no harness bundle of that name is installed in "
                              f"{home_path}")
        if version is None:
            if len(versions) > 1:
                raise Refused.one(codes.INSTALL_VERSION_REQUIRED,
                                  f"{name}: versions {', '.join(sorted(versions))} are "
                                  "installed; name one")
            [version] = versions
        record = versions.get(version)
        if record is None:
            raise Refused.one(codes.INSTALL_NOT_INSTALLED, f"{name} {version}: not installed")
        store = _store(home)
        if store is None:
            raise Refused([_missing(name, version, record)])
        with store:
            problems = verify_stored(store, name, version, record)
            path = store.path() / stored_name(record.sha256)
        if problems:
            raise Refused(problems)
        return CheckedHarness(name=name, version=version, path=path, record=record)
    finally:
        os.close(home.fd)


def installed_kind(home_path: Path, name: str, kind: str | None) -> BundleKind:
    """Whether `name` (for check, uninstall) means a native plugin or a harness bundle:
    `kind` when given; else the one kind the home holds under that name (native when it
    holds neither: that command then says it is not installed)."""
    if kind is not None:
        return BundleKind(kind)
    home = open_home(home_path)
    if home is None:
        return BundleKind.NATIVE
    try:
        state = read_state(home.fd)
        if name not in state.harness:
            return BundleKind.NATIVE
        native = name in state.native
        if not native and identifiers.PLUGIN_ID.fullmatch(name):
            chain = home.area(NATIVE_DIR, create=False)
            if chain is not None:
                with chain:
                    native = chain.descend(name)
        if native:
            raise Refused.one(codes.INSTALL_KIND_AMBIGUOUS,
                              f"{name}: installed as a native plugin and as a harness bundle")
        return BundleKind.HARNESS
    finally:
        os.close(home.fd)
