"""MCP servers a plugin brings: `.mcp.json`, files plugin.json names, or its inline
`mcpServers`. `{"mcpServers": {name: server}}`, or the bare `{name: server}` map the host also
reads. Known fields are type-checked; others are warnings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import describe_value

_TYPES = ("stdio", "http", "sse", "ws")
_STRING_FIELDS = ("command", "url", "cwd", "type", "headersHelper")
_MAP_FIELDS = ("env", "headers")
_KNOWN = {*_STRING_FIELDS, *_MAP_FIELDS, "args", "oauth", "timeout", "alwaysLoad"}


@dataclass(frozen=True, slots=True, kw_only=True)
class McpServer:
    name: str
    source: str
    fields: dict[str, Any]

    @property
    def transport(self) -> str:
        kind = self.fields.get("type")
        if isinstance(kind, str):
            return kind
        return "stdio" if "command" in self.fields else "http"

    def args(self) -> tuple[str, ...]:
        value = self.fields.get("args")
        return tuple(value) if isinstance(value, list) else ()

    def strings(self) -> list[tuple[str, str]]:
        """(field, value) of every string the host substitutes variables in."""
        found: list[tuple[str, str]] = []
        for key in ("command", "url", "cwd"):
            if isinstance(self.fields.get(key), str):
                found.append((key, self.fields[key]))
        found += [(f"args[{i}]", a) for i, a in enumerate(self.args())]
        for key in _MAP_FIELDS:
            value = self.fields.get(key)
            if isinstance(value, dict):
                found += [(f"{key}.{k}", v) for k, v in value.items() if isinstance(v, str)]
        return found

    def to_catalogue(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"name": self.name, "source": self.source,
                                 "type": self.transport}
        for key in ("command", "args", "url"):
            if key in self.fields:
                entry[key] = self.fields[key]
        return entry


def servers_from_file(document: object, *, source: str, refusals: Findings,
                      warnings: Findings) -> list[McpServer]:
    if isinstance(document, dict) and "mcpServers" in document:
        for key in sorted(set(document) - {"mcpServers"}):
            warnings.add(codes.HARNESS_HOOK_FIELD,
                         f"{source}: {key}: top-level field the host does not document")
        document = document["mcpServers"]
    return servers_map(document, source=source, refusals=refusals, warnings=warnings)


def servers_map(servers: object, *, source: str, refusals: Findings,
                warnings: Findings) -> list[McpServer]:
    if not isinstance(servers, dict):
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: expected an object of MCP servers, got "
                     f"{describe_value(servers)}")
        return []
    found = []
    for name, spec in servers.items():
        where = f"{source}: mcpServers.{name}"
        if not isinstance(spec, dict):
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{where}: expected a server object, got {describe_value(spec)}")
            continue
        bad = False
        for key, value in spec.items():
            if key in _STRING_FIELDS and not isinstance(value, str):
                refusals.add(codes.HARNESS_JSON_SCHEMA,
                             f"{where}.{key}: expected a string, got {describe_value(value)}")
                bad = True
            elif key in _MAP_FIELDS and not (isinstance(value, dict) and all(
                    isinstance(v, str) for v in value.values())):
                refusals.add(codes.HARNESS_JSON_SCHEMA,
                             f"{where}.{key}: expected an object of strings")
                bad = True
            elif key == "args" and not (isinstance(value, list)
                                        and all(isinstance(v, str) for v in value)):
                refusals.add(codes.HARNESS_JSON_SCHEMA, f"{where}.args: expected an array "
                                                        "of strings")
                bad = True
            elif key not in _KNOWN:
                warnings.add(codes.HARNESS_HOOK_FIELD,
                             f"{where}.{key}: server field this toolchain does not know")
        kind = spec.get("type")
        if isinstance(kind, str) and kind not in _TYPES:
            warnings.add(codes.HARNESS_HOOK_FIELD,
                         f"{where}.type: transport {kind!r} is not one this toolchain knows")
        if "command" not in spec and "url" not in spec:
            refusals.add(codes.HARNESS_JSON_SCHEMA, f"{where}: needs a command or a url")
            bad = True
        if not bad:
            found.append(McpServer(name=name, source=source, fields=dict(spec)))
    return found
