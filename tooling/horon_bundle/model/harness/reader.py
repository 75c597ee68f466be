"""Reading a harness plugin directory (or bundle) the way its host does: the manifest, then
skills, commands, agents, hooks and MCP servers in their default places and wherever the
manifest points. Pure: it sees files through `PluginFiles`, so a workspace, a staged copy and
a zip are read by the same code.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.harness import frontmatter as fm
from horon_bundle.model.harness.catalogue import Catalogue, Component
from horon_bundle.model.harness.hooks import Hook, events_map, hooks_from_file
from horon_bundle.model.harness.layout import (
    COMPONENT_DEFAULTS,
    HOOKS_DEFAULT,
    MANIFEST_DIRS,
    MANIFEST_FILE,
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    MCP_DEFAULT,
)
from horon_bundle.model.harness.manifest import PluginManifest, manifest_from_object
from horon_bundle.model.harness.mcp import McpServer, servers_from_file, servers_map

_MARKETPLACE_ONLY = {"source", "category", "tags", "strict"}


class FileInfo(Protocol):
    @property
    def size(self) -> int: ...

    @property
    def executable(self) -> bool | None: ...


class PluginFiles(Protocol):
    """Regular files of a plugin, by relative POSIX path from its root."""

    @property
    def files(self) -> Mapping[str, FileInfo]: ...

    def read_small(self, path: str, limit: int) -> bytes: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginContents:
    manifest: PluginManifest
    catalogue: Catalogue


def is_directory(files: Mapping[str, Any], path: str) -> bool:
    prefix = f"{path}/" if path else ""
    return any(name.startswith(prefix) for name in files)


def read_plugin(source: PluginFiles, *, refusals: Findings, warnings: Findings,
                entry: dict[str, Any] | None = None) -> PluginContents | None:
    """The plugin's manifest and catalogue; None when refused (reasons in `refusals`).

    `entry` is the plugin's marketplace entry, if it was listed in one: the host takes the
    metadata a plugin without a manifest lacks from it (plugin.json wins where both say)."""
    manifest = _manifest(source, refusals, warnings, entry)
    if manifest is None:
        return None
    before = len(refusals)
    skills = _skills(source, manifest, refusals, warnings)
    commands = _markdown_components(source, manifest, "commands", refusals, warnings)
    agents = _markdown_components(source, manifest, "agents", refusals, warnings)
    hooks = _hooks(source, manifest, refusals, warnings)
    servers = _servers(source, manifest, refusals, warnings)
    if len(refusals) > before:
        return None
    found = [p for p in _manifest_paths() if p in source.files]
    catalogue = Catalogue(
        name=manifest.name, version=manifest.version or "", description=manifest.description,
        manifests=tuple(found), hosts=tuple(MANIFEST_DIRS[p.split("/")[0]] for p in found),
        skills=tuple(skills), commands=tuple(commands), agents=tuple(agents),
        hooks=tuple(hooks), servers=tuple(servers))
    return PluginContents(manifest=manifest, catalogue=catalogue)


def _manifest_paths() -> list[str]:
    return [f"{directory}/{MANIFEST_FILE}" for directory in MANIFEST_DIRS]


def _json(source: PluginFiles, path: str, refusals: Findings) -> object | None:
    try:
        return read_json(source.read_small(path, MAX_JSON_BYTES), source=path,
                         max_bytes=MAX_JSON_BYTES, any_number=True)
    except Refused as exc:
        refusals.extend(exc.findings)
        return None


def _manifest(source: PluginFiles, refusals: Findings, warnings: Findings,
              entry: dict[str, Any] | None) -> PluginManifest | None:
    found = [p for p in _manifest_paths() if p in source.files]
    if not found:
        if entry is None:
            refusals.add(codes.HARNESS_MANIFEST_MISSING,
                         f"no {' or '.join(_manifest_paths())} in the plugin")
            return None
        document = {k: v for k, v in entry.items() if k not in _MARKETPLACE_ONLY}
        return manifest_from_object(document, source="marketplace entry "
                                    f"{entry.get('name')!r}", host="claude-code",
                                    refusals=refusals, warnings=warnings)
    manifests = []
    for path in found:
        raw = _json(source, path, refusals)
        if raw is None:
            continue
        if not isinstance(raw, dict):
            refusals.add(codes.HARNESS_MANIFEST_TYPE, f"{path}: expected an object")
            continue
        parsed = manifest_from_object(raw, source=path,
                                      host=MANIFEST_DIRS[path.split("/")[0]],
                                      refusals=refusals, warnings=warnings, fallback=entry)
        if parsed is not None:
            manifests.append(parsed)
    if len(manifests) != len(found):
        return None
    first = manifests[0]
    for other, path in zip(manifests[1:], found[1:], strict=True):
        if (other.name, other.version) != (first.name, first.version):
            refusals.add(codes.HARNESS_MANIFEST_VALUE,
                         f"{path}: names {other.name} {other.version}, {found[0]} names "
                         f"{first.name} {first.version}: one bundle, one name and version")
            return None
    return first


def _component_roots(source: PluginFiles, manifest: PluginManifest, kind: str,
                     refusals: Findings) -> list[str]:
    roots = []
    default = COMPONENT_DEFAULTS[kind]
    if is_directory(source.files, default):
        roots.append(default)
    for path in manifest.paths_of(kind):
        if path not in source.files and not is_directory(source.files, path):
            refusals.add(codes.HARNESS_PATH_MISSING,
                         f"plugin.json {kind}: ./{path} does not exist in the plugin")
        elif path not in roots:
            roots.append(path)
    return roots


def _read_frontmatter(source: PluginFiles, path: str, warnings: Findings) -> fm.Frontmatter:
    if source.files[path].size > MAX_TEXT_BYTES:
        parsed = fm.Frontmatter({}, fm.NONE, f"larger than {MAX_TEXT_BYTES} bytes")
    else:
        parsed = fm.parse_markdown(source.read_small(path, MAX_TEXT_BYTES))
    if parsed.problem is not None:
        how = "read line by line" if parsed.read_as == fm.LINE_WISE else "no frontmatter read"
        warnings.add(codes.HARNESS_FRONTMATTER, f"{path}: {parsed.problem} ({how})")
    return parsed


def _skills(source: PluginFiles, manifest: PluginManifest, refusals: Findings,
            warnings: Findings) -> list[Component]:
    found: dict[str, Component] = {}
    for root in _component_roots(source, manifest, "skills", refusals):
        direct = posixpath.join(root, "SKILL.md") if root else "SKILL.md"
        if direct in source.files:
            candidates = [direct]
        else:
            prefix = f"{root}/" if root else ""
            candidates = sorted(p for p in source.files if p.startswith(prefix)
                                and p.count("/") == prefix.count("/") + 1
                                and p.endswith("/SKILL.md"))
        for path in candidates:
            directory = posixpath.dirname(path)
            skill_id = posixpath.basename(directory) if directory else manifest.name
            parsed = _read_frontmatter(source, path, warnings)
            found.setdefault(path, Component(id=skill_id, path=path,
                                             frontmatter=parsed.values, read_as=parsed.read_as))
    return sorted(found.values(), key=lambda c: c.path)


def _markdown_components(source: PluginFiles, manifest: PluginManifest, kind: str,
                         refusals: Findings, warnings: Findings) -> list[Component]:
    found: dict[str, Component] = {}
    for root in _component_roots(source, manifest, kind, refusals):
        if root in source.files:
            candidates = [root] if root.endswith(".md") else []
        else:
            prefix = f"{root}/" if root else ""
            candidates = sorted(p for p in source.files
                                if p.startswith(prefix) and p.endswith(".md"))
        for path in candidates:
            parsed = _read_frontmatter(source, path, warnings)
            stem = posixpath.basename(path)[:-3]
            found.setdefault(path, Component(id=parsed.text("name") or stem, path=path,
                                             frontmatter=parsed.values, read_as=parsed.read_as))
    return sorted(found.values(), key=lambda c: c.path)


def _config_files(source: PluginFiles, manifest: PluginManifest, key: str,
                  default: str, refusals: Findings) -> list[str]:
    paths = [default] if default in source.files else []
    for path in manifest.paths_of(key):
        if path not in source.files:
            refusals.add(codes.HARNESS_PATH_MISSING,
                         f"plugin.json {key}: ./{path} is not a file in the plugin")
        elif path not in paths:
            paths.append(path)
    return paths


def _hooks(source: PluginFiles, manifest: PluginManifest, refusals: Findings,
           warnings: Findings) -> list[Hook]:
    hooks: list[Hook] = []
    for path in _config_files(source, manifest, "hooks", HOOKS_DEFAULT, refusals):
        document = _json(source, path, refusals)
        if document is not None:
            hooks += hooks_from_file(document, source=path, refusals=refusals,
                                     warnings=warnings)
    if "hooks" in manifest.inline:
        hooks += events_map(manifest.inline["hooks"], source="plugin.json", where="hooks",
                            refusals=refusals, warnings=warnings)
    return hooks


def _servers(source: PluginFiles, manifest: PluginManifest, refusals: Findings,
             warnings: Findings) -> list[McpServer]:
    servers: list[McpServer] = []
    for path in _config_files(source, manifest, "mcpServers", MCP_DEFAULT, refusals):
        document = _json(source, path, refusals)
        if document is not None:
            servers += servers_from_file(document, source=path, refusals=refusals,
                                         warnings=warnings)
    if "mcpServers" in manifest.inline:
        servers += servers_map(manifest.inline["mcpServers"], source="plugin.json",
                               refusals=refusals, warnings=warnings)
    return sorted(servers, key=lambda s: (s.name, s.source))
