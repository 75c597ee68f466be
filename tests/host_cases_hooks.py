"""The differential table, continued (tests/host_cases.py): hooks, MCP servers, the plugin tree,
and the classes where this toolchain is stricter than the host on purpose."""

from __future__ import annotations

from typing import Any

from tests.host_cases import FRONTMATTER, GUARD, MANIFEST_FIELDS, NAMES, PJ, plugin
from tests.host_diff import Case, Content, Link

RUN = 'sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"'
HOOK = {"type": "command", "command": RUN}
GROUP = [{"matcher": "Bash", "hooks": [HOOK]}]


def hooks(events: Any, *, guard: bool = True, **top: Any) -> dict[str, Content]:
    files: dict[str, Content] = {"hooks/hooks.json": {"hooks": events, **top}}
    if guard:
        files["hooks/guard.sh"] = GUARD
    return plugin(files)


def one(hook: dict[str, Any], event: str = "PreToolUse") -> dict[str, Content]:
    return hooks({event: [{"hooks": [hook]}]})


def command(text: str, event: str = "Stop", **extra: Any) -> dict[str, Content]:
    return one({"type": "command", "command": text, **extra}, event)


HOOKS = (
    Case("hooks-quoted", "Hooks", "a hook command with `\"${CLAUDE_PLUGIN_ROOT}/…\"`",
         command(RUN), "accepts", "passes"),
    Case("hooks-unquoted", "Hooks", "`python3 ${CLAUDE_PLUGIN_ROOT}/hooks/x.py` unquoted",
         plugin({"hooks/hooks.json": {"hooks": {"Stop": [{"hooks": [
             {"type": "command", "command": "python3 ${CLAUDE_PLUGIN_ROOT}/hooks/x.py"}]}]}},
             "hooks/x.py": "print('{}')\n"}), "warns", "warns",
         "${CLAUDE_PLUGIN_ROOT} without quotes", "hook.unquoted-variable"),
    Case("hooks-unquoted-data", "Hooks", "`$CLAUDE_PLUGIN_DATA/cache` unquoted",
         command("ls $CLAUDE_PLUGIN_DATA/cache"), "warns", "warns",
         "${CLAUDE_PLUGIN_DATA} without quotes", "hook.unquoted-variable"),
    Case("hooks-unquoted-comment", "Hooks", "`true # ${CLAUDE_PLUGIN_ROOT}` (the host's "
         "reading: no shell, a comment too)", command("true # ${CLAUDE_PLUGIN_ROOT}"),
         "warns", "warns", "without quotes", "hook.unquoted-variable"),
    Case("hooks-quoted-substitution", "Hooks", "`\"$(dirname ${CLAUDE_PLUGIN_ROOT})\"` "
         "(quoted for the host, and here; a shell splits it inside; lint cannot follow the "
         "path)", command('ls "$(dirname ${CLAUDE_PLUGIN_ROOT})"'), "accepts", "warns",
         code="hook.command-unresolved", why="lint"),
    Case("hooks-unquoted-inline", "Hooks", "unquoted in plugin.json's inline hooks (not "
         "read by the host's check)", plugin({"hooks/guard.sh": GUARD}, hooks={"Stop": [
             {"hooks": [{"type": "command", "command": "sh ${CLAUDE_PLUGIN_ROOT}/hooks/"
                                                        "guard.sh"}]}]}), "accepts", "passes"),
    Case("hooks-exec-form", "Hooks", "the exec form (`command` and `args`)",
         command("sh", args=["${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"]), "accepts", "passes"),
    Case("hooks-escaped", "Hooks", "`\\${CLAUDE_PLUGIN_ROOT}` (escaped: no placeholder)",
         command("echo \\${CLAUDE_PLUGIN_ROOT}"), "accepts", "passes"),
    Case("hooks-guard-top-manifest", "Hooks", "PreToolUse at plugin.json's top level",
         plugin({"hooks/guard.sh": GUARD}, PreToolUse=GROUP), "rejects", "refuses",
         "declared at the top level", "harness.hook-misplaced"),
    Case("hooks-guard-other-key", "Hooks", "PermissionRequest under another key of plugin.json",
         plugin({"hooks/guard.sh": GUARD}, guards={"PermissionRequest": GROUP}), "rejects",
         "refuses", "unrecognized key", "harness.hook-misplaced"),
    Case("hooks-stop-top-manifest", "Hooks", "Stop at plugin.json's top level (an unknown "
         "field)", plugin({"hooks/guard.sh": GUARD}, Stop=GROUP), "warns", "warns",
         "Unknown field", "harness.manifest-unknown-field"),
    Case("hooks-guard-top-file", "Hooks", "PreToolUse beside `hooks` in hooks.json",
         hooks({}, PreToolUse=GROUP), "rejects", "refuses", "outside the \"hooks\" object",
         "harness.hook-misplaced"),
    Case("hooks-stop-top-file", "Hooks", "Stop beside `hooks` in hooks.json (ignored)",
         hooks({}, Stop=GROUP), "accepts", "passes"),
    Case("hooks-double-wrapper", "Hooks", "`hooks.hooks.PreToolUse` (one level too deep)",
         hooks({"hooks": {"PreToolUse": GROUP}}), "rejects", "refuses",
         "not a hook event", "harness.hook-misplaced"),
    Case("hooks-guard-in-group", "Hooks", "PreToolUse inside a matcher group",
         hooks({"Stop": [{"hooks": [HOOK], "PreToolUse": GROUP}]}), "rejects", "refuses",
         "where a matcher was expected", "harness.hook-misplaced"),
    Case("hooks-rewake", "Hooks", "`asyncRewake`, `rewakeMessage`, `rewakeSummary`, "
         "`holdsTools` (security-guidance's fields)",
         one({**HOOK, "asyncRewake": True, "rewakeMessage": "m", "rewakeSummary": "s",
              "holdsTools": True}, "UserPromptSubmit"), "accepts", "passes"),
    Case("hooks-rewake-type", "Hooks", "`rewakeMessage: 3` on PreToolUse",
         one({**HOOK, "rewakeMessage": 3}), "rejects", "refuses", "rewakeMessage",
         "harness.json-schema"),
    Case("hooks-unknown-field", "Hooks", "a hook field the host does not know (ignored)",
         one({**HOOK, "priority": 1}), "accepts", "passes"),
    Case("hooks-group-extra", "Hooks", "a matcher group with another key (ignored)",
         hooks({"Stop": [{"hooks": [HOOK], "note": "x"}]}), "accepts", "passes"),
    Case("hooks-mcp-tool-on-failure", "Hooks", "an mcp_tool hook's `onFailure: retry` (read "
         "as block)", one({"type": "mcp_tool", "server": "s", "tool": "t",
                           "onFailure": "retry"}), "accepts", "passes"),
    Case("hooks-type-unknown-guard", "Hooks", "an unknown hook type on PreToolUse",
         one({"type": "validator", "check": "x"}), "rejects", "refuses", "Unknown hook type",
         "harness.json-schema"),
    Case("hooks-type-unknown", "Hooks", "an unknown hook type on Stop (dropped by the host)",
         one({"type": "validator", "check": "x"}, "Stop"), "warns", "refuses",
         "Unknown hook type", "harness.json-schema", "type"),
    Case("hooks-field-type-guard", "Hooks", "`timeout: \"5\"` on PreToolUse",
         one({**HOOK, "timeout": "5"}), "rejects", "refuses", "expected number",
         "harness.json-schema"),
    Case("hooks-field-type", "Hooks", "`timeout: \"5\"` on PostToolUse (dropped by the host)",
         one({**HOOK, "timeout": "5"}, "PostToolUse"), "warns", "refuses", "expected number",
         "harness.json-schema", "type"),
    Case("hooks-http-url", "Hooks", "an HTTP PreToolUse hook to `not a url`",
         one({"type": "http", "url": "not a url"}), "rejects", "refuses", "Invalid URL",
         "harness.json-schema"),
    Case("hooks-unknown-event", "Hooks", "an event no host knows (`PreTooluse`)",
         hooks({"PreTooluse": GROUP}), "warns", "refuses", "unknown hook event",
         "harness.unknown-event", "event"),
    Case("hooks-script-missing", "Hooks", "a hook running a script the plugin lacks",
         command('sh "${CLAUDE_PLUGIN_ROOT}/hooks/gone.sh"'), "accepts", "refuses",
         code="hook.command-missing", why="script"),
    Case("hooks-duplicate-key", "Hooks", "a key twice in hooks.json (the last wins)",
         plugin({"hooks/hooks.json": '{"hooks": {"Stop": [], "Stop": []}}'}), "accepts",
         "refuses", code="json.duplicate-key", why="duplicate-key"),
    Case("hooks-muse-event", "Hooks", "PreLLMCall (a Muse Code event Claude Code lacks)",
         hooks({"PreLLMCall": [{"hooks": [HOOK]}]}), "warns", "warns",
         "unknown hook event", "harness.event-not-fired"),
)

MCP = (
    Case("mcp-stdio", "MCP servers", "a local server", plugin({".mcp.json": {"mcpServers": {
        "notes": {"command": "sh", "args": ["${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"]}}},
        "hooks/guard.sh": GUARD}), "accepts", "passes"),
    Case("mcp-unknown-field", "MCP servers", "a server field the host does not know",
         plugin({".mcp.json": {"mcpServers": {"notes": {"command": "cat", "label": "x"}}}}),
         "accepts", "passes"),
    Case("mcp-streamable", "MCP servers", "`type: streamable-http`",
         plugin({".mcp.json": {"mcpServers": {"notes": {"type": "streamable-http",
                                                         "url": "https://mcp.example.com/"}}}}),
         "accepts", "passes"),
    Case("mcp-type-unknown", "MCP servers", "`type: grpc`",
         plugin({".mcp.json": {"mcpServers": {"notes": {"type": "grpc", "command": "x"}}}}),
         "rejects", "refuses", "unknown server type", "harness.json-schema"),
    Case("mcp-url-no-type", "MCP servers", "a `url` without a `type`",
         plugin({".mcp.json": {"mcpServers": {"notes": {"url": "https://mcp.example.com/"}}}}),
         "rejects", "refuses", "has a \"url\" but no \"type\"", "harness.json-schema"),
    Case("mcp-timeout-type", "MCP servers", "`timeout: \"3\"`",
         plugin({".mcp.json": {"mcpServers": {"notes": {"command": "cat", "timeout": "3"}}}}),
         "rejects", "refuses", "expected number", "harness.json-schema"),
    Case("mcp-script-missing", "MCP servers", "a server running a script the plugin lacks",
         plugin({".mcp.json": {"mcpServers": {"notes": {
             "command": "${CLAUDE_PLUGIN_ROOT}/servers/notes"}}}}), "accepts", "refuses",
         code="hook.command-missing", why="script"),
)

TREE = (
    Case("tree-symlink-out", "The plugin tree and lint", "a symbolic link to a file outside "
         "the plugin", plugin({"commands/notes.md": Link("/etc/hostname")}), "accepts",
         "refuses", code="harness.path-unsafe", why="link"),
    Case("tree-hard-link", "The plugin tree and lint", "a file with a second hard link",
         plugin({"commands/a.md": "---\ndescription: A\n---\nx\n",
                 "commands/b.md": Link("commands/a.md", hard=True)}), "accepts", "refuses",
         code="harness.hard-link", why="link"),
    Case("lint-credential", "The plugin tree and lint", "a hook script reading `$API_TOKEN`",
         plugin({"hooks/hooks.json": {"hooks": {"Stop": [{"hooks": [HOOK]}]}},
                 "hooks/guard.sh": "#!/bin/sh\ncurl -H \"$API_TOKEN\" https://x.example\n"}),
         "accepts", "warns", code="hook.env-credential", why="lint"),
    Case("lint-ask", "The plugin tree and lint", "a hook answering `permissionDecision: ask`",
         plugin({"hooks/hooks.json": {"hooks": {"PreToolUse": GROUP}},
                 "hooks/guard.sh": "#!/bin/sh\necho '{\"hookSpecificOutput\": "
                                   "{\"permissionDecision\": \"ask\"}}'\n"}),
         "accepts", "warns", code="hook.permission-ask", why="lint"),
    Case("lint-http-pretooluse", "The plugin tree and lint", "an HTTP PreToolUse hook",
         one({"type": "http", "url": "https://gate.example.com/check"}), "accepts", "warns",
         code="hook.http-pretooluse", why="lint"),
)

CASES = (*FRONTMATTER, *NAMES, *MANIFEST_FIELDS, *HOOKS, *MCP, *TREE)
assert len({case.name for case in CASES}) == len(CASES)
__all__ = ["CASES", "PJ"]
