"""The home's state file (`state.json`, format horon.agent-home.v1): the model and its codec.

What is installed is what is on disk under native-plugins/ (a rename put it there); the state
file says when and from what each copy was installed, the content digest it was installed
with, and which version of each id is enabled per target — one at most, by construction (a
map from target to version). Read strictly (core/strictjson, every field typed, unknown
fields refused, an enabled version must be installed), written canonically; a missing file
is an empty home. Updates return new values; nothing here does I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value, join
from horon_bundle.core.strictjson import canonical_bytes, read_json

STATE_FORMAT = "horon.agent-home.v1"
MAX_STATE_BYTES = 16 << 20
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z")
_CHANNELS = ("release", "qa")
_MAX_SOURCE = 255


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


@dataclass(frozen=True, slots=True)
class HomeState:
    native: dict[str, NativePlugin] = field(default_factory=dict)

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
        return HomeState({**self.native,
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
        return HomeState(native)

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
        return HomeState({**self.native, plugin_id: replace(plugin, enabled=enabled)})

    def to_json(self) -> dict[str, Any]:
        return {"format": STATE_FORMAT, "native_plugins": {
            plugin_id: {
                "enabled": dict(plugin.enabled),
                "installed": {version: {target: copy.to_json()
                                        for target, copy in targets.items()}
                              for version, targets in plugin.installed.items()},
            } for plugin_id, plugin in self.native.items()}}


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
        ok = paths.target_problem(value) is None if pattern is None \
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
            if digest is not None and not paths.SHA256_HEX.fullmatch(digest):
                self.bad(join(where, name), f"{describe_value(digest)} is not a SHA-256")
        if source is not None and not (0 < len(source) <= _MAX_SOURCE
                                       and source.isprintable()):
            self.bad(join(where, "source"), f"{describe_value(source)} is not a file name")
        if channel is not None and channel not in _CHANNELS:
            self.bad(join(where, "channel"), f"{describe_value(channel)} is not release or qa")
        if None in (installed_at, content, source, channel) or not readable:
            return None
        assert installed_at and content and source and channel
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
            if not self.key(version, paths.SEMVER, at, "semantic version") or targets is None:
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


def parse_state(data: bytes, source: str) -> HomeState:
    document = read_json(data, source=source, max_bytes=MAX_STATE_BYTES, max_depth=16)
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
    decoder.reader.finish(doc, "")
    native: dict[str, NativePlugin] = {}
    for plugin_id, raw_plugin in (raw_native or {}).items():
        where = join("native_plugins", plugin_id)
        plugin = decoder.plugin(raw_plugin, where)
        if decoder.key(plugin_id, paths.PLUGIN_ID, where, "plugin id") and plugin is not None:
            native[plugin_id] = plugin
    decoder.findings.raise_if_any()
    return HomeState(native)
