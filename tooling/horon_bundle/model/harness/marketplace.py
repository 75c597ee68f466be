"""`.claude-plugin/marketplace.json`: a repository listing plugins by `source`, and the index
a marketplace build writes (format horon.marketplace-index.v1), pinning each plugin's version
to its zip's digest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import describe_value
from horon_bundle.core.identifiers import SHA256_HEX
from horon_bundle.core.strictjson import canonical_bytes, read_json
from horon_bundle.model.harness.host_names import plugin_name_problem
from horon_bundle.model.harness.layout import MAX_JSON_BYTES, component_path
from horon_bundle.model.harness.names import VERSION, name_problem

INDEX_FORMAT = "horon.marketplace-index.v1"
REMOTE_SOURCES = ("github", "url", "git", "git-subdir", "npm", "pip", "archive")


@dataclass(frozen=True, slots=True, kw_only=True)
class ListedPlugin:
    name: str
    entry: dict[str, Any]
    local: str | None  # the plugin's directory in the repository ('' = its root)
    remote: str | None  # why it cannot be built offline (its source kind)


@dataclass(frozen=True, slots=True, kw_only=True)
class Marketplace:
    name: str
    plugins: tuple[ListedPlugin, ...]


def parse_marketplace(data: bytes, *, source: str) -> Marketplace:
    document = read_json(data, source=source, max_bytes=MAX_JSON_BYTES, any_number=True)
    findings = Findings()
    if not isinstance(document, dict):
        raise Refused.one(codes.MARKETPLACE_INVALID, f"{source}: expected an object")
    name = document.get("name")
    if not isinstance(name, str) or name_problem(name):
        findings.add(codes.MARKETPLACE_INVALID,
                     f"{source}: name: {describe_value(name)} is not a marketplace name")
    plugins = document.get("plugins")
    if not isinstance(plugins, list):
        findings.add(codes.MARKETPLACE_INVALID, f"{source}: plugins: expected an array")
        plugins = []
    root = _plugin_root(document.get("metadata"))
    listed: list[ListedPlugin] = []
    seen: set[str] = set()
    for index, entry in enumerate(plugins):
        where = f"{source}: plugins[{index}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            findings.add(codes.MARKETPLACE_INVALID, f"{where}: expected an object with a name")
            continue
        plugin_name = entry["name"]
        if problem := name_problem(plugin_name):
            findings.add(codes.MARKETPLACE_INVALID, f"{where}: name {plugin_name!r}: {problem}")
            continue
        if (reserved := plugin_name_problem(plugin_name)) is not None:
            findings.add(codes.HARNESS_NAME_RESERVED, f"{where}: name {plugin_name!r} {reserved}")
            continue
        if plugin_name in seen:
            findings.add(codes.MARKETPLACE_INVALID, f"{where}: {plugin_name!r} listed twice")
            continue
        seen.add(plugin_name)
        item = _listed(plugin_name, entry, root, where, findings)
        if item is not None:
            listed.append(item)
    findings.raise_if_any()
    assert isinstance(name, str)
    return Marketplace(name=name, plugins=tuple(listed))


def _plugin_root(metadata: object) -> str:
    """metadata.pluginRoot: the directory bare plugin sources are relative to."""
    root = metadata.get("pluginRoot") if isinstance(metadata, dict) else None
    if isinstance(root, str):
        path, _problem = component_path(root if root.startswith("./") else "./" + root)
        return path or ""
    return ""


def _listed(name: str, entry: dict[str, Any], root: str, where: str,
            findings: Findings) -> ListedPlugin | None:
    source = entry.get("source")
    if isinstance(source, dict):
        kind = source.get("source")
        return ListedPlugin(name=name, entry=entry, local=None,
                            remote=str(kind) if kind is not None else "unknown")
    if not isinstance(source, str):
        findings.add(codes.MARKETPLACE_INVALID,
                     f"{where}.source: expected a ./path or a source object, got "
                     f"{describe_value(source)}")
        return None
    if not source.startswith("./") and root:
        source = f"./{root}/{source}"
    path, problem = component_path(source)
    if path is None:
        findings.add(codes.MARKETPLACE_INVALID, f"{where}.source: {source!r} {problem}")
        return None
    return ListedPlugin(name=name, entry=entry, local=path, remote=None)


def index_bytes(name: str, built: list[dict[str, Any]], skipped: list[dict[str, Any]]) -> bytes:
    """The marketplace index: each built plugin's name, version, zip and digest; the skipped."""
    document: dict[str, Any] = {
        "format": INDEX_FORMAT, "marketplace": name,
        "plugins": sorted(built, key=lambda p: str(p["name"])),
        "skipped": sorted(skipped, key=lambda p: str(p["name"])),
    }
    return canonical_bytes(document)


@dataclass(frozen=True, slots=True, kw_only=True)
class IndexedPlugin:
    name: str
    version: str
    zip: str
    sha256: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MarketplaceIndex:
    marketplace: str
    plugins: tuple[IndexedPlugin, ...]
    skipped: tuple[str, ...]


def parse_index(data: bytes, *, source: str) -> MarketplaceIndex:
    """A marketplace index read back strictly (publish checks it against the release): the
    fields `index_bytes` writes and no other; digests, names and zip names well formed."""
    document = read_json(data, source=source, max_bytes=MAX_JSON_BYTES, max_depth=4)

    def bad(problem: str) -> Refused:
        return Refused.one(codes.MARKETPLACE_INVALID, f"{source}: {problem}")

    if not isinstance(document, dict) or document.get("format") != INDEX_FORMAT:
        raise bad(f"not a {INDEX_FORMAT} document")
    if set(document) != {"format", "marketplace", "plugins", "skipped"}:
        raise bad(f"fields {sorted(document)}")
    name, plugins, skipped = document["marketplace"], document["plugins"], document["skipped"]
    if not isinstance(name, str) or name_problem(name):
        raise bad(f"marketplace {describe_value(name)} is not a name")
    if not isinstance(plugins, list) or not isinstance(skipped, list):
        raise bad("plugins and skipped must be arrays")
    found = []
    for index, entry in enumerate(plugins):
        if not (isinstance(entry, dict) and set(entry) == {"name", "version", "zip", "sha256"}
                and all(isinstance(v, str) for v in entry.values())):
            raise bad(f"plugins[{index}]: expected exactly name, version, zip, sha256 strings")
        if name_problem(entry["name"]) or not VERSION.fullmatch(entry["version"]) \
                or not SHA256_HEX.fullmatch(entry["sha256"]) \
                or entry["zip"] != f"{entry['name']}-{entry['version']}.zip":
            raise bad(f"plugins[{index}]: {entry['name']!r} {entry['version']!r} "
                      f"{entry['zip']!r} {entry['sha256']!r} is not a built plugin")
        found.append(IndexedPlugin(**entry))
    names = []
    for index, entry in enumerate(skipped):
        if not (isinstance(entry, dict) and set(entry) == {"name", "source"}
                and all(isinstance(v, str) for v in entry.values())):
            raise bad(f"skipped[{index}]: expected exactly name and source strings")
        names.append(entry["name"])
    if len({(p.name, p.version) for p in found}) != len(found):
        raise bad("a plugin version is listed twice")
    return MarketplaceIndex(marketplace=name, plugins=tuple(found), skipped=tuple(names))
