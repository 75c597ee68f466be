"""No input can forge output: whatever a path, id, file name or message holds, the CLI's
lines stay its own — no value starts a line (`ERROR fake.code: …`), moves the cursor or
changes colours (an escape sequence), writes a GitHub Actions command (`::error …`), or reads
differently from how it is stored (a bidirectional override).

The class is closed at its root, `cli/render.py:say`, which escapes every value; the first
test below keeps every command printing through it.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from tests.conftest import BuiltExample
from tests.helpers import REPO, TEMPLATE, CliResult, cli, copy_workspace

CLI = REPO / "tooling" / "horon_bundle" / "cli"
FORGERIES = [
    "x\nERROR fake.code: forged",
    "x\r\nERROR fake.code: forged",
    "x\x1b[2K\x1b[1GERROR fake.code: forged",
    "x\u2028ERROR fake.code: forged",
    "x\x85ERROR fake.code: forged",
    "x\n::error file=a,line=1::forged",
    "x\u202eforged\u202c",
    "x\x9b31mforged",
    "x[bold red]ERROR[/] :warning: forged",
]
EVERY_FORGERY = "".join(FORGERIES)  # one value holding every vector at once
_WRITERS = {"render.py", "github.py"}  # the funnel itself


def _call_name(node: ast.Call) -> str:
    func = node.func
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if isinstance(func, ast.Name):
        parts.append(func.id)
    return ".".join(reversed(parts))


def _literal_markup(node: ast.expr) -> bool:
    """A markup argument built from literals (and the constant marks), never from values."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _literal_markup(node.left) and _literal_markup(node.right)
    if isinstance(node, ast.IfExp):
        return _literal_markup(node.body) and _literal_markup(node.orelse)
    return isinstance(node, ast.Name)  # a mark chosen from a table of literals


def test_every_command_prints_through_the_escaping_funnel() -> None:
    for module in sorted(CLI.glob("*.py")):
        tree = ast.parse(module.read_text(), filename=str(module))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            name = _call_name(node)
            where = f"{module.name}:{node.lineno}"
            if module.name not in _WRITERS:
                assert not name.endswith(("stderr.print", "stderr.write", "status.update")), \
                    f"{where}: print through render.say, which escapes every value"
                if name == "print":
                    assert module.name == "cmd_codes.py", where  # the generated Markdown page
                if name.endswith("stdout.write"):
                    # cmd_log.py: a verifier key and a checkpoint, kept from stdout by the user
                    assert module.name in ("main.py", "cmd_docs.py", "cmd_profiles.py",
                                           "cmd_log.py", "cmd_completion.py"), where
            if name in ("render.say", "say", "render.result", "result"):
                assert node.args and _literal_markup(node.args[0]), \
                    f"{where}: the markup must be a literal; pass values as arguments"


def _assert_unforged(result: CliResult) -> None:
    """Neither stream (results on stdout, diagnostics on stderr) holds a forged line."""
    assert "Traceback" not in result.stderr
    both = result.stdout + result.stderr
    for line in both.splitlines():
        assert not line.startswith(("ERROR fake", "::")), line
        assert not line.lstrip("\x1b[0123456789;mK").startswith("ERROR fake"), line
    for bad in ("\x1b", "\r", "\u2028", "\u2029", "\x85", "\x9b", "\u202e", "\u202c"):
        assert bad not in both, repr(bad)
    assert "fake.code" not in result.codes
    assert "⚠" not in both  # :warning: stays text (no emoji codes)


@pytest.mark.parametrize("forgery", FORGERIES)
def test_each_forgery_is_escaped(tmp_path: Path, forgery: str,
                                 example_release: BuiltExample) -> None:
    bundle = tmp_path / f"bundle-{forgery}"
    shutil.copytree(example_release.bundle, bundle)
    for result in (cli("verify", tmp_path / forgery), cli("inspect", bundle)):
        _assert_unforged(result)


def test_no_command_can_be_made_to_forge_output(tmp_path: Path,
                                                example_release: BuiltExample) -> None:
    forgery = EVERY_FORGERY
    hostile = tmp_path / forgery
    bundle = tmp_path / f"bundle-{forgery}"
    shutil.copytree(example_release.bundle, bundle)
    runs = [
        cli("verify", hostile),
        cli("verify", bundle, "--json"),
        cli("inspect", bundle),
        cli("inspect", hostile, "--json"),
        cli("doctor", hostile),
        cli("build", hostile, "--out", tmp_path / "out"),
        cli("compile", hostile),
        cli("publish", hostile, env={"HORON_PUBLISH_ENABLED": "true",
                                     "HORON_PUBLISH_DESTINATION": (tmp_path / "s").as_uri()}),
        cli("reproduce", hostile, "--source", hostile),
        cli("sign", hostile),
        cli("new", forgery),
        cli("new", "acme-notes", "--dir", hostile / "deeper", "--no-git"),
        cli("docs", forgery),
        cli(forgery),
        cli("verify", bundle, "--policy", hostile),
    ]
    for result in runs:
        _assert_unforged(result)
    assert runs[1].status == 0
    assert runs[1].json()["path"] == str(bundle)  # the value itself, intact, as data


def test_hostile_names_inside_a_bundle_cannot_forge_output(tmp_path: Path,
                                                           example_release: BuiltExample
                                                           ) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(example_release.bundle, bundle)
    (bundle / "lib" / EVERY_FORGERY.replace("/", "_")).write_bytes(b"smuggled")
    for command in ("verify", "inspect"):
        result = cli(command, bundle)
        assert result.status == 1
        _assert_unforged(result)
        assert "layout.undeclared" in result.codes or "checksum.unlisted" in result.codes, \
            result.codes


def test_annotations_cannot_be_forged_either(tmp_path: Path) -> None:
    hostile = tmp_path / "x\n::error file=a,line=1::forged%0A::warning::y"
    result = cli("verify", hostile, env={"GITHUB_ACTIONS": "true"})
    assert result.status == 1
    commands = [line for line in result.stderr.splitlines() if line.startswith("::")]
    assert len(commands) == 1 and commands[0].startswith("::error file=")
    assert ",title=input.unreadable::" in commands[0]
    assert "%250A" in commands[0] and "\\x0a" in commands[0]


@pytest.mark.slow
def test_notes_and_steps_are_escaped_too(tmp_path: Path, cargo_target_dir: Path) -> None:
    """A workspace whose path holds a forged line: the note naming it and the bundle and
    archive lines stay one line each."""
    workspace = copy_workspace(TEMPLATE, tmp_path / FORGERIES[0] / "plugin")
    result = cli("build", "--out", tmp_path / "out" / FORGERIES[2], "--target-dir",
                 cargo_target_dir, cwd=workspace / "src")
    assert result.status == 0, result.stderr
    _assert_unforged(result)
    assert "note: using the plugin workspace " in result.stderr
    assert "\\x0aERROR fake.code: forged/plugin" in result.stderr
