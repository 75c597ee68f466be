"""Hook configuration (`hooks/hooks.json`, other files plugin.json names, or plugin.json's
inline `hooks`), read the way the host reads it.

The file is `{"hooks": {<Event>: [{"matcher": …, "hooks": [<hook>, …]}]}, "description": …}`;
inline in plugin.json it is the event map itself. Each hook is validated against the hook
schema of Claude Code 2.1.332 (the pinned host: its `claude plugin validate`, asked field by
field): command, http, prompt, agent and mcp_tool hooks, each field the host types. A field
the host does not know is ignored, as the host ignores it (no warning: the host gives none).
A known field of the wrong type, a missing required field or an unknown hook type is refused:
the host refuses a PreToolUse or PermissionRequest hook so (and the plugin with it) and drops
any other, which then never runs — a guard that cannot run is what this refuses on purpose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.core.fields import describe_value
from horon_bundle.model.harness.host_values import url_problem

_STRING, _BOOL, _NUMBER, _STRINGS, _OBJECT, _STRING_MAP, _ANY = (
    "a string", "a boolean", "a positive number", "an array of strings", "an object",
    "an object of strings", "anything")
_COMMON = {"type": _STRING, "if": _STRING, "timeout": _NUMBER, "statusMessage": _STRING,
           "once": _BOOL}
# per type: its required fields and every field the host's schema types
SCHEMA: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "command": (("command",), {**_COMMON, "command": _STRING, "args": _STRINGS,
                               "shell": _STRING, "onFailure": _STRING, "async": _BOOL,
                               "asyncRewake": _BOOL, "holdsTools": _BOOL,
                               "rewakeMessage": _STRING, "rewakeSummary": _STRING}),
    "http": (("url",), {**_COMMON, "url": _STRING, "onFailure": _STRING,
                        "headers": _STRING_MAP, "allowedEnvVars": _STRINGS}),
    "prompt": (("prompt",), {**_COMMON, "prompt": _STRING, "model": _STRING,
                             "continueOnBlock": _BOOL}),
    "agent": (("prompt",), {**_COMMON, "prompt": _STRING, "model": _STRING}),
    # an mcp_tool hook's onFailure takes any value (another than continue reads as block)
    "mcp_tool": (("server", "tool"), {**_COMMON, "server": _STRING, "tool": _STRING,
                                      "input": _OBJECT, "onFailure": _ANY}),
}
_ENUMS = {"shell": ("bash", "powershell"), "onFailure": ("continue", "block")}


@dataclass(frozen=True, slots=True, kw_only=True)
class Hook:
    """One hook of one event: where it was declared and what it runs."""

    event: str
    matcher: str | None
    type: str
    source: str  # the file (or plugin.json) it was read from
    where: str  # e.g. hooks.PreToolUse[0].hooks[1]
    fields: dict[str, Any]

    def text(self, key: str) -> str | None:
        value = self.fields.get(key)
        return value if isinstance(value, str) else None

    def args(self) -> tuple[str, ...] | None:
        value = self.fields.get("args")
        return tuple(value) if isinstance(value, list) else None

    def strings(self) -> list[str]:
        """The strings the host substitutes variables in and lint reads: the command and its
        arguments, an HTTP hook's URL and header values."""
        found = [value for key in ("command", "url") if isinstance(value := self.fields.get(key),
                                                                    str)]
        found += [arg for arg in self.args() or () if isinstance(arg, str)]
        headers = self.fields.get("headers")
        if isinstance(headers, dict):
            found += [value for value in headers.values() if isinstance(value, str)]
        return found

    def to_catalogue(self) -> dict[str, Any]:
        entry: dict[str, Any] = {"event": self.event, "matcher": self.matcher,
                                 "type": self.type, "source": self.source}
        for key in ("command", "args", "url", "prompt", "server", "tool"):
            if key in self.fields:
                entry[key] = self.fields[key]
        return entry


def count_hooks(events: object) -> int:
    """How many declarations an event map holds — events, matcher groups and hooks — counted
    before any is read."""
    if not isinstance(events, dict):
        return 0
    total = len(events)
    for groups in events.values():
        for group in groups if isinstance(groups, list) else ():
            entries = group.get("hooks") if isinstance(group, dict) else None
            total += 1 + (len(entries) if isinstance(entries, list) else 0)
    return total


def hooks_from_file(document: object, *, source: str, refusals: Findings,
                    warnings: Findings) -> list[Hook]:
    """A hooks file: `{"hooks": {...}}` with an optional top-level `description` (any other
    top-level field is ignored, as the host ignores it)."""
    if not isinstance(document, dict) or not isinstance(document.get("hooks"), dict):
        got = describe_value(document) if not isinstance(document, dict) else "no hooks object"
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: expected {{\"hooks\": {{<event>: [...]}}}}, got {got}")
        return []
    if "description" in document and not isinstance(document["description"], str):
        refusals.add(codes.HARNESS_JSON_SCHEMA, f"{source}: description: expected a string")
    return events_map(document["hooks"], source=source, where="hooks", refusals=refusals,
                      warnings=warnings)


def events_map(events: dict[str, Any], *, source: str, where: str, refusals: Findings,
               warnings: Findings) -> list[Hook]:
    found: list[Hook] = []
    for event, groups in events.items():
        at = f"{where}.{event}"
        if not isinstance(groups, list):
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{source}: {at}: expected an array of matcher groups, got "
                         f"{describe_value(groups)}")
            continue
        for index, group in enumerate(groups):
            found.extend(_group(event, group, source, f"{at}[{index}]", refusals=refusals,
                                warnings=warnings))
    return found


def _group(event: str, group: object, source: str, where: str, *, refusals: Findings,
           warnings: Findings) -> list[Hook]:
    if not isinstance(group, dict):
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: {where}: expected {{matcher, hooks}}, got "
                     f"{describe_value(group)}")
        return []
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: {where}.matcher: expected a string, got "
                     f"{describe_value(matcher)}")
        matcher = None
    entries = group.get("hooks")
    if not isinstance(entries, list):
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: {where}.hooks: expected an array of hooks, got "
                     f"{describe_value(entries)}")
        return []
    hooks = []
    for index, entry in enumerate(entries):
        hook = _hook(event, matcher, entry, source=source, where=f"{where}.hooks[{index}]",
                     refusals=refusals, warnings=warnings)
        if hook is not None:
            hooks.append(hook)
    return hooks


def _hook(event: str, matcher: str | None, entry: object, *, source: str, where: str,
          refusals: Findings, warnings: Findings) -> Hook | None:
    if not isinstance(entry, dict):
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: {where}: expected a hook object, got {describe_value(entry)}")
        return None
    kind = entry.get("type")
    if not isinstance(kind, str):
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: {where}.type: expected a string, got {describe_value(kind)}")
        return None
    schema = SCHEMA.get(kind)
    if schema is None:
        refusals.add(codes.HARNESS_JSON_SCHEMA,
                     f"{source}: {where}: unknown hook type {kind!r} (the host knows "
                     f"{', '.join(SCHEMA)}): it never runs")
        return None
    required, known = schema
    for key in required:
        if key not in entry:
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{source}: {where}: a {kind} hook needs {key!r}")
    for key, value in entry.items():
        expected = known.get(key)
        if expected is None or expected == _ANY:
            continue  # ignored by the host
        if not _is(value, expected):
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{source}: {where}.{key}: expected {expected}, got "
                         f"{describe_value(value)}")
        elif key in _ENUMS and value not in _ENUMS[key]:
            refusals.add(codes.HARNESS_JSON_SCHEMA,
                         f"{source}: {where}.{key}: {value!r} is not one of "
                         f"{', '.join(_ENUMS[key])}")
        elif key == "url" and (problem := url_problem(value)) is not None:
            refusals.add(codes.HARNESS_JSON_SCHEMA, f"{source}: {where}.url: {value!r} {problem}")
    return Hook(event=event, matcher=matcher, type=kind, source=source, where=where,
                fields=dict(entry))


def _is(value: object, expected: str) -> bool:
    if expected == _STRING:
        return isinstance(value, str)
    if expected == _BOOL:
        return isinstance(value, bool)
    if expected == _NUMBER:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0
    if expected == _STRINGS:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    if expected == _STRING_MAP:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    return isinstance(value, dict)
