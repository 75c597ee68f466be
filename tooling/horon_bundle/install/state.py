"""The home's state file (`state.json`, format horon.agent-home.v1): the model and its codec.

Native plugins: what is installed is what is on disk under native-plugins/ (a rename put it
there); the state file says when and from what each copy was installed, the content digest it
was installed with, and which version of each id is enabled per target — one at most, by
construction (a map from target to version).

Harness bundles (`harness_bundles`, written only when a home holds one, so that a home of
native plugins stays readable by a reader that knows only them — such a reader refuses the key
as unknown rather than misreading it): name -> version -> the zip's SHA-256 (its name in
harness-bundles/sha256/), size, when and from what, and its catalogue, so that a host lists
what a bundle offers from this file alone. Here the record is the commit point: a stored zip
no record names is the debris of a killed install or uninstall.

Read strictly (core/strictjson, every field typed, unknown fields refused, an enabled version
must be installed, one digest names one name and version), written canonically; a missing
file is an empty home. Updates return new values; nothing here does I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value, join
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.harness.catalogue_summary import check_catalogue
from horon_bundle.model.harness.names import VERSION as HARNESS_VERSION
from horon_bundle.model.harness.names import name_problem

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any

STATE_FORMAT = "horon.agent-home.v1"
HARNESS_KEY = "harness_bundles"
MAX_STATE_BYTES = 16 << 20
MAX_STATE_DEPTH = 40  # a catalogue (depth 32 at most) sits 4 levels down
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_CHANNELS = ("release", "qa")
_MAX_SOURCE = 255


def now_utc() -> str:
    """The time a record is made, as the state file keeps it."""
    import datetime  # noqa: PLC0415 - a writer's: reading the state file needs none (start-up)

    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def source_name(path: Path) -> str:
    """The file name an install was made from, as the state file keeps it (for people)."""
    name = path.name or path.absolute().resolve().name  # `install .`: the directory's name
    if not (name.isprintable() and 0 < len(name) <= _MAX_SOURCE):
        name = repr(name)[:_MAX_SOURCE]
    return name


@dataclass(frozen=True, slots=True, kw_only=True)
class InstalledCopy:
    installed_at: str            # UTC, RFC 3339 to the second
    content_sha256: str          # SHA-256 of the copy's SHA256SUMS, which pins every byte
    archive_sha256: str | None   # the archive it came from; None for a bundle directory
    source: str                  # the file name it was installed from (for people)
    channel: str

    def to_json(self) -> dict[str, Any]:
        return {"installed_at": self.installed_at, "content_sha256": self.content_sha256,
                "archive_sha256": self.archive_sha256, "source": self.source,
                "channel": self.channel}


@dataclass(frozen=True, slots=True, kw_only=True)
class NativePlugin:
    installed: dict[str, dict[str, InstalledCopy]]  # version -> target -> copy
    enabled: dict[str, str] = field(default_factory=dict)  # target -> version

    def copy(self, version: str, target: str) -> InstalledCopy | None:
        return self.installed.get(version, {}).get(target)


@dataclass(frozen=True, slots=True, kw_only=True)
class HarnessRecord:
    """One installed harness bundle: the zip stored under its digest, and its catalogue."""

    sha256: str                 # the zip's SHA-256: harness-bundles/sha256/<sha256>.zip
    size: int
    installed_at: str           # UTC, RFC 3339 to the second
    source: str                 # the file name it was installed from (for people)
    catalogue: dict[str, Any]   # the zip's catalogue.json, as a document

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "size": self.size, "installed_at": self.installed_at,
                "source": self.source, "catalogue": self.catalogue}


@dataclass(frozen=True, slots=True)
class HomeState:
    native: dict[str, NativePlugin] = field(default_factory=dict)
    harness: dict[str, dict[str, HarnessRecord]] = field(default_factory=dict)  # name->version

    def plugin(self, plugin_id: str) -> NativePlugin | None:
        return self.native.get(plugin_id)

    def copy(self, plugin_id: str, version: str, target: str) -> InstalledCopy | None:
        plugin = self.native.get(plugin_id)
        return None if plugin is None else plugin.copy(version, target)

    def enabled(self, plugin_id: str, target: str) -> str | None:
        plugin = self.native.get(plugin_id)
        return None if plugin is None else plugin.enabled.get(target)

    # --- updates (each returns a new state) ----------------------------------------------
    def with_copy(self, plugin_id: str, version: str, target: str,
                  copy: InstalledCopy) -> HomeState:
        plugin = self.native.get(plugin_id) or NativePlugin(installed={})
        installed = {v: dict(t) for v, t in plugin.installed.items()}
        installed.setdefault(version, {})[target] = copy
        return replace(self, native={**self.native,
                                     plugin_id: replace(plugin, installed=installed,
                                                        enabled=dict(plugin.enabled))})

    def without_copy(self, plugin_id: str, version: str, target: str) -> HomeState:
        plugin = self.native.get(plugin_id)
        if plugin is None:
            return self
        installed = {v: {t: c for t, c in targets.items() if (v, t) != (version, target)}
                     for v, targets in plugin.installed.items()}
        installed = {v: targets for v, targets in installed.items() if targets}
        enabled = {t: v for t, v in plugin.enabled.items() if (v, t) != (version, target)}
        native = dict(self.native)
        if installed:
            native[plugin_id] = NativePlugin(installed=installed, enabled=enabled)
        else:
            del native[plugin_id]
        return replace(self, native=native)

    def with_enabled(self, plugin_id: str, target: str, version: str | None) -> HomeState:
        """Enable `version` for `target` (replacing the one enabled), or disable (None)."""
        plugin = self.native[plugin_id]
        enabled = dict(plugin.enabled)
        if version is None:
            enabled.pop(target, None)
        else:
            if plugin.copy(version, target) is None:
                raise RuntimeError(f"enabling {plugin_id} {version} {target}: not recorded")
            enabled[target] = version
        return replace(self, native={**self.native, plugin_id: replace(plugin, enabled=enabled)})

    # --- harness bundles -------------------------------------------------------------------
    def harness_record(self, name: str, version: str) -> HarnessRecord | None:
        return self.harness.get(name, {}).get(version)

    def harness_digests(self) -> set[str]:
        return {r.sha256 for versions in self.harness.values() for r in versions.values()}

    def with_harness(self, name: str, version: str, record: HarnessRecord) -> HomeState:
        versions = {**self.harness.get(name, {}), version: record}
        return replace(self, harness={**self.harness, name: versions})

    def without_harness(self, name: str, version: str) -> HomeState:
        versions = {v: r for v, r in self.harness.get(name, {}).items() if v != version}
        harness = {n: vs for n, vs in self.harness.items() if n != name}
        if versions:
            harness[name] = versions
        return replace(self, harness=harness)

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"format": STATE_FORMAT, "native_plugins": {
            plugin_id: {
                "enabled": dict(plugin.enabled),
                "installed": {version: {target: copy.to_json()
                                        for target, copy in targets.items()}
                              for version, targets in plugin.installed.items()},
            } for plugin_id, plugin in self.native.items()}}
        if self.harness:  # absent otherwise: a native-only home reads as before
            document[HARNESS_KEY] = {
                name: {version: record.to_json() for version, record in versions.items()}
                for name, versions in self.harness.items()}
        return document


def state_bytes(state: HomeState) -> bytes:
    return canonical_bytes(state.to_json())


class _Decoder:
    def __init__(self, source: str) -> None:
        self.findings = Findings()
        self.reader = FieldReader(source, self.findings, codes.INSTALL_STATE,
                                  codes.INSTALL_STATE, codes.INSTALL_STATE)

    def bad(self, where: str, message: str) -> None:
        self.reader.report(codes.INSTALL_STATE, where, message)

    def key(self, value: str, pattern: re.Pattern[str] | None, where: str, what: str) -> bool:
        ok = identifiers.target_problem(value) is None if pattern is None \
            else pattern.fullmatch(value) is not None
        if not ok:
            self.bad(where, f"{describe_value(value)} is not a {what}")
        return ok

    def copy(self, value: object, where: str) -> InstalledCopy | None:
        doc = self.reader.typed(value, dict, where)
        if doc is None:
            return None
        doc = dict(doc)
        installed_at = self.reader.take(doc, "installed_at", str, where)
        content = self.reader.take(doc, "content_sha256", str, where)
        readable, archive = self.reader.take_nullable(doc, "archive_sha256", str, where)
        source = self.reader.take(doc, "source", str, where)
        channel = self.reader.take(doc, "channel", str, where)
        self.reader.finish(doc, where)
        if installed_at is not None and not _TIMESTAMP.fullmatch(installed_at):
            self.bad(join(where, "installed_at"), f"{describe_value(installed_at)} is not a "
                                                  "UTC time like 2026-01-31T12:00:00Z")
        for name, digest in (("content_sha256", content), ("archive_sha256", archive)):
            if digest is not None and not identifiers.SHA256_HEX.fullmatch(digest):
                self.bad(join(where, name), f"{describe_value(digest)} is not a SHA-256")
        if source is not None and not (0 < len(source) <= _MAX_SOURCE
                                       and source.isprintable()):
            self.bad(join(where, "source"), f"{describe_value(source)} is not a file name")
        if channel is not None and channel not in _CHANNELS:
            self.bad(join(where, "channel"), f"{describe_value(channel)} is not release or qa")
        if None in (installed_at, content, source, channel) or not readable:
            return None
        assert installed_at is not None and content is not None
        assert source is not None and channel is not None
        return InstalledCopy(installed_at=installed_at, content_sha256=content,
                             archive_sha256=archive, source=source, channel=channel)

    def plugin(self, value: object, where: str) -> NativePlugin | None:
        doc = self.reader.typed(value, dict, where)
        if doc is None:
            return None
        doc = dict(doc)
        raw_installed = self.reader.take(doc, "installed", dict, where)
        raw_enabled = self.reader.take(doc, "enabled", dict, where)
        self.reader.finish(doc, where)
        installed: dict[str, dict[str, InstalledCopy]] = {}
        for version, raw_targets in (raw_installed or {}).items():
            at = join(join(where, "installed"), version)
            targets = self.reader.typed(raw_targets, dict, at)
            if not self.key(version, identifiers.SEMVER, at, "semantic version") or targets is None:
                continue
            if not targets:
                self.bad(at, "a version with no target")
            for target, raw_copy in targets.items():
                copy_at = join(at, target)
                copy = self.copy(raw_copy, copy_at)
                if self.key(target, None, copy_at, "target triple") and copy is not None:
                    installed.setdefault(version, {})[target] = copy
        if raw_installed is not None and not raw_installed:
            self.bad(join(where, "installed"), "a plugin with no installed version")
        enabled: dict[str, str] = {}
        for target, version in (raw_enabled or {}).items():
            at = join(join(where, "enabled"), target)
            text = self.reader.typed(version, str, at)
            if text is None or not self.key(target, None, at, "target triple"):
                continue
            if text not in installed or target not in installed[text]:
                self.bad(at, f"enables {text!r}, which is not installed for {target}")
                continue
            enabled[target] = text
        return NativePlugin(installed=installed, enabled=enabled)

    def harness_record(self, value: object, name: str, version: str,
                       where: str) -> HarnessRecord | None:
        doc = self.reader.typed(value, dict, where)
        if doc is None:
            return None
        doc = dict(doc)
        sha256 = self.reader.take(doc, "sha256", str, where)
        size = self.reader.take(doc, "size", int, where)
        installed_at = self.reader.take(doc, "installed_at", str, where)
        source = self.reader.take(doc, "source", str, where)
        catalogue = self.reader.take(doc, "catalogue", dict, where)
        self.reader.finish(doc, where)
        if sha256 is not None and not identifiers.SHA256_HEX.fullmatch(sha256):
            self.bad(join(where, "sha256"), f"{describe_value(sha256)} is not a SHA-256")
            sha256 = None
        if size is not None and size < 0:
            self.bad(join(where, "size"), f"{size} is not a size")
            size = None
        if installed_at is not None and not _TIMESTAMP.fullmatch(installed_at):
            self.bad(join(where, "installed_at"), f"{describe_value(installed_at)} is not a "
                                                  "UTC time like 2026-01-31T12:00:00Z")
            installed_at = None
        if source is not None and not (0 < len(source) <= _MAX_SOURCE and source.isprintable()):
            self.bad(join(where, "source"), f"{describe_value(source)} is not a file name")
            source = None
        if catalogue is not None:
            try:
                summary = check_catalogue(catalogue, source=f"{self.reader.source}: "
                                                            f"{join(where, 'catalogue')}")
            except Refused as exc:
                self.reader.findings.extend(exc.findings)
                catalogue = None
            else:
                if (summary.name, summary.version) != (name, version):
                    self.bad(join(where, "catalogue"), f"names {summary.name} "
                                                       f"{summary.version}, recorded under "
                                                       f"{name} {version}")
                    catalogue = None
        if sha256 is None or size is None or installed_at is None or source is None \
                or catalogue is None:
            return None
        return HarnessRecord(sha256=sha256, size=size, installed_at=installed_at,
                             source=source, catalogue=catalogue)

    def harness(self, names: dict[str, Any]) -> dict[str, dict[str, HarnessRecord]]:
        result: dict[str, dict[str, HarnessRecord]] = {}
        owners: dict[str, str] = {}
        for name, raw_versions in names.items():
            where = join(HARNESS_KEY, name)
            versions = self.reader.typed(raw_versions, dict, where)
            if name_problem(name) is not None:
                self.bad(where, f"{describe_value(name)} is not a harness bundle name")
                continue
            if versions is None:
                continue
            if not versions:
                self.bad(where, "a bundle with no installed version")
            for version, raw in versions.items():
                at = join(where, version)
                record = self.harness_record(raw, name, version, at)
                if not HARNESS_VERSION.fullmatch(version):
                    self.bad(at, f"{describe_value(version)} is not a version")
                elif record is not None:
                    if record.sha256 in owners:  # one digest is one zip: one name and version
                        self.bad(join(at, "sha256"), f"{record.sha256} is also recorded for "
                                                     f"{owners[record.sha256]}")
                        continue
                    owners[record.sha256] = f"{name} {version}"
                    result.setdefault(name, {})[version] = record
        return result


def parse_state(data: bytes, source: str) -> HomeState:
    document = read_json(data, source=source, max_bytes=MAX_STATE_BYTES,
                         max_depth=MAX_STATE_DEPTH)
    decoder = _Decoder(source)
    doc = decoder.reader.typed(document, dict, "")
    if doc is None:
        raise Refused(decoder.findings)
    doc = dict(doc)
    fmt = decoder.reader.take(doc, "format", str, "")
    if fmt is not None and fmt != STATE_FORMAT:
        raise Refused.one(codes.INSTALL_STATE, f"{source}: format {fmt!r}, this toolchain "
                                               f"reads {STATE_FORMAT!r}")
    raw_native = decoder.reader.take(doc, "native_plugins", dict, "")
    raw_harness = decoder.reader.take_optional(doc, HARNESS_KEY, dict, "", {})
    harness = decoder.harness(raw_harness) if raw_harness else {}
    decoder.reader.finish(doc, "")
    native: dict[str, NativePlugin] = {}
    for plugin_id, raw_plugin in (raw_native or {}).items():
        where = join("native_plugins", plugin_id)
        plugin = decoder.plugin(raw_plugin, where)
        if decoder.key(plugin_id, identifiers.PLUGIN_ID, where, "plugin id") and plugin is not None:
            native[plugin_id] = plugin
    decoder.findings.raise_if_any()
    return HomeState(native, harness)
