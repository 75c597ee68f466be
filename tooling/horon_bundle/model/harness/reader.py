"""Reading a harness plugin directory (or bundle) the way its host does: the manifest, then
skills, commands, agents, hooks and MCP servers in their default places and wherever the
manifest points. Pure: it sees files through `PluginFiles`, so a workspace, a staged copy and
a zip are read by the same code.

A plugin needs no manifest and no version, as for the host: without plugin.json its metadata
comes from its marketplace entry, else its name from its directory (`name`); without a version
anywhere, its version is made from its content (`content_version`, docs/harness.md).

Work is budgeted by input size (docs/threat-model.md, "Work budgets"): the file list is indexed
once (`FileIndex`), each manifest path is a lookup, each component file is read and its
frontmatter parsed once per read of the plugin, under the frontmatter reader's budgets.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.strictjson import read_json
from horon_bundle.model.harness import frontmatter as fm
from horon_bundle.model.harness.catalogue import Catalogue, Component
from horon_bundle.model.harness.file_index import FileIndex
from horon_bundle.model.harness.frontmatter_fields import judge_fields
from horon_bundle.model.harness.hooks import Hook, count_hooks, events_map, hooks_from_file
from horon_bundle.model.harness.host_values import misplaced_guards
from horon_bundle.model.harness.layout import (
    COMPONENT_DEFAULTS,
    HOOKS_DEFAULT,
    MANIFEST_DIRS,
    MANIFEST_FILE,
    MAX_COMMAND_TEXT,
    MAX_HOOKS,
    MAX_JSON_BYTES,
    MAX_JSON_DEPTH,
    MAX_RUN_JSON_BYTES,
    MAX_SERVERS,
    MAX_TEXT_BYTES,
    MCP_DEFAULT,
)
from horon_bundle.model.harness.manifest import (
    PluginManifest,
    judge_name,
    manifest_from_object,
)
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


@dataclass(slots=True)
class _Plugin:
    """One read of a plugin: its files (taken once: a view may build the mapping per access),
    their index, and each component file's frontmatter, read once however often it is named."""

    source: PluginFiles
    files: Mapping[str, FileInfo]
    index: FileIndex
    warnings: Findings
    frontmatter: fm.FrontmatterReader
    read: dict[str, fm.Frontmatter]
    json_bytes: int = 0  # JSON parsed so far, within MAX_RUN_JSON_BYTES
    judged: set[tuple[str, str]] = field(default_factory=set)  # (path, kind) warned about

    def read_small(self, path: str, limit: int) -> bytes:
        return self.source.read_small(path, limit)


def read_plugin(source: PluginFiles, *, refusals: Findings, warnings: Findings,
                entry: dict[str, Any] | None = None, name: str | None = None,
                content_version: Callable[[], str] | None = None) -> PluginContents | None:
    """The plugin's manifest and catalogue; None when refused (reasons in `refusals`).

    `entry` is the plugin's marketplace entry, if it was listed in one: the host takes the
    metadata a plugin without a manifest lacks from it (plugin.json wins where both say).
    `name` names a plugin with neither (its directory's name); `content_version` makes the
    version of a plugin none of them versions (called only then)."""
    files = source.files
    plugin = _Plugin(source=source, files=files, index=FileIndex(files), warnings=warnings,
                     frontmatter=fm.FrontmatterReader(), read={})
    manifest = _manifest(plugin, refusals, warnings, entry, name)
    if manifest is None:
        return None
    if manifest.version is None and content_version is not None:
        manifest = replace(manifest, version=content_version(), version_from="content")
    before = len(refusals)
    skills = _skills(plugin, manifest, refusals)
    commands = _markdown_components(plugin, manifest, "commands", refusals)
    agents = _markdown_components(plugin, manifest, "agents", refusals)
    hooks = _hooks(plugin, manifest, refusals, warnings)
    servers = _servers(plugin, manifest, refusals, warnings)
    _command_text(hooks, servers, refusals)
    if len(refusals) > before:
        return None
    found = [p for p in _manifest_paths() if p in files]
    catalogue = Catalogue(
        name=manifest.name, version=manifest.version or "", description=manifest.description,
        manifests=tuple(found), hosts=tuple(MANIFEST_DIRS[p.split("/")[0]] for p in found),
        skills=tuple(skills), commands=tuple(commands), agents=tuple(agents),
        hooks=tuple(hooks), servers=tuple(servers))
    return PluginContents(manifest=manifest, catalogue=catalogue)


def _manifest_paths() -> list[str]:
    return [f"{directory}/{MANIFEST_FILE}" for directory in MANIFEST_DIRS]


def _json(source: _Plugin, path: str, refusals: Findings) -> object | None:
    size = source.files[path].size
    if source.json_bytes + size > MAX_RUN_JSON_BYTES:
        if source.json_bytes <= MAX_RUN_JSON_BYTES:  # said once; no JSON file is read after
            refusals.add(codes.HARNESS_LIMIT,
                         f"{path}: {size} bytes would take the plugin's JSON files over "
                         f"{MAX_RUN_JSON_BYTES} bytes together; it and the rest are not read")
        source.json_bytes = MAX_RUN_JSON_BYTES + 1
        return None
    source.json_bytes += size
    try:
        return read_json(source.read_small(path, MAX_JSON_BYTES), source=path,
                         max_bytes=MAX_JSON_BYTES, max_depth=MAX_JSON_DEPTH, any_number=True)
    except Refused as exc:
        refusals.extend(exc.findings)
        return None


def _manifest(source: _Plugin, refusals: Findings, warnings: Findings,
              entry: dict[str, Any] | None, name: str | None) -> PluginManifest | None:
    found = [p for p in _manifest_paths() if p in source.files]
    if not found:
        if entry is not None:
            document = {k: v for k, v in entry.items() if k not in _MARKETPLACE_ONLY}
            _misplaced(document, f"marketplace entry {entry.get('name')!r}", refusals)
            return manifest_from_object(document, source="marketplace entry "
                                        f"{entry.get('name')!r}", host="claude-code",
                                        refusals=refusals, warnings=warnings)
        if name is None:
            refusals.add(codes.HARNESS_MANIFEST_MISSING,
                         f"no {' or '.join(_manifest_paths())} in the plugin, and no name for "
                         "it")
            return None
        before = len(refusals)  # named as the host names it: after its directory
        judge_name(name, source="the plugin's directory name", host="claude-code",
                   refusals=refusals, warnings=warnings)
        return None if len(refusals) > before else PluginManifest(
            name=name, version=None, description=None, host="claude-code",
            version_from="none", named_from="directory")
    manifests = []
    for path in found:
        raw = _json(source, path, refusals)
        if raw is None:
            continue
        if not isinstance(raw, dict):
            refusals.add(codes.HARNESS_MANIFEST_TYPE, f"{path}: expected an object")
            continue
        _misplaced(raw, path, refusals)
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


def _misplaced(document: object, where: str, refusals: Findings, *,
               events: bool = False) -> None:
    for path in misplaced_guards(document, events=events):
        refusals.add(codes.HARNESS_HOOK_MISPLACED,
                     f"{where}: {path}: PreToolUse/PermissionRequest hooks declared outside "
                     "the event map: Claude Code refuses the plugin (a guard that is not "
                     "loaded guards nothing)")


def _component_roots(source: _Plugin, manifest: PluginManifest, kind: str,
                     refusals: Findings) -> list[str]:
    """The directories and files a kind is read from, each once (a set: a list naming one path
    400,000 times is 400,000 lookups, not 400,000 scans)."""
    roots: dict[str, None] = {}
    default = COMPONENT_DEFAULTS[kind]
    if source.index.is_directory(default):
        roots[default] = None
    missing: set[str] = set()
    for path in manifest.paths_of(kind):
        if path in roots or path in missing:
            continue
        if not source.index.exists(path):
            missing.add(path)
            refusals.add(codes.HARNESS_PATH_MISSING,
                         f"plugin.json {kind}: ./{path} does not exist in the plugin")
        else:
            roots[path] = None
    return list(roots)


def _read_frontmatter(source: _Plugin, path: str) -> fm.Frontmatter:
    """`path`'s frontmatter, read once per read of the plugin (a file two roots or two kinds
    name is parsed, and warned about, once)."""
    parsed = source.read.get(path)
    if parsed is not None:
        return parsed
    if source.files[path].size > MAX_TEXT_BYTES:
        parsed = fm.Frontmatter({}, fm.NONE, f"larger than {MAX_TEXT_BYTES} bytes")
    else:
        parsed = source.frontmatter.parse_markdown(source.read_small(path, MAX_TEXT_BYTES))
    if parsed.read_as == fm.DROPPED:
        source.warnings.add(codes.HARNESS_FRONTMATTER_INVALID,
                            f"{path}: frontmatter {parsed.problem}: Claude Code loads it with "
                            "every field dropped (an agent named after its file), and its "
                            "validator rejects it")
    elif parsed.problem is not None:
        source.warnings.add(codes.HARNESS_FRONTMATTER,
                            f"{path}: {parsed.problem} (no frontmatter read)")
    source.read[path] = parsed
    return parsed


def _component(source: _Plugin, path: str, kind: str, default_id: str | None) -> Component:
    """A skill, command or agent: its frontmatter as the host loads it for that kind."""
    parsed = _read_frontmatter(source, path)
    judged = judge_fields(parsed.values, kind)
    if (path, kind) not in source.judged:
        source.judged.add((path, kind))
        for problem in judged.rejected:
            source.warnings.add(codes.HARNESS_FRONTMATTER_INVALID,
                                f"{path}: {problem}: Claude Code's validator rejects it and "
                                "the field is not loaded")
        for problem in judged.ignored:
            source.warnings.add(codes.HARNESS_FRONTMATTER, f"{path}: {problem}")
    name = judged.values.get("name")
    named = name if isinstance(name, str) and name.strip() else None
    stem = posixpath.basename(path)[:-3]
    return Component(id=default_id or named or stem, path=path, frontmatter=judged.values,
                     read_as=parsed.read_as)


def _skills(source: _Plugin, manifest: PluginManifest, refusals: Findings) -> list[Component]:
    found: dict[str, Component] = {}
    for root in _component_roots(source, manifest, "skills", refusals):
        if root in source.index:
            refusals.add(codes.HARNESS_MANIFEST_VALUE,
                         f"plugin.json skills: ./{root} is a file; a skills entry is a "
                         "directory holding SKILL.md (or skill directories)")
            continue
        direct = posixpath.join(root, "SKILL.md") if root else "SKILL.md"
        if direct in source.index:
            candidates = [direct]
        else:
            depth = root.count("/") + 2 if root else 1  # the slashes of <root>/<id>/SKILL.md
            candidates = [p for p in source.index.under(root)
                          if p.count("/") == depth and p.endswith("/SKILL.md")]
        for path in candidates:
            if path in found:
                continue
            directory = posixpath.dirname(path)
            skill_id = posixpath.basename(directory) if directory else manifest.name
            found[path] = _component(source, path, "skills", skill_id)
    return sorted(found.values(), key=lambda c: c.path)


def _markdown_components(source: _Plugin, manifest: PluginManifest, kind: str,
                         refusals: Findings) -> list[Component]:
    found: dict[str, Component] = {}
    for root in _component_roots(source, manifest, kind, refusals):
        if root in source.index:
            candidates = [root] if root.endswith(".md") else []
        else:
            candidates = [p for p in source.index.under(root) if p.endswith(".md")]
        for path in candidates:
            if path not in found:
                found[path] = _component(source, path, kind, None)
    return sorted(found.values(), key=lambda c: c.path)


def _config_files(source: _Plugin, manifest: PluginManifest, key: str,
                  default: str, refusals: Findings) -> list[str]:
    paths: dict[str, None] = {default: None} if default in source.index else {}
    missing: set[str] = set()
    for path in manifest.paths_of(key):
        if path in paths or path in missing:
            continue
        if path not in source.index:
            missing.add(path)
            refusals.add(codes.HARNESS_PATH_MISSING,
                         f"plugin.json {key}: ./{path} is not a file in the plugin")
        else:
            paths[path] = None
    return list(paths)


def _hooks(source: _Plugin, manifest: PluginManifest, refusals: Findings,
           warnings: Findings) -> list[Hook]:
    hooks: list[Hook] = []
    declared = 0
    documents: list[tuple[str, object, bool]] = []  # (where from, document, inline)
    for path in _config_files(source, manifest, "hooks", HOOKS_DEFAULT, refusals):
        document = _json(source, path, refusals)
        if document is not None:
            _misplaced(document, path, refusals)
            documents.append((path, document, False))
    if "hooks" in manifest.inline:
        documents.append(("plugin.json", manifest.inline["hooks"], True))
    for where, document, inline in documents:
        declared += count_hooks(document if inline else _get(document, "hooks"))
        if declared > MAX_HOOKS:
            refusals.add(codes.HARNESS_LIMIT, f"{where}: the plugin declares more than "
                                              f"{MAX_HOOKS} events, matcher groups and hooks; "
                                              "not read")
            return []
        if inline:
            hooks += events_map(document, source=where, where="hooks",  # type: ignore[arg-type]
                                refusals=refusals, warnings=warnings)
        else:
            hooks += hooks_from_file(document, source=where, refusals=refusals,
                                     warnings=warnings)
    return hooks


def _servers(source: _Plugin, manifest: PluginManifest, refusals: Findings,
             warnings: Findings) -> list[McpServer]:
    servers: list[McpServer] = []
    declared = 0
    documents: list[tuple[str, object, bool]] = []
    for path in _config_files(source, manifest, "mcpServers", MCP_DEFAULT, refusals):
        document = _json(source, path, refusals)
        if document is not None:
            documents.append((path, document, False))
    if "mcpServers" in manifest.inline:
        documents.append(("plugin.json", manifest.inline["mcpServers"], True))
    for where, document, inline in documents:
        served = document if inline or not isinstance(document, dict) \
            or "mcpServers" not in document else document["mcpServers"]
        declared += len(served) if isinstance(served, dict) else 0
        if declared > MAX_SERVERS:
            refusals.add(codes.HARNESS_LIMIT, f"{where}: the plugin declares more than "
                                              f"{MAX_SERVERS} MCP servers; not read")
            return []
        if inline:
            servers += servers_map(document, source=where, refusals=refusals,
                                   warnings=warnings)
        else:
            servers += servers_from_file(document, source=where, refusals=refusals,
                                         warnings=warnings)
    return sorted(servers, key=lambda s: (s.name, s.source))


def _get(document: object, key: str) -> object:
    return document.get(key) if isinstance(document, dict) else None


def _command_text(hooks: list[Hook], servers: list[McpServer], refusals: Findings) -> None:
    """The hook and server strings lint lexes as shell, within their budget (before it)."""
    total = 0
    for hook in hooks:
        total += sum(len(value) for value in hook.strings())
    for server in servers:
        total += sum(len(value) for _key, value in server.strings())
    if total > MAX_COMMAND_TEXT:
        refusals.add(codes.HARNESS_LIMIT,
                     f"the hooks' and MCP servers' commands, arguments and headers hold "
                     f"{total} characters, at most {MAX_COMMAND_TEXT}; not read")
