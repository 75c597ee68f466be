"""plugin.json of `.claude-plugin/` and `.muse-plugin/`, read strictly against the host's
documented fields (docs/harness.md).

Refused, as the host refuses to load them: duplicate keys and other strict-JSON faults, a
documented field of the wrong type, a missing or unusable name, an unknown key inside the
objects the host documents as strict (userConfig options), a component path that is absolute,
lacks ./, or escapes the root. Warned, as `claude plugin validate` warns while the host still
loads the plugin: an undocumented top-level field (the host strips it), a name that is not
kebab-case, a missing version.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core import codes, paths
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import describe_value
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.harness.layout import (
    MAX_COMPONENT_PATHS,
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    component_path,
)

KEBAB = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}")
_PATH_FIELDS = ("commands", "agents", "skills", "outputStyles")
_CONFIG_FIELDS = ("hooks", "mcpServers", "lspServers")  # a path, a list of paths, or inline
_TEXT_FIELDS = ("description", "homepage", "license", "$schema")
_LIST_FIELDS = ("keywords",)
_OPAQUE_LIST_FIELDS = ("channels", "monitors", "dependencies")
_AUTHOR_FIELDS = {"name", "email", "url"}
_REPOSITORY_FIELDS = {"type", "url", "directory"}
_USER_CONFIG_FIELDS = {"type", "title", "description", "sensitive", "required", "default",
                       "multiple", "min", "max"}
_USER_CONFIG_TYPES = {"string", "number", "boolean", "directory", "file"}
KNOWN_FIELDS = frozenset({"name", "version", "author", "repository", "userConfig",
                          *_PATH_FIELDS, *_CONFIG_FIELDS, *_TEXT_FIELDS, *_LIST_FIELDS,
                          *_OPAQUE_LIST_FIELDS})


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginManifest:
    name: str
    version: str | None
    description: str | None
    host: str  # claude-code or muse-code: whose manifest directory it was read from
    version_from: str = "plugin.json"  # or "marketplace" (the entry gave it), "none"
    component_paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    inline: dict[str, dict[str, Any]] = field(default_factory=dict)  # hooks / mcpServers

    def paths_of(self, kind: str) -> tuple[str, ...]:
        return self.component_paths.get(kind, ())


def name_problem(name: str) -> str | None:
    """Why `name` cannot name a bundle file (None if it can)."""
    if not 1 <= len(name) <= 64:
        return "must be 1 to 64 characters"
    if paths.path_problem(name) or "/" in name or not name.isprintable() or " " in name:
        return "must be a single portable file name component"
    return None


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
    reader = _Reader(source, refusals, warnings)
    fallback = fallback or {}
    for key in sorted(set(document) - KNOWN_FIELDS):
        warnings.add(codes.HARNESS_MANIFEST_UNKNOWN_FIELD,
                     f"{source}: {key}: field the host does not document (it is stripped)")
    name = reader.text(document, "name") if "name" in document else fallback.get("name")
    if name is None and "name" not in document:
        refusals.add(codes.HARNESS_MANIFEST_VALUE, f"{source}: name: required field is missing")
    elif isinstance(name, str):
        if problem := name_problem(name):
            refusals.add(codes.HARNESS_MANIFEST_VALUE, f"{source}: name {name!r}: {problem}")
        elif not KEBAB.fullmatch(name):
            warnings.add(codes.HARNESS_MANIFEST_UNKNOWN_FIELD,
                         f"{source}: name {name!r} is not kebab-case")
    version = reader.text(document, "version") if "version" in document else None
    version_from = "plugin.json"
    if version is None and "version" not in document:
        version = fallback.get("version") if isinstance(fallback.get("version"), str) else None
        version_from = "marketplace" if version is not None else "none"
    if version is not None and not VERSION.fullmatch(version):
        refusals.add(codes.HARNESS_MANIFEST_VALUE,
                     f"{source}: version {version!r}: expected a version such as 1.2.0")
    description = reader.text(document, "description") if "description" in document else None
    for key in ("homepage", "license", "$schema"):
        if key in document:
            reader.text(document, key)
    if "keywords" in document:
        reader.strings(document["keywords"], "keywords")
    reader.author(document.get("author"))
    reader.repository(document.get("repository"))
    for key in _OPAQUE_LIST_FIELDS:
        if key in document and not isinstance(document[key], (list, str, dict)):
            reader.wrong(key, "an array", document[key])
    reader.user_config(document.get("userConfig"))
    component_paths: dict[str, tuple[str, ...]] = {}
    inline: dict[str, dict[str, Any]] = {}
    for key in (*_PATH_FIELDS, *_CONFIG_FIELDS):
        if key not in document:
            continue
        value = document[key]
        if isinstance(value, dict) and key in _CONFIG_FIELDS:
            inline[key] = value
            continue
        listed = reader.path_list(value, key)
        if listed is not None:
            component_paths[key] = listed
    if len(refusals) > before or not isinstance(name, str):
        return None
    return PluginManifest(name=name, version=version, description=description, host=host,
                          version_from=version_from, component_paths=component_paths,
                          inline=inline)


@dataclass(slots=True)
class _Reader:
    source: str
    refusals: Findings
    warnings: Findings

    def wrong(self, where: str, expected: str, value: object) -> None:
        self.refusals.add(codes.HARNESS_MANIFEST_TYPE,
                          f"{self.source}: {where}: expected {expected}, got "
                          f"{describe_value(value)}")

    def text(self, document: dict[str, Any], key: str) -> str | None:
        value = document.get(key)
        if not isinstance(value, str):
            self.wrong(key, "a string", value)
            return None
        return value

    def strings(self, value: object, where: str) -> list[str] | None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.wrong(where, "an array of strings", value)
            return None
        return list(value)

    def author(self, value: object) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self.wrong("author", "an object {name, email, url}", value)
            return
        for key, item in value.items():
            if key not in _AUTHOR_FIELDS:
                self.warnings.add(codes.HARNESS_MANIFEST_UNKNOWN_FIELD,
                                  f"{self.source}: author.{key}: field the host does not "
                                  "document")
            elif not isinstance(item, str):
                self.wrong(f"author.{key}", "a string", item)

    def repository(self, value: object) -> None:
        if value is None or isinstance(value, str):
            return
        if not isinstance(value, dict):
            self.wrong("repository", "a string", value)
            return
        for key, item in value.items():  # npm's {type, url, directory}, which real plugins use
            if key not in _REPOSITORY_FIELDS or not isinstance(item, str):
                self.wrong(f"repository.{key}", "one of type/url/directory, a string", item)

    def user_config(self, value: object) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self.wrong("userConfig", "an object of options", value)
            return
        for option, spec in value.items():
            where = f"userConfig.{option}"
            if not isinstance(spec, dict):
                self.wrong(where, "an object", spec)
                continue
            for key in sorted(set(spec) - _USER_CONFIG_FIELDS):
                self.refusals.add(codes.HARNESS_MANIFEST_VALUE,
                                  f"{self.source}: {where}.{key}: unknown key in a strict "
                                  "object (the host refuses the manifest)")
            kind = spec.get("type")
            if kind is not None and kind not in _USER_CONFIG_TYPES:
                self.refusals.add(codes.HARNESS_MANIFEST_VALUE,
                                  f"{self.source}: {where}.type: {describe_value(kind)} is not "
                                  f"one of {', '.join(sorted(_USER_CONFIG_TYPES))}")
            for key in ("title", "description"):
                if key in spec and not isinstance(spec[key], str):
                    self.wrong(f"{where}.{key}", "a string", spec[key])
            for key in ("sensitive", "required", "multiple"):
                if key in spec and not isinstance(spec[key], bool):
                    self.wrong(f"{where}.{key}", "a boolean", spec[key])

    def path_list(self, value: object, key: str) -> tuple[str, ...] | None:
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list) and len(items) > MAX_COMPONENT_PATHS:
            self.refusals.add(codes.HARNESS_LIMIT,
                              f"{self.source}: {key}: {len(items)} paths, at most "
                              f"{MAX_COMPONENT_PATHS} (real plugins name tens)")
            return None
        if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
            self.wrong(key, "a ./path or an array of ./paths", value)
            return None
        resolved: list[str] = []
        for index, item in enumerate(items):
            where = key if isinstance(value, str) else f"{key}[{index}]"
            path, problem = component_path(item)
            if path is None:
                self.refusals.add(codes.HARNESS_PATH_UNSAFE,
                                  f"{self.source}: {where}: {item!r} {problem}")
            else:
                resolved.append(path)
        return tuple(resolved)
