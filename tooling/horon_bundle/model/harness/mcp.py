"""MCP servers a plugin brings: `.mcp.json`, files plugin.json names, or its inline
`mcpServers`. `{"mcpServers": {name: server}}`, or the bare `{name: server}` map the host also
reads. Judged as Claude Code 2.1.332 (the pinned host) judges a server before it drops it: a
transport it knows (stdio, http, streamable-http, sse, ws; a `url` without a `type` is a stdio
server lacking its command), the command of a local server, the absolute URL of a remote one,
and the type of each field it types. Fields it does not know are ignored, as it ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import describe_value
from horon_bundle.model.harness.host_values import url_problem

_REMOTE = ("http", "streamable-http", "sse", "ws")
_STRING_FIELDS = ("command", "url", "type", "headersHelper")
_MAP_FIELDS = ("env", "headers")


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
        document = document["mcpServers"]  # other top-level fields: ignored, as by the host
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
        bad = _wrong_fields(spec, where, refusals)
        kind = spec.get("type", "stdio")
        if isinstance(kind, str) and kind not in ("stdio", *_REMOTE):
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{where}.type: unknown server type {kind!r} (stdio, "
                         f"{', '.join(_REMOTE)}): the host drops the server")
            bad = True
        elif kind in _REMOTE and isinstance(spec.get("url"), str):
            problem = url_problem(spec["url"])
            if problem is not None:
                refusals.add(codes.HARNESS_JSON_SCHEMA, f"{where}.url: {problem}")
                bad = True
        elif kind in _REMOTE or "command" not in spec:
            missing = "a url" if kind in _REMOTE else "a command (a server with a url needs " \
                                                       "a type: http, sse or ws)"
            refusals.add(codes.HARNESS_JSON_SCHEMA, f"{where}: needs {missing}")
            bad = True
        if not bad:
            found.append(McpServer(name=name, source=source, fields=dict(spec)))
    return found


def _wrong_fields(spec: dict[str, Any], where: str, refusals: Findings) -> bool:
    """Whether a field the host types has another type (each one refused)."""
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
        elif key == "timeout" and (isinstance(value, bool)
                                   or not isinstance(value, (int, float))):
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{where}.timeout: expected a number, got {describe_value(value)}")
            bad = True
    return bad
