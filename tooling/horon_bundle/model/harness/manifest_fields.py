"""The plugin.json fields of Claude Code 2.1.332 (the pinned host) and the checks its own
validator makes of each, asked field by field of `claude plugin validate` (the differential
table of tests/verify/test_host_differential.py keeps the two in step).

A field the host types and refuses is refused here (`harness.manifest-type`, `-value`, or
`harness.path-unsafe` for a component path); a field it only warns about and then ignores
(`metadata`, `network`, `optionalDependencies`, `binaries`, what `experimental` holds) is
left to it: nothing runs differently for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import describe_value
from horon_bundle.model.harness.host_values import is_version_range, url_problem
from horon_bundle.model.harness.layout import MAX_COMPONENT_PATHS, component_path

# path fields: the file name ending each path must have ('' any; a directory for skills)
PATH_FIELDS = {"commands": "", "agents": ".md", "skills": "", "outputStyles": "",
               "themes": "", "workflows": ""}
# a path (or list of paths) ending .json, or the inline object itself
CONFIG_FIELDS = {"hooks": ".json", "mcpServers": ".json", "lspServers": ".json"}
TEXT_FIELDS = ("description", "displayName", "license", "$schema", "repository")
IGNORED_FIELDS = ("metadata", "network", "optionalDependencies", "binaries", "experimental",
                  "icon", "screenshots")
KNOWN_FIELDS = frozenset({
    "name", "version", "author", "homepage", "keywords", "defaultEnabled", "dependencies",
    "engines", "monitors", "channels", "userConfig", "settings", "types",
    *PATH_FIELDS, *CONFIG_FIELDS, *TEXT_FIELDS, *IGNORED_FIELDS})
_USER_CONFIG_FIELDS = {"type", "title", "description", "sensitive", "required", "default",
                       "multiple", "min", "max"}
_USER_CONFIG_TYPES = ("string", "number", "boolean", "directory", "file")
_OPTION_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(slots=True)
class FieldChecks:
    """One manifest's field checks: refusals and warnings named after its source."""

    source: str
    refusals: Findings
    warnings: Findings

    def wrong(self, where: str, expected: str, value: object) -> None:
        self.refusals.add(codes.HARNESS_MANIFEST_TYPE,
                          f"{self.source}: {where}: expected {expected}, got "
                          f"{describe_value(value)}")

    def value(self, where: str, problem: str) -> None:
        self.refusals.add(codes.HARNESS_MANIFEST_VALUE, f"{self.source}: {where}: {problem}")

    def text(self, document: dict[str, Any], key: str) -> str | None:
        value = document.get(key)
        if not isinstance(value, str):
            self.wrong(key, "a string", value)
            return None
        return value

    def check_all(self, document: dict[str, Any]) -> None:
        """Every typed field but name, version and the component paths."""
        for key in TEXT_FIELDS:
            if key in document:
                self.text(document, key)
        homepage = self.text(document, "homepage") if "homepage" in document else None
        if homepage is not None and (problem := url_problem(homepage)) is not None:
            self.value("homepage", f"{homepage!r} {problem}")
        if "keywords" in document:
            self.strings(document["keywords"], "keywords")
        if "defaultEnabled" in document and not isinstance(document["defaultEnabled"], bool):
            self.wrong("defaultEnabled", "a boolean", document["defaultEnabled"])
        if "dependencies" in document:
            self.dependencies(document["dependencies"])
        if "author" in document:
            self.author(document["author"])
        if "engines" in document:
            self.engines(document["engines"])
        if "channels" in document:
            self.channels(document["channels"])
        if "settings" in document and not isinstance(document["settings"], dict):
            self.wrong("settings", "an object", document["settings"])
        if "types" in document:
            self.types(document["types"])
        if "monitors" in document:
            self.monitors(document["monitors"])
        if "userConfig" in document:
            self.user_config(document["userConfig"])

    def strings(self, value: object, where: str) -> None:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.wrong(where, "an array of strings", value)

    def dependencies(self, value: object) -> None:
        if not isinstance(value, list) or not all(isinstance(v, (str, dict)) for v in value):
            self.wrong("dependencies", "an array of plugin names", value)

    def author(self, value: object) -> None:
        if not isinstance(value, dict):
            self.wrong("author", "an object {name, email, url}", value)
            return
        name = value.get("name")
        if not isinstance(name, str):
            self.wrong("author.name", "a string", name)
        elif not name.strip():
            self.value("author.name", "must not be empty")
        for key in ("email", "url"):
            if key in value and not isinstance(value[key], str):
                self.wrong(f"author.{key}", "a string", value[key])

    def engines(self, value: object) -> None:
        if not isinstance(value, dict) or "claude-code" not in value:
            return  # the host ignores other hosts' keys, and warns about another type
        wanted = value["claude-code"]
        if not isinstance(wanted, str) or not is_version_range(wanted):
            self.value("engines.claude-code", f"{describe_value(wanted)} is not a version "
                                              "range such as \">=2.1.0\"")

    def channels(self, value: object) -> None:
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.wrong("channels", "an array of objects", value)

    def types(self, value: object) -> None:
        if not isinstance(value, str):
            self.wrong("types", "a ./path to a .d.ts file", value)
        elif not value.endswith(".d.ts"):
            self.value("types", f"{value!r} does not name a TypeScript declaration file (.d.ts)")

    def monitors(self, value: object) -> None:
        if isinstance(value, str):
            if not value.endswith(".json"):
                self.value("monitors", f"{value!r} does not end with .json")
        elif not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            self.wrong("monitors", "a ./path to a .json file, or an array of monitors", value)

    def user_config(self, value: object) -> None:
        if not isinstance(value, dict):
            self.wrong("userConfig", "an object of options", value)
            return
        for option, spec in value.items():
            where = f"userConfig.{option}"
            if not _OPTION_KEY.fullmatch(option):
                self.value(where, "an option key is letters, digits and _, not starting "
                                  "with a digit")
            if not isinstance(spec, dict):
                self.wrong(where, "an object", spec)
                continue
            for key in sorted(set(spec) - _USER_CONFIG_FIELDS):
                self.value(f"{where}.{key}", "unknown key in a strict object (the host "
                                             "refuses the manifest)")
            kind = spec.get("type")
            if kind not in _USER_CONFIG_TYPES:
                self.value(f"{where}.type", f"{describe_value(kind)} is not one of "
                                            f"{', '.join(_USER_CONFIG_TYPES)}")
            for key in ("title", "description"):
                if not isinstance(spec.get(key), str):
                    self.wrong(f"{where}.{key}", "a string (required)", spec.get(key))
            for key in ("sensitive", "required", "multiple"):
                if key in spec and not isinstance(spec[key], bool):
                    self.wrong(f"{where}.{key}", "a boolean", spec[key])

    def path_list(self, value: object, key: str, suffix: str) -> tuple[str, ...] | None:
        """A component field's paths (./-relative, inside the root, ending `suffix`)."""
        if key == "commands" and isinstance(value, dict):
            return self.command_map(value)
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
            elif suffix and not item.endswith(suffix):
                self.value(where, f"{item!r} does not end with {suffix} (the host reads a "
                                  f"{suffix} file here)")
            else:
                resolved.append(path)
        return tuple(resolved)

    def command_map(self, value: dict[str, Any]) -> tuple[str, ...] | None:
        """`commands` as an object: each command a `source` file or inline `content`."""
        sources = []
        for name, spec in value.items():
            has = [key for key in ("source", "content") if isinstance(spec, dict) and key in spec]
            if len(has) != 1:
                self.value(f"commands.{name}", "a command has either source (a ./path) or "
                                               "content (inline Markdown), not both")
            elif has == ["source"]:
                listed = self.path_list(spec["source"], f"commands.{name}.source", "")
                sources += list(listed or ())
        return tuple(sources)
