"""plugin.json of `.claude-plugin/` and `.muse-plugin/`, read against the fields Claude Code
2.1.332 (the pinned host) knows (`manifest_fields`: each field's check).

Refused, as the host refuses to load them: duplicate keys and other strict-JSON faults, a
field of the wrong type or value, a missing or unusable name, a name the host reserves for
Anthropic (a Claude Code manifest), an unknown key inside a userConfig option, a component
path that is absolute, lacks ./, escapes the root or has the wrong file ending. Stricter on
purpose: a name or version that cannot name the bundle's file (`<name>-<version>.zip`).
Warned, as `claude plugin validate` warns while the host still loads the plugin: a top-level
field the host does not know (it strips it), a name that is not kebab-case. A missing version
is no fault: the build takes the marketplace entry's, else one made from the content.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import describe_value
from horon_bundle.core.strictjson import read_json
from horon_bundle.model import checksums
from horon_bundle.model.harness.host_names import plugin_name_problem
from horon_bundle.model.harness.layout import MAX_JSON_BYTES, MAX_JSON_DEPTH
from horon_bundle.model.harness.manifest_fields import (
    CONFIG_FIELDS,
    KNOWN_FIELDS,
    PATH_FIELDS,
    FieldChecks,
)
from horon_bundle.model.harness.names import VERSION, name_problem

KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginManifest:
    name: str
    version: str | None
    description: str | None
    host: str  # claude-code or muse-code: whose manifest directory it was read from
    version_from: str = "plugin.json"  # or "marketplace" (the entry gave it), "none"
    named_from: str = "plugin.json"  # or "marketplace", "directory" (no manifest, no entry)
    component_paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    inline: dict[str, dict[str, Any]] = field(default_factory=dict)  # hooks / mcpServers

    def paths_of(self, kind: str) -> tuple[str, ...]:
        return self.component_paths.get(kind, ())


def content_version(files: Mapping[str, str]) -> str:
    """The version of a plugin nothing versions: `0.0.0+sha.` and the first 12 hex digits of
    the SHA-256 of its files' SHA256SUMS (path -> SHA-256 of each plugin file, the files the
    build adds left out). The same files give the same version; it names no catalogue, so
    the catalogue that records it does not change it."""
    digest = hashlib.sha256(checksums.render(files)).hexdigest()
    return f"{CONTENT_VERSION_PREFIX}{digest[:12]}"


CONTENT_VERSION_PREFIX = "0.0.0+sha."


def parse_plugin_manifest(data: bytes, *, source: str, host: str, refusals: Findings,
                          warnings: Findings,
                          fallback: dict[str, Any] | None = None) -> PluginManifest | None:
    """The manifest, or None when it is refused (the reasons are in `refusals`).

    `fallback` is a marketplace entry: its name and version stand in where the manifest has
    none (the host's documented precedence: plugin.json wins)."""
    document = read_json(data, source=source, max_bytes=MAX_JSON_BYTES,
                         max_depth=MAX_JSON_DEPTH, any_number=True)
    if not isinstance(document, dict):
        refusals.add(codes.HARNESS_MANIFEST_TYPE, f"{source}: expected an object, got "
                                                  f"{describe_value(document)}")
        return None
    return manifest_from_object(document, source=source, host=host, refusals=refusals,
                                warnings=warnings, fallback=fallback)


def manifest_from_object(document: dict[str, Any], *, source: str, host: str,
                         refusals: Findings, warnings: Findings,
                         fallback: dict[str, Any] | None = None) -> PluginManifest | None:
    before = len(refusals)
    checks = FieldChecks(source, refusals, warnings)
    fallback = fallback or {}
    for key in sorted(set(document) - KNOWN_FIELDS):
        warnings.add(codes.HARNESS_MANIFEST_UNKNOWN_FIELD,
                     f"{source}: {key}: field the host does not know (it is stripped)")
    name = checks.text(document, "name") if "name" in document else fallback.get("name")
    if name is None and "name" not in document:
        refusals.add(codes.HARNESS_MANIFEST_VALUE, f"{source}: name: required field is missing")
    elif isinstance(name, str):
        judge_name(name, source=source, host=host, refusals=refusals, warnings=warnings)
    version = checks.text(document, "version") if "version" in document else None
    version_from = "plugin.json"
    if version is None and "version" not in document:
        version = fallback.get("version") if isinstance(fallback.get("version"), str) else None
        version_from = "marketplace" if version is not None else "none"
    if version is not None and not VERSION.fullmatch(version):
        refusals.add(codes.HARNESS_MANIFEST_VALUE,
                     f"{source}: version {version!r}: cannot name the bundle's file: expected "
                     "letters, digits and . + _ - (at most 64), such as 1.2.0")
    checks.check_all(document)  # refuses a description that is not a string, once
    description = document.get("description")
    description = description if isinstance(description, str) else None
    component_paths: dict[str, tuple[str, ...]] = {}
    inline: dict[str, dict[str, Any]] = {}
    for key, suffix in (*PATH_FIELDS.items(), *CONFIG_FIELDS.items()):
        if key not in document:
            continue
        value = document[key]
        if isinstance(value, dict) and key in CONFIG_FIELDS:
            inline[key] = value
            continue
        listed = checks.path_list(value, key, suffix)
        if listed is not None:
            component_paths[key] = listed
    if len(refusals) > before or not isinstance(name, str):
        return None
    return PluginManifest(name=name, version=version, description=description, host=host,
                          version_from=version_from,
                          named_from="plugin.json" if "name" in document else "marketplace",
                          component_paths=component_paths, inline=inline)


def judge_name(name: str, *, source: str, host: str, refusals: Findings,
               warnings: Findings) -> None:
    """A plugin name as the host judges it (empty, a space, a control character: refused;
    reserved for Anthropic on a Claude Code manifest: refused; not kebab-case: a warning), and
    as a bundle file needs it (`name_problem`)."""
    if not name or " " in name or _CONTROL.search(name):
        refusals.add(codes.HARNESS_MANIFEST_VALUE,
                     f"{source}: name {name!r}: the host refuses an empty name or one holding "
                     "a space or a control or bidirectional-formatting character")
    elif problem := name_problem(name):
        refusals.add(codes.HARNESS_MANIFEST_VALUE, f"{source}: name {name!r}: {problem}")
    elif host == "claude-code" and (reserved := plugin_name_problem(name)) is not None:
        refusals.add(codes.HARNESS_NAME_RESERVED, f"{source}: name {name!r} {reserved}")
    elif not KEBAB.fullmatch(name):
        warnings.add(codes.HARNESS_NAME_STYLE,
                     f"{source}: name {name!r} is not kebab-case (the host accepts it)",
                     f"Rename it {kebab_case(name)!r}: lowercase letters, digits and hyphens; "
                     "--strict refuses the name as it is.")


def kebab_case(name: str) -> str:
    """A kebab-case spelling of `name` to suggest: words split at case changes, `_`, `.`,
    spaces; lowercased; joined by single hyphens."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", name)
    words = re.split(r"[^A-Za-z0-9]+", spaced)
    return "-".join(word.lower() for word in words if word) or "plugin"
