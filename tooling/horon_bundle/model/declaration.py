"""horon-release.toml: the release declaration, read strictly (unknown keys refused)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from horon_bundle.core import codes, identifiers, paths
from horon_bundle.core.errors import Findings, Refused
from horon_bundle.core.fields import FieldReader, describe_value, join
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.core.inputs import read_input
from horon_bundle.core.tomlread import key_line, read_toml
from horon_bundle.model import qa

DECLARATION_NAME = "horon-release.toml"
SCHEMA = 1
UNCONFIGURED = "unconfigured"
MAX_DECLARATION_BYTES = 1 << 20
# every key of the schema, by table: what an unknown key is compared to ("did you mean")
KEYS: dict[str, frozenset[str]] = {
    "": frozenset({"schema", "publish", "qa", "plugin"}),
    "publish": frozenset({"destination"}),
    "qa": frozenset({"providers"}),
    "plugin": frozenset({"id", "name", "package", "features", "qa-features", "targets",
                         "profile", "license-file", "sidecar"}),
    "plugin.sidecar": frozenset({"name", "source", "executable"}),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class SidecarDeclaration:
    name: str
    source: str
    executable: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginDeclaration:
    id: str
    name: str
    package: str
    features: tuple[str, ...]
    qa_features: tuple[str, ...]
    targets: tuple[str, ...]
    profile: str
    license_file: str
    sidecars: tuple[SidecarDeclaration, ...]

    def claim(self, channel: str) -> tuple[str, ...]:
        """The features asked of cargo: the release claim, plus qa-features for a qa build."""
        wanted = set(self.features)
        if channel == "qa":
            wanted |= set(self.qa_features)
        return tuple(sorted(wanted))


@dataclass(frozen=True, slots=True, kw_only=True)
class Declaration:
    path: Path
    digest: Digest
    qa_patterns: tuple[str, ...]
    plugins: tuple[PluginDeclaration, ...]

    @property
    def workspace(self) -> Path:
        return self.path.parent

    def plugin(self, plugin_id: str | None) -> PluginDeclaration:
        if plugin_id is None:
            if len(self.plugins) == 1:
                return self.plugins[0]
            ids = ", ".join(p.id for p in self.plugins)
            raise Refused.one(codes.DECLARATION_PLUGIN,
                              f"{DECLARATION_NAME} declares several plugins ({ids}); "
                              "choose one with --plugin")
        for plugin in self.plugins:
            if plugin.id == plugin_id:
                return plugin
        raise Refused.one(codes.DECLARATION_PLUGIN,
                          f"{DECLARATION_NAME} declares no plugin {plugin_id!r}")


def find_workspace(start: Path) -> Path:
    """The plugin workspace holding `start`: the nearest directory, from `start` up, with a
    horon-release.toml (the way cargo finds Cargo.toml)."""
    here = start.resolve()
    for directory in (here, *here.parents):
        if (directory / DECLARATION_NAME).is_file():
            return directory
    raise Refused.one(codes.DECLARATION_MISSING,
                      f"no {DECLARATION_NAME} in {here} or any directory above it",
                      file=str(here))


def load_declaration(workspace: Path) -> Declaration:
    path = workspace / DECLARATION_NAME
    data = read_input(path, limit=MAX_DECLARATION_BYTES, what="declaration", missing_ok=True)
    if data is None:
        raise Refused.one(codes.DECLARATION_MISSING, f"{path}: not found",
                          "Pass the directory that holds horon-release.toml (or run the "
                          "command inside it), or start a workspace with `horon-bundle new "
                          "NAME`.")
    return parse_declaration(data, path)


def parse_declaration(data: bytes, path: Path) -> Declaration:
    source = DECLARATION_NAME
    document = read_toml(data, source=source, code=codes.DECLARATION_SYNTAX,
                         max_bytes=MAX_DECLARATION_BYTES, file=str(path))
    text = data.decode("utf-8")
    findings = Findings()
    reader = FieldReader(source, findings, codes.DECLARATION_UNKNOWN_KEY,
                         codes.DECLARATION_MISSING_KEY, codes.DECLARATION_TYPE, "key",
                         known={table: set(keys) for table, keys in KEYS.items()},
                         file=str(path), locate=lambda where: key_line(text, where))
    schema = reader.take(document, "schema", int, "")
    if schema is not None and schema != SCHEMA:
        reader.report(codes.DECLARATION_VALUE, "schema", f"{schema}, this toolchain reads {SCHEMA}")
    publish = reader.take_optional(document, "publish", dict, "", {})
    if publish is not None:
        destination = reader.take(publish, "destination", str, "publish")
        reader.finish(publish, "publish")
        if destination is not None and destination != UNCONFIGURED:
            reader.report(codes.DECLARATION_DESTINATION, "publish.destination",
                          f"{describe_value(destination)}: a committed declaration must say "
                          f"{UNCONFIGURED!r}")
    qa_table = reader.take_optional(document, "qa", dict, "", {})
    extra_patterns: list[str] = []
    if qa_table is not None:
        extra_patterns = reader.strings(
            reader.take_optional(qa_table, "providers", list, "qa", []), "qa.providers") or []
        reader.finish(qa_table, "qa")
        for index, pattern in enumerate(extra_patterns):
            if not qa.is_pattern(pattern):
                reader.report(codes.DECLARATION_VALUE, f"qa.providers[{index}]",
                              f"{describe_value(pattern)} is not a printable ASCII glob")
    raw_plugins = reader.take(document, "plugin", list, "")
    reader.finish(document, "")
    plugins: list[PluginDeclaration] = []
    if raw_plugins is not None:
        if not raw_plugins:
            reader.report(codes.DECLARATION_MISSING_KEY, "plugin", "no [[plugin]] declared")
        for index, raw in enumerate(raw_plugins):
            table = reader.typed(raw, dict, join("plugin", index))
            if table is not None:
                plugin = _plugin(reader, table, join("plugin", index))
                if plugin is not None:
                    plugins.append(plugin)
    seen: set[str] = set()
    for plugin in plugins:
        if plugin.id in seen:
            reader.report(codes.DECLARATION_VALUE, "plugin", f"id {plugin.id!r} declared twice")
        seen.add(plugin.id)
    findings.raise_if_any()
    return Declaration(path=path, digest=hash_bytes(data),
                       qa_patterns=qa.effective_patterns(extra_patterns), plugins=tuple(plugins))


def _plugin(reader: FieldReader, table: dict[str, Any], where: str) -> PluginDeclaration | None:
    before = len(reader.findings)
    plugin_id = reader.take(table, "id", str, where)
    name = reader.take(table, "name", str, where)
    package = reader.take(table, "package", str, where)
    features = reader.strings(reader.take(table, "features", list, where), join(where, "features"))
    qa_features = reader.strings(reader.take_optional(table, "qa-features", list, where, []),
                                 join(where, "qa-features"))
    targets = reader.strings(reader.take(table, "targets", list, where), join(where, "targets"))
    profile = reader.take(table, "profile", str, where)
    license_file = reader.take(table, "license-file", str, where)
    raw_sidecars = reader.take_optional(table, "sidecar", list, where, [])
    reader.finish(table, where)

    def bad(field: str, message: str) -> None:
        reader.report(codes.DECLARATION_VALUE, join(where, field), message)

    if plugin_id is not None and not identifiers.PLUGIN_ID.fullmatch(plugin_id):
        bad("id", f"{describe_value(plugin_id)} does not match [a-z][a-z0-9-]{{1,62}}")
    if name is not None and (problem := identifiers.display_name_problem(name)):
        bad("name", f"{describe_value(name)}: {problem}")
    if package is not None and not identifiers.CRATE_NAME.fullmatch(package):
        bad("package", f"{describe_value(package)} is not a cargo package name")
    for field, values in (("features", features), ("qa-features", qa_features)):
        for feature in values or []:
            if not identifiers.FEATURE.fullmatch(feature):
                bad(field, f"{feature!r} is not a feature token")
        if values is not None and len(set(values)) != len(values):
            bad(field, "a feature is listed twice")
    if targets is not None:
        if not targets:
            bad("targets", "no target declared")
        for target in targets:
            if problem := identifiers.target_problem(target):
                bad("targets", problem)
        if len(set(targets)) != len(targets):
            bad("targets", "a target is listed twice")
    if profile is not None and not identifiers.PROFILE.fullmatch(profile):
        bad("profile", f"{describe_value(profile)} is not a cargo profile name")
    if license_file is not None and (problem := paths.path_problem(license_file)):
        bad("license-file", f"{describe_value(license_file)}: {problem}")
    sidecars = _sidecars(reader, raw_sidecars, join(where, "sidecar"))
    if len(reader.findings) != before:
        return None
    assert plugin_id is not None and name is not None and package is not None
    assert profile is not None and license_file is not None
    assert features is not None and qa_features is not None and targets is not None
    assert sidecars is not None
    return PluginDeclaration(
        id=plugin_id, name=name, package=package, features=tuple(sorted(features)),
        qa_features=tuple(sorted(qa_features)), targets=tuple(targets), profile=profile,
        license_file=license_file, sidecars=tuple(sidecars))


def _sidecars(reader: FieldReader, raw: list[Any] | None,
              where: str) -> list[SidecarDeclaration] | None:
    if raw is None:
        return None
    result: list[SidecarDeclaration] = []
    for index, item in enumerate(raw):
        place = join(where, index)
        table = reader.typed(item, dict, place)
        if table is None:
            continue
        name = reader.take(table, "name", str, place)
        source = reader.take(table, "source", str, place)
        executable = reader.take_optional(table, "executable", bool, place, False)
        reader.finish(table, place)
        if name is not None and not identifiers.PLUGIN_ID.fullmatch(name):
            reader.report(codes.DECLARATION_VALUE, join(place, "name"),
                          f"{describe_value(name)} is not a sidecar name")
            name = None
        if source is not None and (problem := paths.path_problem(source)):
            reader.report(codes.DECLARATION_VALUE, join(place, "source"),
                          f"{describe_value(source)}: {problem}")
            source = None
        if name and source and executable is not None:
            result.append(SidecarDeclaration(name=name, source=source, executable=executable))
    names = [s.name for s in result]
    if len(set(names)) != len(names):
        reader.report(codes.DECLARATION_VALUE, where, "a sidecar name is used twice")
    return result
