"""The host's rules one at a time, in-process, with the verdicts the pinned Claude Code gave
(asked with `claude plugin validate --json`; tests/verify/test_host_differential.py asks it
again for the table's cases): unquoted placeholders, URLs, version ranges, misplaced guard
hooks, MCP servers (rules/harness_quoting.py, model/harness/host_values.py, mcp.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core.errors import Findings
from horon_bundle.model.harness.hooks import Hook
from horon_bundle.model.harness.host_values import is_version_range, misplaced_guards, url_problem
from horon_bundle.model.harness.mcp import servers_from_file
from horon_bundle.rules.harness_quoting import judge_quoting, unquoted

# command -> the variables the host said were unquoted (each asked of Claude Code 2.1.332)
QUOTING = {
    "python3 ${CLAUDE_PLUGIN_ROOT}/x.py": ["CLAUDE_PLUGIN_ROOT"],
    '"${CLAUDE_PLUGIN_ROOT}/x.py"': [],
    "'${CLAUDE_PLUGIN_ROOT}/x.py'": [],
    "$CLAUDE_PLUGIN_ROOT/x.py": ["CLAUDE_PLUGIN_ROOT"],
    "cd ${CLAUDE_PLUGIN_ROOT} && ./x.sh": ["CLAUDE_PLUGIN_ROOT"],
    'X="${CLAUDE_PLUGIN_ROOT}" ./x': [],
    "X=${CLAUDE_PLUGIN_ROOT} ./x": ["CLAUDE_PLUGIN_ROOT"],
    '"${CLAUDE_PLUGIN_ROOT}"/x.py': [],
    'bash -c "${CLAUDE_PLUGIN_ROOT}/x"': [],
    "\\${CLAUDE_PLUGIN_ROOT}/x": [],
    "${CLAUDE_PLUGIN_ROOT:-/tmp}/x": [],
    "$(dirname ${CLAUDE_PLUGIN_ROOT})/x": ["CLAUDE_PLUGIN_ROOT"],
    '"$(dirname ${CLAUDE_PLUGIN_ROOT})"/x': [],
    "`echo ${CLAUDE_PLUGIN_ROOT}`": ["CLAUDE_PLUGIN_ROOT"],
    "echo '\"${CLAUDE_PLUGIN_ROOT}\"'": [],
    "cat <<EOF\n${CLAUDE_PLUGIN_ROOT}\nEOF": ["CLAUDE_PLUGIN_ROOT"],
    "x ${CLAUDE_PLUGIN_DATA}/y": ["CLAUDE_PLUGIN_DATA"],
    "x ${CLAUDE_PLUGIN_ROOTX}/y": [],
    "x ${CLAUDE_PROJECT_DIR}/y": ["CLAUDE_PROJECT_DIR"],
    "x # ${CLAUDE_PLUGIN_ROOT}": ["CLAUDE_PLUGIN_ROOT"],
    "x $'${CLAUDE_PLUGIN_ROOT}'": [],
    "x $HOME/y": [],
    "x $CLAUDE_PLUGIN_DATA/y": ["CLAUDE_PLUGIN_DATA"],
    "x ${CLAUDE_ENV_FILE}": [],
    'x "a\\" ${CLAUDE_PLUGIN_ROOT}"': [],
    "\"it's ${CLAUDE_PLUGIN_ROOT}\"": [],
    '"${CLAUDE_PLUGIN_ROOT}': [],
    "'a'${CLAUDE_PLUGIN_ROOT}": ["CLAUDE_PLUGIN_ROOT"],
    "$$CLAUDE_PLUGIN_ROOT": ["CLAUDE_PLUGIN_ROOT"],
    'x ${CLAUDE_PLUGIN_ROOT}"/y"': ["CLAUDE_PLUGIN_ROOT"],
    "x \\\"${CLAUDE_PLUGIN_ROOT}\\\"": ["CLAUDE_PLUGIN_ROOT"],
    "x ${ CLAUDE_PLUGIN_ROOT }": [],
    "x $CLAUDE_PLUGIN_ROOT_X": [],
}


@pytest.mark.parametrize("command", list(QUOTING))
def test_unquoted_placeholders_as_the_host_reads_them(command: str) -> None:
    assert list(unquoted(command)) == QUOTING[command]


def _hook(command: str, *, source: str = "hooks/hooks.json", **fields: object) -> Hook:
    return Hook(event="Stop", matcher=None, type="command", source=source, where="hooks.Stop[0]",
                fields={"type": "command", "command": command, **fields})


def test_only_a_hooks_files_shell_commands_are_judged() -> None:
    bare = "python3 ${CLAUDE_PLUGIN_ROOT}/x.py ${CLAUDE_PLUGIN_ROOT}/y"
    warned = judge_quoting([_hook(bare)])
    assert [f.code.name for f in warned] == ["hook.unquoted-variable"]  # once per variable
    assert "CLAUDE_PLUGIN_ROOT" in warned.items[0].message
    for quiet in (_hook(bare, source="plugin.json"), _hook(bare, args=["x"]),
                  _hook(bare, **{"shell": "powershell"}),
                  Hook(event="Stop", matcher=None, type="http", source="hooks/hooks.json",
                       where="w", fields={"type": "http", "url": bare})):
        assert not judge_quoting([quiet])


@given(st.text(alphabet="$'\"\\ {}#CLAUDE_PLUGIN_ROOTx", max_size=60))
def test_any_command_is_read_without_raising(command: str) -> None:
    for name in unquoted(command):
        assert name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR")


@pytest.mark.parametrize(("url", "valid"), [
    ("https://x.example", True), ("http://x", True), ("mailto:a@b.c", True), ("ftp://x", True),
    ("x:y", True), ("https:x.example", True), ("file:///tmp", True), ("HTTPS://X.EXAMPLE", True),
    ("https://x.example/ a", True), ("https://[::1]:80/", True), ("https://", False),
    ("//x.example", False), ("https://exa mple.com", False), ("not a url", False),
    ("https://a:99999/", False), ("https://a:8a/", False), ("https://[]/", False),
])
def test_urls_as_the_hosts_parser_takes_them(url: str, valid: bool) -> None:
    assert (url_problem(url) is None) == valid


@pytest.mark.parametrize(("text", "valid"), [
    (">=2.1.0", True), ("^1.2 || 2.x", True), ("1 - 2", True), ("*", True), ("", True),
    (">= 1.0.0 <2", True), ("~1.2.3-beta.1", True), ("garbage", False), ("soon", False),
    ("1.2.3.4", False),
])
def test_version_ranges(text: str, valid: bool) -> None:
    assert is_version_range(text) == valid


GROUP = [{"hooks": [{"type": "command", "command": "x"}]}]


@pytest.mark.parametrize(("document", "found"), [
    ({"hooks": {"PreToolUse": GROUP}}, []),
    ({"PreToolUse": GROUP}, ["PreToolUse"]),
    ({"pretooluse": GROUP}, ["pretooluse"]),
    ({"PermissionRequest": {}}, ["PermissionRequest"]),
    ({"PreToolUse": 0}, ["PreToolUse"]),
    ({"PreToolUse": []}, []),
    ({"PreToolUse": None}, []),
    ({"Stop": GROUP}, []),
    ({"a": {"b": [{"PreToolUse": GROUP}]}}, ["a.b[0].PreToolUse"]),
    ({"hooks": {"hooks": {"PreToolUse": GROUP}}}, ["hooks.hooks.PreToolUse"]),
    ({"hooks": {"Stop": [{"hooks": [], "PreToolUse": GROUP}]}}, ["hooks.Stop[0].PreToolUse"]),
    ({"mcpServers": {"PreToolUse": {"command": "x"}}}, []),
    ({"userConfig": {"PreToolUse": {"type": "string"}}}, ["userConfig.PreToolUse"]),
])
def test_guard_hooks_out_of_place(document: dict[str, object], found: list[str]) -> None:
    assert list(misplaced_guards(document)) == found


@pytest.mark.parametrize(("server", "refused"), [
    ({"command": "x"}, False), ({"command": "x", "label": 1}, False),
    ({"type": "streamable-http", "url": "https://m.example/"}, False),
    ({"type": "sse", "url": "https://m.example/"}, False), ({"type": "grpc", "command": "x"}, True),
    ({"url": "https://m.example/"}, True), ({"type": "http"}, True),
    ({"type": "http", "url": "nope"}, True), ({"type": "stdio", "url": "https://m/"}, True),
    ({"command": "x", "timeout": "3"}, True), ({"command": "x", "timeout": 3}, False),
    ({"command": 3}, True), ({"command": "x", "env": {"A": 1}}, True), ({}, True),
    ({"type": "sdk", "name": "x"}, True),
])
def test_mcp_servers_as_the_host_keeps_or_drops_them(server: dict[str, object],
                                                     refused: bool) -> None:
    refusals = Findings()
    found = servers_from_file({"mcpServers": {"s": server}, "other": 1}, source=".mcp.json",
                              refusals=refusals, warnings=Findings())
    assert bool(refusals) == refused and len(found) == (0 if refused else 1)


def _servers(document: object) -> tuple[list[tuple[str, str]], list[tuple[str, str, str]]]:
    refusals = Findings()
    found = servers_from_file(document, source="m.json", refusals=refusals, warnings=Findings())
    return ([(f.code.name, f.message) for f in refusals],
            [(server.name, server.source, server.transport) for server in found])


def test_each_mcp_refusal_has_its_code_and_place() -> None:
    schema = "harness.json-schema"
    whole = (schema, "m.json: expected an object of MCP servers, got an array")
    assert _servers([1]) == _servers({"mcpServers": [1]}) == ([whole], [])
    assert _servers({"a": 1, "b": {"command": "x", "args": [1]},
                     "c": {"command": "x", "args": "y"}, "d": {"command": "x", "headersHelper": 3},
                     "e": {"type": "http", "url": "x"}, "f": {"type": "sse"},
                     "g": {"url": "https://h.example"}, "h": {"command": "x", "args": ["a"]},
                     "i": {"command": "x", "timeout": True},
                     "j": {"command": "x", "env": {"A": 1}}}) == ([
        (schema, "m.json: mcpServers.a: expected a server object, got 1"),
        (schema, "m.json: mcpServers.b.args: expected an array of strings"),
        (schema, "m.json: mcpServers.c.args: expected an array of strings"),
        (schema, "m.json: mcpServers.d.headersHelper: expected a string, got 3"),
        (schema, "m.json: mcpServers.e.url: is not an absolute URL (no scheme)"),
        (schema, "m.json: mcpServers.f: needs a url"),
        (schema, "m.json: mcpServers.g: needs a command (a server with a url needs a type: "
                 "http, sse or ws)"),
        (schema, "m.json: mcpServers.i.timeout: expected a number, got true"),
        (schema, "m.json: mcpServers.j.env: expected an object of strings")],
        [("h", "m.json", "stdio")])
    assert _servers({"mcpServers": {"k": {"type": "ws", "url": "wss://h.example/x"}},
                     "other": 1}) == ([], [("k", "m.json", "ws")])


def test_an_mcp_server_gives_its_strings_and_catalogue_entry() -> None:
    local, remote = servers_from_file({"a": {
        "command": "run", "args": ["x", "y"], "cwd": "/w", "env": {"A": "1"}}, "b": {
        "type": "http", "url": "https://h.example/", "headers": {"H": "v"}}},
        source="m.json", refusals=Findings(), warnings=Findings())
    assert local.strings() == [("command", "run"), ("cwd", "/w"), ("args[0]", "x"),
                               ("args[1]", "y"), ("env.A", "1")]
    assert remote.strings() == [("url", "https://h.example/"), ("headers.H", "v")]
    assert local.to_catalogue() == {"name": "a", "source": "m.json", "type": "stdio",
                                    "command": "run", "args": ["x", "y"]}
    assert remote.to_catalogue() == {"name": "b", "source": "m.json", "type": "http",
                                     "url": "https://h.example/"}


def test_quoting_reads_on_after_an_escape_a_placeholder_and_a_skipped_hook() -> None:
    command = "a\\ b ${CLAUDE_PLUGIN_ROOT}/x $CLAUDE_PROJECT_DIR/y"
    assert list(unquoted(command)) == ["CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"]
    warnings = judge_quoting([_hook("${CLAUDE_PLUGIN_ROOT}/x", args=[]),
                              _hook("${CLAUDE_PLUGIN_DATA}/y")])
    assert [f.code.name for f in warnings] == ["hook.unquoted-variable"]
    assert "${CLAUDE_PLUGIN_DATA}" in warnings.items[0].message


@pytest.mark.parametrize(("url", "valid"), [
    ("https://a:65535/", True), ("https://a:65536/", False),
    ("https://user@name@c.example/", True),  # the last @ ends the user information
    ("https://[::1]]/", False),
])
def test_url_ports_and_authorities_at_their_edges(url: str, valid: bool) -> None:
    assert (url_problem(url) is None) == valid


def test_every_alternative_of_a_version_range_is_read() -> None:
    assert not is_version_range("1 - 2 || garbage")


def _nested(depth: int, guard: object, *, lists: bool = False) -> object:
    document: object = {"PreToolUse": guard}
    for _ in range(depth):
        document = [document] if lists else {"a": document}
    return document


@pytest.mark.parametrize("lists", [False, True])
def test_guards_out_of_place_are_found_sixty_four_levels_deep(lists: bool) -> None:
    assert len(list(misplaced_guards(_nested(64, 1, lists=lists)))) == 1
    assert list(misplaced_guards(_nested(65, 1, lists=lists))) == []
    through_hooks = {"hooks": {"Stop": _nested(62, 1, lists=lists)}}
    assert len(list(misplaced_guards(through_hooks))) == 1
    assert list(misplaced_guards({"hooks": {"Stop": _nested(63, 1, lists=lists)}})) == []


def test_guards_are_sought_past_a_server_map_and_in_nested_ones() -> None:
    assert list(misplaced_guards({"mcpServers": {}, "PreToolUse": 1})) == ["PreToolUse"]
    assert list(misplaced_guards({"a": {"mcpServers": {"PreToolUse": 1}}})) == [
        "a.mcpServers.PreToolUse"]
