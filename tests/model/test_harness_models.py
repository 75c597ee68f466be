"""The harness readers one rule at a time: plugin.json, hooks, references, profiles, and the
`profiles` command (frontmatter: test_harness_frontmatter.py)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from horon_bundle.core.errors import Findings, Refused
from horon_bundle.model.harness import frontmatter as fm
from horon_bundle.model.harness.hooks import count_hooks, hooks_from_file
from horon_bundle.model.harness.manifest import parse_plugin_manifest
from horon_bundle.model.harness.names import name_problem
from horon_bundle.model.harness.profile import parse_profile, shipped_profiles
from horon_bundle.rules.harness_lint import credential_reads
from horon_bundle.rules.harness_refs import (
    DYNAMIC,
    FOUND,
    MISSING,
    OUTSIDE,
    exec_references,
    local_imports,
    shell_references,
)
from tests.helpers import cli


@given(st.text(max_size=300))
def test_any_text_reads_without_raising(text: str) -> None:
    parsed = fm.parse_markdown(("---\n" + text + "\n---\n").encode("utf-8", "surrogatepass"))
    json.dumps(parsed.values)  # always JSON


def _manifest(document: object) -> tuple[Findings, Findings]:
    refusals, warnings = Findings(), Findings()
    try:
        parse_plugin_manifest(json.dumps(document).encode(), source="plugin.json",
                              host="claude-code", refusals=refusals, warnings=warnings)
    except Refused as exc:
        refusals.extend(exc.findings)
    return refusals, warnings


def _codes(findings: Findings) -> list[str]:
    return [f.code.name for f in findings]


def test_plugin_json_is_read_against_the_documented_fields() -> None:
    refusals, warnings = _manifest({"name": "ok", "version": "1.0.0", "hook": "./h.json",
                                    "repository": "https://x.example/r.git",
                                    "displayName": "OK", "defaultEnabled": True,
                                    "engines": {"claude-code": ">=2.1.0"}, "metadata": 3})
    assert not refusals and _codes(warnings) == ["harness.manifest-unknown-field"]
    refusals, _ = _manifest({"name": "ok", "repository": {"type": "git", "url": "u"},
                             "homepage": "not a url", "author": {"email": "a@b.c"},
                             "engines": {"claude-code": "soon"}, "agents": "./agents"})
    assert _codes(refusals) == ["harness.manifest-type", "harness.manifest-value",
                                "harness.manifest-type", "harness.manifest-value",
                                "harness.manifest-value"]
    refusals, _ = _manifest({"name": "ok", "keywords": "one", "author": "me"})
    assert _codes(refusals) == ["harness.manifest-type", "harness.manifest-type"]
    refusals, _ = _manifest({"name": "ok", "userConfig": {"k": {
        "type": "string", "title": "K", "description": "k", "x": 1}}})
    assert _codes(refusals) == ["harness.manifest-value"]
    refusals, _ = _manifest({"name": "ok", "userConfig": {"a-b": {"type": "string"}}})
    assert _codes(refusals) == ["harness.manifest-value", "harness.manifest-type",
                                "harness.manifest-type"]  # the key; title, description
    refusals, _ = _manifest({"name": "claude-helper"})
    assert _codes(refusals) == ["harness.name-reserved"]
    refusals, _ = _manifest({"version": "1.0.0"})
    assert _codes(refusals) == ["harness.manifest-value"]
    refusals, warnings = _manifest({"name": "Not Kebab"})
    assert _codes(refusals) == ["harness.manifest-value"]  # a space: no portable file name
    refusals, warnings = _manifest({"name": "NotKebab"})
    assert not refusals and _codes(warnings) == ["harness.name-style"]


def test_plugin_json_duplicate_keys_are_refused() -> None:
    refusals, warnings = Findings(), Findings()
    with pytest.raises(Refused) as caught:
        parse_plugin_manifest(b'{"name": "a", "name": "b"}', source="plugin.json",
                              host="claude-code", refusals=refusals, warnings=warnings)
    assert caught.value.codes() == ["json.duplicate-key"]


def test_hook_fields_the_host_knows_are_typed_others_ignored() -> None:
    refusals, warnings = Findings(), Findings()
    hooks = hooks_from_file({"description": "d", "other": 1, "hooks": {"PostToolUse": [{
        "x": 1, "hooks": [
            {"type": "command", "command": "x", "asyncRewake": True, "if": "Bash(git *)",
             "rewakeMessage": "m", "rewakeSummary": "s", "holdsTools": True, "newer": 1},
            {"type": "mcp_tool", "server": "s", "tool": "t", "input": {}, "onFailure": "x"},
            {"type": "prompt", "prompt": "p", "once": True}]}]}},
        source="hooks.json", refusals=refusals, warnings=warnings)
    assert not refusals and not warnings and len(hooks) == 3
    hooks_from_file({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "x", "timeout": "10"},
        {"type": "command", "command": "x", "shell": "fish"},
        {"type": "command", "command": "x", "rewakeMessage": 3},
        {"type": "validation", "check": "y"},
        {"type": "http", "url": "not a url"},
        {"type": "http"}]}]}}, source="hooks.json", refusals=refusals, warnings=Findings())
    assert _codes(refusals) == ["harness.json-schema"] * 6
    bare = Findings()
    hooks_from_file({"PreToolUse": []}, source="hooks.json", refusals=bare, warnings=Findings())
    assert _codes(bare) == ["harness.json-schema"]


FILES = {"hooks/x.py": None, "hooks/run.sh": None, "bin/tool": None}


@pytest.mark.parametrize(("command", "expected"), [
    ("python3 ${CLAUDE_PLUGIN_ROOT}/hooks/x.py", [("hooks/x.py", FOUND, False)]),
    ('"${CLAUDE_PLUGIN_ROOT}/hooks/run.sh"', [("hooks/run.sh", FOUND, True)]),
    ('bash "${CLAUDE_PLUGIN_ROOT}/hooks/run.sh" "$CLAUDE_PLUGIN_ROOT/hooks/y.py"',
     [("hooks/run.sh", FOUND, False), ("hooks/y.py", MISSING, False)]),
    ("A=1 ${CLAUDE_PLUGIN_ROOT}/bin/tool && echo ok",
     [("bin/tool", FOUND, True)]),
    ("cd ${CLAUDE_PLUGIN_ROOT} && ./bin/tool", [("", FOUND, False)]),
])
def test_plugin_root_references_in_shell_commands(
        command: str, expected: list[tuple[str, str, bool]]) -> None:
    found = [(r.path, r.resolve(FILES), r.runs_directly) for r in shell_references(command)]
    assert found == expected


def test_plugin_root_references_in_exec_form() -> None:
    found = exec_references("${CLAUDE_PLUGIN_ROOT}/bin/tool",
                            ("--config", "${CLAUDE_PLUGIN_ROOT}/my dir/c.json"))
    assert [(r.field, r.path) for r in found] == [("command", "bin/tool"),
                                                   ("args[1]", "my dir/c.json")]


def test_credential_reads_across_languages() -> None:
    text = ('os.getenv("OPENAI_API_KEY"); process.env.GITHUB_TOKEN; ENV["DB_PASSWORD"]\n'
            'echo $HOME ${AWS_SECRET_ACCESS_KEY} $GIT_AUTHOR_NAME')
    assert credential_reads(text) == ["AWS_SECRET_ACCESS_KEY", "DB_PASSWORD", "GITHUB_TOKEN",
                                      "OPENAI_API_KEY"]
    assert credential_reads("x = '$API_TOKEN'", shell=False) == []


def test_profiles_are_read_strictly() -> None:
    good = {"format": "horon.host-profile.v1", "host": "h", "version": "1", "description": "",
            "source": "", "events": {"fired": ["A"], "understood": [], "absent": []}}
    parse_profile(json.dumps(good).encode(), source="p.json", origin="p.json")
    for bad in ({**good, "extra": 1},
                {**good, "events": {"fired": ["A"], "understood": ["A"], "absent": []}},
                {**good, "broken": {"hook.command-missing": "no"}},
                {**good, "format": "horon.host-profile.v2"}):
        with pytest.raises(Refused) as caught:
            parse_profile(json.dumps(bad).encode(), source="p.json", origin="p.json")
        assert set(caught.value.codes()) == {"profile.invalid"}


def test_the_profiles_command_lists_tokens_first() -> None:
    result = cli("profiles")
    assert result.status == 0, result.stderr
    lines = result.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["claude-code@2.1.332", "muse-code@0.2.1"]
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)
    assert "sdk.d.ts" in lines[0] and "Muse Code Hooks Reference, 0.2.1 beta" in lines[1]
    shipped = {p.token: p for p in shipped_profiles()}
    assert len(shipped["claude-code@2.1.332"].fired) == 34
    assert len(shipped["muse-code@0.2.1"].fired) == 12
    assert cli("profiles", "--json").json()["profiles"][1]["broken"]


@given(st.text(max_size=200))
def test_any_command_line_is_judged_without_raising(command: str) -> None:
    for reference in shell_references("${CLAUDE_PLUGIN_ROOT}/" + command):
        state = reference.resolve(FILES)
        if state == FOUND and reference.path:
            assert reference.path in FILES or any(n.startswith(reference.path + "/")
                                                  for n in FILES)
        assert reference.path is None or not reference.path.startswith("/")


def _hook_file(document: object) -> tuple[list[tuple[str, str]], list[tuple[str, str | None,
                                                                          str, str]]]:
    refusals = Findings()
    hooks = hooks_from_file(document, source="h.json", refusals=refusals, warnings=Findings())
    return ([(f.code.name, f.message) for f in refusals],
            [(h.event, h.matcher, h.where, h.type) for h in hooks])


SCHEMA = "harness.json-schema"


@pytest.mark.parametrize(("document", "refused", "kept"), [
    ([1, 2], [(SCHEMA, 'h.json: expected {"hooks": {<event>: [...]}}, got an array')], []),
    ({"hooks": 3}, [(SCHEMA, 'h.json: expected {"hooks": {<event>: [...]}}, got no hooks '
                             'object')], []),
    ({"description": 5, "hooks": {}}, [(SCHEMA, "h.json: description: expected a string")],
     []),
    ({"hooks": {"Stop": [7, {"matcher": 3, "hooks": [{"type": "command", "command": "a"}]},
                         {"hooks": "x"}]}},
     [(SCHEMA, "h.json: hooks.Stop[0]: expected {matcher, hooks}, got 7"),
      (SCHEMA, "h.json: hooks.Stop[1].matcher: expected a string, got 3"),
      (SCHEMA, "h.json: hooks.Stop[2].hooks: expected an array of hooks, got 'x'")],
     [("Stop", None, "hooks.Stop[1].hooks[0]", "command")]),
    ({"hooks": {"Stop": [{"matcher": "Bash", "hooks": [
        9, {"type": 4}, {"command": "c"}, {"type": "command", "command": "a", "timeout": 0},
        {"type": "command", "command": "a", "timeout": 0.5},
        {"type": "command", "command": "a", "timeout": True}]}]}},
     [(SCHEMA, "h.json: hooks.Stop[0].hooks[0]: expected a hook object, got 9"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[1].type: expected a string, got 4"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[2].type: expected a string, got null"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[3].timeout: expected a positive number, got 0"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[5].timeout: expected a positive number, got "
               "true")],
     [("Stop", "Bash", f"hooks.Stop[0].hooks[{i}]", "command") for i in (3, 4, 5)]),
    ({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "a", "args": ["x", 1]},
        {"type": "command", "command": "a", "args": "x"},
        {"type": "http", "url": "https://h.example/x", "headers": {"a": 1}},
        {"type": "http", "url": "https://h.example/x", "headers": ["a"]},
        {"type": "command", "command": "a", "shell": "powershell", "onFailure": "block"}]}]}},
     [(SCHEMA, "h.json: hooks.Stop[0].hooks[0].args: expected an array of strings, got an "
               "array"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[1].args: expected an array of strings, got 'x'"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[2].headers: expected an object of strings, got "
               "an object"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[3].headers: expected an object of strings, got "
               "an array")],
     [("Stop", None, f"hooks.Stop[0].hooks[{i}]", kind)
      for i, kind in enumerate(["command", "command", "http", "http", "command"])]),
    ({"hooks": {"A": "x", "Stop": [{"hooks": [{"type": "command", "x": 1, "command": 3}]}]}},
     [(SCHEMA, "h.json: hooks.A: expected an array of matcher groups, got 'x'"),
      (SCHEMA, "h.json: hooks.Stop[0].hooks[0].command: expected a string, got 3")],
     [("Stop", None, "hooks.Stop[0].hooks[0]", "command")]),
])
def test_each_hook_refusal_has_its_code_and_place(
        document: object, refused: list[tuple[str, str]],
        kept: list[tuple[str, str | None, str, str]]) -> None:
    assert _hook_file(document) == (refused, kept)


def test_count_hooks_counts_events_groups_and_hooks() -> None:
    events = {"A": [{"hooks": [1, 2]}, 3, {"hooks": "x"}], "B": "y", "C": [{"hooks": [1]}]}
    assert count_hooks(events) == 3 + (1 + 2) + 1 + 1 + (1 + 1)
    assert count_hooks([1]) == count_hooks({}) == 0


def test_a_hook_gives_its_strings_and_catalogue_entry() -> None:
    refusals = Findings()
    http, command = hooks_from_file({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "http", "url": "https://h.example/$X", "headers": {"A": "$T"}, "other": 1},
        {"type": "command", "command": "run", "args": ["a", "b"], "timeout": 5}]}]}},
        source="h.json", refusals=refusals, warnings=Findings())
    assert not refusals
    assert http.strings() == ["https://h.example/$X", "$T"] and http.args() is None
    assert command.strings() == ["run", "a", "b"] and command.args() == ("a", "b")
    assert command.text("command") == "run" and command.text("timeout") is None
    assert command.to_catalogue() == {"event": "PreToolUse", "matcher": "Bash",
                                      "type": "command", "source": "h.json", "command": "run",
                                      "args": ["a", "b"]}
    assert http.to_catalogue()["url"] == "https://h.example/$X"


IMPORTED: dict[str, None] = dict.fromkeys([
    "hooks/b.py", "hooks/c/d/__init__.py", "hooks/e.py", "hooks/g/h.py", "hooks/lib/u.ts",
    "hooks/m.mjs", "hooks/d/index.js", "lib/env.sh", "hooks/common.sh", "hooks/k.py", "x.js"])


@pytest.mark.parametrize(("path", "text", "expected"), [
    ("hooks/a.py", "import b, c.d\nfrom .e import f\nfrom g.h import i\nimport os\n",
     ["hooks/b.py", "hooks/c/d/__init__.py", "hooks/e.py", "hooks/g/h.py"]),
    ("hooks/a.js", "require('./lib/u')\nimport x from \"./m.mjs\"\nimport('./d')\n"
                   "require('../x')", ["hooks/lib/u.ts", "hooks/m.mjs", "hooks/d/index.js",
                                       "x.js"]),
    ("hooks/a.sh", "source ${CLAUDE_PLUGIN_ROOT}/lib/env.sh\n. ./common.sh; source $HOME/k.py\n"
                   "source /etc/x\nsource ${CLAUDE_PLUGIN_ROOT}\nsource ~/k.py",
     ["lib/env.sh", "hooks/common.sh"]),
    ("a.js", "require('../x')", []),  # outside the root, even where the index has the name
])
def test_local_imports_name_the_bundle_files_a_script_pulls_in(
        path: str, text: str, expected: list[str]) -> None:
    files = {**IMPORTED, "../x.js": None} if path == "a.js" else IMPORTED
    assert local_imports(path, text, files) == expected


@pytest.mark.parametrize(("command", "expected"), [
    ("A=1 ${CLAUDE_PLUGIN_ROOT}/bin/t | ${CLAUDE_PLUGIN_ROOT}/bin/u ${CLAUDE_PLUGIN_ROOT}/../x"
     " ; ${CLAUDE_PLUGIN_ROOT}/..",
     [("${CLAUDE_PLUGIN_ROOT}/bin/t", "bin/t", True, FOUND),
      ("${CLAUDE_PLUGIN_ROOT}/bin/u", "bin/u", True, MISSING),
      ("${CLAUDE_PLUGIN_ROOT}/../x", "../x", False, OUTSIDE),
      ("${CLAUDE_PLUGIN_ROOT}/..", "..", True, OUTSIDE)]),
    ("${CLAUDE_PLUGIN_ROOT}/$X ${CLAUDE_PLUGIN_ROOT}x ${CLAUDE_PLUGIN_ROOT}/ "
     "${CLAUDE_PLUGIN_ROOT}/. ${CLAUDE_PLUGIN_ROOT}/a/../bin/t",
     [("${CLAUDE_PLUGIN_ROOT}/$X", None, True, DYNAMIC),
      ("${CLAUDE_PLUGIN_ROOT}x", None, False, DYNAMIC),
      ("${CLAUDE_PLUGIN_ROOT}/", "", False, FOUND), ("${CLAUDE_PLUGIN_ROOT}/.", "", False, FOUND),
      ("${CLAUDE_PLUGIN_ROOT}/a/../bin/t", "bin/t", False, FOUND)]),
])
def test_each_reference_keeps_its_word_path_and_place(
        command: str, expected: list[tuple[str, str | None, bool, str]]) -> None:
    found = shell_references(command, "args[0]")
    assert {r.field for r in found} == {"args[0]"}
    assert [(r.word, r.path, r.runs_directly, r.resolve({"bin/t": None}))
            for r in found] == expected
    program, arg = exec_references("${CLAUDE_PLUGIN_ROOT}/bin/t", ("x", "$CLAUDE_PLUGIN_ROOT/c"))
    assert (program.runs_directly, arg.field, arg.path, arg.runs_directly) == (
        True, "args[1]", "c", False)


def _refused(document: dict[str, object]) -> list[tuple[str, str]]:
    return [(f.code.name, f.message) for f in _manifest(document)[0]]


TYPE, VALUE = "harness.manifest-type", "harness.manifest-value"
NOT_BOTH = "a command has either source (a ./path) or content (inline Markdown), not both"


@pytest.mark.parametrize(("fields", "refused"), [
    ({"dependencies": ["a", {"name": "b"}], "channels": [{}], "types": "./t.d.ts",
      "monitors": "./m.json"}, []),
    ({"dependencies": "a", "channels": {}, "types": 3, "monitors": [1]},
     [(TYPE, "plugin.json: dependencies: expected an array of plugin names, got 'a'"),
      (TYPE, "plugin.json: channels: expected an array of objects, got an object"),
      (TYPE, "plugin.json: types: expected a ./path to a .d.ts file, got 3"),
      (TYPE, "plugin.json: monitors: expected a ./path to a .json file, or an array of "
             "monitors, got an array")]),
    ({"dependencies": [1], "channels": [1], "types": "./t.ts", "monitors": "./m.yaml"},
     [(TYPE, "plugin.json: dependencies: expected an array of plugin names, got an array"),
      (TYPE, "plugin.json: channels: expected an array of objects, got an array"),
      (VALUE, "plugin.json: types: './t.ts' does not name a TypeScript declaration file "
              "(.d.ts)"),
      (VALUE, "plugin.json: monitors: './m.yaml' does not end with .json")]),
    ({"monitors": [{}], "engines": {"other": 1}, "keywords": ["a", 1]},
     [(TYPE, "plugin.json: keywords: expected an array of strings, got an array")]),
    ({"engines": [1], "keywords": 3},
     [(TYPE, "plugin.json: keywords: expected an array of strings, got 3")]),
    ({"keywords": ["a"]}, []),
    ({"engines": {"claude-code": 2}},
     [(VALUE, 'plugin.json: engines.claude-code: 2 is not a version range such as ">=2.1.0"')]),
    ({"commands": {"a": {"source": "./c/a.md"}, "b": {"content": "# b"},
                   "c": {"source": "./x", "content": "y"}, "d": 1, "e": {},
                   "f": {"source": "../x"}}},
     [(VALUE, f"plugin.json: commands.c: {NOT_BOTH}"),
      (VALUE, f"plugin.json: commands.d: {NOT_BOTH}"),
      (VALUE, f"plugin.json: commands.e: {NOT_BOTH}"),
      ("harness.path-unsafe", "plugin.json: commands.f.source: '../x' does not start with ./")]),
    ({"agents": "./agents/a.txt", "skills": ["./s", "/abs", 3]},
     [(VALUE, "plugin.json: agents: './agents/a.txt' does not end with .md (the host reads a "
              ".md file here)"),
      (TYPE, "plugin.json: skills: expected a ./path or an array of ./paths, got an array")]),
    ({"agents": ["./a.txt", "./b.md"], "skills": {"x": 1}, "outputStyles": "./o.txt"},
     [(VALUE, "plugin.json: agents[0]: './a.txt' does not end with .md (the host reads a .md "
              "file here)"),
      (TYPE, "plugin.json: skills: expected a ./path or an array of ./paths, got an object")]),
    ({"userConfig": {"9a": 1, "b": {"type": "int", "title": 1, "sensitive": "yes",
                                    "required": True, "multiple": 0},
                     "c": {"type": "string", "title": "t", "description": "d"}}},
     [(VALUE, "plugin.json: userConfig.9a: an option key is letters, digits and _, not "
              "starting with a digit"),
      (TYPE, "plugin.json: userConfig.9a: expected an object, got 1"),
      (VALUE, "plugin.json: userConfig.b.type: 'int' is not one of string, number, boolean, "
              "directory, file"),
      (TYPE, "plugin.json: userConfig.b.title: expected a string (required), got 1"),
      (TYPE, "plugin.json: userConfig.b.description: expected a string (required), got null"),
      (TYPE, "plugin.json: userConfig.b.sensitive: expected a boolean, got 'yes'"),
      (TYPE, "plugin.json: userConfig.b.multiple: expected a boolean, got 0")]),
    ({"userConfig": [1]},
     [(TYPE, "plugin.json: userConfig: expected an object of options, got an array")]),
])
def test_each_plugin_json_field_is_refused_with_its_code_and_place(
        fields: dict[str, object], refused: list[tuple[str, str]]) -> None:
    assert _refused({"name": "p", **fields}) == refused


def test_a_component_field_names_at_most_ten_thousand_paths() -> None:
    assert _refused({"name": "p", "outputStyles": ["./o"] * 10_000}) == []
    assert _refused({"name": "p", "outputStyles": ["./o"] * 10_001}) == [
        ("harness.limit", "plugin.json: outputStyles: 10001 paths, at most 10000 (real plugins "
                          "name tens)")]


def test_commands_as_an_object_list_each_source() -> None:
    manifest = parse_plugin_manifest(json.dumps({"name": "p", "commands": {
        "a": {"source": "./c/a.md"}, "b": {"content": "# b"}, "c": {"source": "./c/"},
        "d": {"source": ["./d/x.md", "./d/y.md"]}}}).encode(), source="plugin.json",
        host="claude-code", refusals=Findings(), warnings=Findings())
    assert manifest is not None
    assert manifest.paths_of("commands") == ("c/a.md", "c", "d/x.md", "d/y.md")


def test_each_plugin_json_refusal_is_said_once_with_the_value() -> None:
    assert _refused({"name": "p", "author": "me", "defaultEnabled": 1, "description": 3}) == [
        (TYPE, "plugin.json: description: expected a string, got 3"),
        (TYPE, "plugin.json: defaultEnabled: expected a boolean, got 1"),
        (TYPE, "plugin.json: author: expected an object {name, email, url}, got 'me'")]
    assert _refused({"name": "p", "author": {"name": 3, "email": 4}}) == [
        (TYPE, "plugin.json: author.name: expected a string, got 3"),
        (TYPE, "plugin.json: author.email: expected a string, got 4")]
    assert _refused({"name": "p", "author": {"name": " ", "url": "u"}}) == [
        (VALUE, "plugin.json: author.name: must not be empty")]
    assert _refused({"name": "p", "settings": {}}) == []
    assert _refused({"name": "p", "settings": [1]}) == [
        (TYPE, "plugin.json: settings: expected an object, got an array")]


def _parsed(document: object, fallback: dict[str, object] | None = None) -> tuple[
        list[tuple[str, str]], tuple[str, str | None, str, str] | None]:
    refusals, warnings = Findings(), Findings()
    manifest = parse_plugin_manifest(json.dumps(document).encode(), source="plugin.json",
                                     host="claude-code", refusals=refusals, warnings=warnings,
                                     fallback=fallback)
    return ([(f.code.name, f.message) for f in refusals],
            None if manifest is None else (manifest.name, manifest.version,
                                           manifest.version_from, manifest.named_from))


NAME_REFUSED = ("the host refuses an empty name or one holding a space or a control or "
                "bidirectional-formatting character")


@pytest.mark.parametrize(("document", "fallback", "expected"), [
    ([1], None, ([(TYPE, "plugin.json: expected an object, got an array")], None)),
    ({"name": "a"}, None, ([], ("a", None, "none", "plugin.json"))),
    ({"name": "a" * 64}, None, ([], ("a" * 64, None, "none", "plugin.json"))),
    ({"name": "a" * 65}, None, ([(VALUE, f"plugin.json: name {'a' * 65!r}: must be 1 to 64 "
                                         "characters")], None)),
    ({"name": ""}, None, ([(VALUE, f"plugin.json: name '': {NAME_REFUSED}")], None)),
    ({"name": "a\x01"}, None, ([(VALUE, f"plugin.json: name 'a\\x01': {NAME_REFUSED}")], None)),
    ({"name": "a/b"}, None, ([(VALUE, "plugin.json: name 'a/b': must be a single portable "
                                      "file name component")], None)),
    ({"name": ".."}, None, ([(VALUE, "plugin.json: name '..': must be a single portable file "
                                     "name component")], None)),
    ({"name": "p"}, {"version": "2.0.0"}, ([], ("p", "2.0.0", "marketplace", "plugin.json"))),
    ({"name": "p"}, {"version": 2}, ([], ("p", None, "none", "plugin.json"))),
    ({"name": "p", "version": None}, {"version": "2.0.0"},
     ([(TYPE, "plugin.json: version: expected a string, got null")], None)),
    ({"version": "1.0.0"}, {"name": "q"}, ([], ("q", "1.0.0", "plugin.json", "marketplace"))),
    ({"name": "p", "keywords": 3},
     None, ([(TYPE, "plugin.json: keywords: expected an array of strings, got 3")], None)),
])
def test_a_manifest_is_named_and_versioned_as_the_host_names_it(
        document: object, fallback: dict[str, object] | None,
        expected: tuple[list[tuple[str, str]], tuple[str, str | None, str, str] | None]) -> None:
    assert _parsed(document, fallback) == expected


def test_a_manifest_nests_at_most_32_deep() -> None:
    with pytest.raises(Refused) as caught:
        _parsed({"name": "p", "metadata": json.loads("[" * 32 + "]" * 32)})
    assert [(f.code.name, f.message) for f in caught.value.findings] == [
        ("json.too-deep", "plugin.json: nesting deeper than 32")]
    assert _parsed({"name": "p", "metadata": json.loads("[" * 31 + "]" * 31)})[0] == []


def test_a_manifest_takes_any_number_and_up_to_4_mib() -> None:
    assert _parsed({"name": "p", "metadata": [-1.5, 10**30]})[0] == []
    assert _parsed({"name": "p", "metadata": "x" * (2 << 20)})[0] == []  # over read_json's 1
    assert name_problem("a b") == "must be a single portable file name component"
