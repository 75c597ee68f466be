"""Output that helps: one line per problem with its code and hint, "did you mean" for keys,
commands and options, `--json` answers usage errors too, colour only where it belongs, and
GitHub Actions annotations and step summaries only under GitHub Actions."""

from __future__ import annotations

import argparse
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from horon_bundle.cli.main import COMMANDS, parser
from tests.conftest import BuiltExample
from tests.helpers import (
    HOST,
    REPO,
    TEMPLATE,
    assert_refused,
    cli,
    copy_workspace,
    in_process,
    tree_snapshot,
)

ESCAPE = "\x1b"


def _declaration_with(tmp_path: Path, old: str, new: str) -> Path:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    declaration = workspace / "horon-release.toml"
    text = declaration.read_text()
    assert old in text
    declaration.write_text(text.replace(old, new))
    return workspace


def test_a_typod_key_gets_the_nearest_known_key(tmp_path: Path) -> None:
    workspace = _declaration_with(tmp_path, "qa-features =", "qa-feature =")
    out = tmp_path / "out"
    result = cli("build", workspace, "--out", out)
    assert_refused(result, "declaration.unknown-key")
    lines = result.stderr.splitlines()
    at = lines.index("ERROR declaration.unknown-key: horon-release.toml: plugin[0].qa-feature: "
                     "unknown key")
    assert lines[at + 1] == ("  hint: Did you mean `qa-features`? An unknown key is refused, "
                             "never ignored.")
    assert tree_snapshot(out) == {}


def test_a_key_in_the_wrong_table_is_named_where_it_belongs(tmp_path: Path) -> None:
    workspace = _declaration_with(tmp_path, 'destination = "unconfigured"',
                                  'destination = "unconfigured"\nprofile = "release"')
    result = cli("build", workspace, "--out", tmp_path / "out")
    assert_refused(result, "declaration.unknown-key")
    assert "hint: Did you mean `plugin.profile`? `profile` belongs in `plugin`." in result.stderr


def test_unknown_commands_and_options_get_a_suggestion() -> None:
    command = cli("bild")
    assert command.status == 2
    assert "ERROR usage.invalid: unknown command 'bild'" in command.stderr
    assert "hint: Did you mean `horon-bundle build`?" in command.stderr
    option = cli("verify", "x.zip", "--polcy", "p.toml")
    assert option.status == 2
    assert "hint: Did you mean `--policy`?" in option.stderr


@pytest.mark.parametrize("args", [["bild", "--json"], ["verify", "--json"],
                                  ["build", "--json", "--channel", "beta"],
                                  ["doctor", "x", "--json", "--timeout", "nan"]])
def test_json_answers_usage_errors_too(args: list[str]) -> None:
    result = cli(*args)
    assert result.status == 2
    document = result.json()  # exactly one JSON document on stdout
    assert document["ok"] is False and document["exit_status"] == 2
    assert [f["code"] for f in document["findings"]] == ["usage.invalid"]
    assert "Traceback" not in result.stderr


def test_version_names_the_tool() -> None:
    for args in (["--version"], ["--version", "build"]):
        result = cli(*args)
        assert (result.status, result.stdout) == (0, "horon-bundle 0.1.0\n")


def _actions(name: str) -> list[argparse.Action]:
    top = parser(name)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return [a for a in sub.choices[name]._actions if not isinstance(a, argparse._HelpAction)]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_option_of_every_command_has_help(name: str) -> None:
    for action in _actions(name):
        assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)


@pytest.mark.slow
def test_plural_is_spelled_right(example_release: BuiltExample, tmp_path: Path,
                                 cargo_target_dir: Path) -> None:
    result = cli("build", TEMPLATE, "--out", tmp_path / "out", "--target-dir", cargo_target_dir)
    assert result.status == 0, result.stderr
    assert "judging the resolved graph (1 package)" in result.stderr
    assert "1 packages" not in result.stderr


@pytest.mark.slow
def test_no_color_means_no_escape_codes(example_release: BuiltExample, tmp_path: Path,
                                        cargo_target_dir: Path) -> None:
    """FORCE_COLOR makes rich treat the pipe as a terminal (colour, bold, the spinner);
    NO_COLOR takes all of them away again."""
    archive = example_release.archive
    coloured = cli("verify", archive, env={"FORCE_COLOR": "1"})
    assert coloured.status == 0 and ESCAPE in coloured.stdout  # the report, on stdout
    plain = cli("verify", archive, env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert plain.status == 0 and ESCAPE not in plain.stdout + plain.stderr
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured.stdout) == plain.stdout
    built = cli("build", TEMPLATE, "--out", tmp_path / "out", "--target-dir", cargo_target_dir,
                env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert built.status == 0, built.stderr
    assert ESCAPE not in built.stderr + built.stdout  # no bold, no colour, no spinner frames
    refused = cli("verify", tmp_path / "nothing.zip", env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert refused.status == 1 and ESCAPE not in refused.stderr


def test_annotations_only_under_github_actions(tmp_path: Path) -> None:
    workspace = _declaration_with(tmp_path, "qa-features =", "qa-feature =")
    local = cli("build", workspace, "--out", tmp_path / "out")
    assert local.status == 1 and "::error" not in local.stderr + local.stdout
    ci = cli("build", workspace, "--out", tmp_path / "out", "--json",
             env={"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path)})
    assert ci.status == 1
    annotations = [line for line in ci.stderr.splitlines() if line.startswith("::")]
    line = (workspace / "horon-release.toml").read_text().splitlines().index(
        'qa-feature = ["qa-provider"]') + 1
    assert annotations == [
        f"::error file=plugin/horon-release.toml,line={line},title=declaration.unknown-key::"
        "horon-release.toml: plugin[0].qa-feature: unknown key (hint: Did you mean "
        "`qa-features`? An unknown key is refused, never ignored.)"]
    assert ci.json()["findings"][0]["line"] == line  # stdout is still one JSON document


@pytest.mark.slow
def test_step_summary_lists_bundles_digests_and_checks(example_release: BuiltExample,
                                                       tmp_path: Path,
                                                       cargo_target_dir: Path) -> None:
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    built = cli("build", TEMPLATE, "--out", tmp_path / "out", "--target-dir", cargo_target_dir,
                env=env)
    assert built.status == 0, built.stderr
    archive = tmp_path / "out" / f"example-0.1.0-{HOST}.zip"
    digest = (tmp_path / "out" / f"{archive.name}.sha256").read_text().split()[0]
    verified = cli("verify", archive, env=env)
    assert verified.status == 0
    text = summary.read_text()
    assert "### horon-bundle build" in text and "### horon-bundle verify" in text
    assert f"| example 0.1.0 {HOST} | release | clock, greeting | {digest} |" in text
    assert f"| {archive} | verified |" in text
    outside = cli("verify", archive, env={"GITHUB_STEP_SUMMARY": str(tmp_path / "no.md")})
    assert outside.status == 0 and not (tmp_path / "no.md").exists()


def test_summary_cells_cannot_break_the_table(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    evil = tmp_path / "a|b<img src=x>`\nERROR fake.zip"
    result = cli("verify", evil, env={"GITHUB_ACTIONS": "true",
                                      "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.status == 1
    row = next(line for line in summary.read_text().splitlines() if "refused" in line)
    assert "<img" not in row and "a\\|b&lt;img src=x&gt;'\\x0aERROR fake.zip" in row
    assert row.count(" | ") == 4  # five cells, none split


@pytest.mark.slow
def test_readme_sample_output_is_the_real_one(tmp_path: Path, cargo_target_dir: Path) -> None:
    """The README shows what `nox -s bundle` prints; `…` stands for the archive digest (or
    the 12 hex digits naming the release statement)."""
    readme = (REPO / "README.md").read_text()
    sample = readme.split("<!-- sample: nox -s bundle -->\n```\n", 1)[1].split("```", 1)[0]
    workspace = copy_workspace(TEMPLATE, tmp_path / "templates" / "plugin")
    result = cli("build", workspace.relative_to(tmp_path), "--out", "dist", "--target-dir",
                 cargo_target_dir, cwd=tmp_path)
    assert result.status == 0, result.stderr
    shown = sample.strip("\n").splitlines()
    real = (result.stderr + result.stdout).strip("\n").splitlines()  # progress, then results
    assert len(shown) == len(real), (shown, real)
    for want, got in zip(shown, real, strict=True):
        pattern = re.escape(want).replace("…", "[0-9a-f]{12}(?:[0-9a-f]{52})?")
        assert re.fullmatch(pattern, got), (want, got)


def test_refusals_are_one_line_each_with_code_and_hint(tmp_path: Path) -> None:
    workspace = _declaration_with(tmp_path, 'profile = "release"',
                                  'profile = "release\\nERROR fake.code: forged"\nprofil = 1')
    result = cli("build", workspace, "--out", tmp_path / "out", "--json")
    assert result.status == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("ERROR ")]
    hints = [line for line in result.stderr.splitlines() if line.startswith("  hint: ")]
    assert len(errors) == len(hints) == len(result.json()["findings"]) == 2
    assert all(re.match(r"ERROR [a-z]+\.[a-z0-9.-]+: horon-release\.toml: ", e) for e in errors)
    assert "fake.code" not in result.codes
    assert json.dumps(result.json()).count("fake.code") == 1  # the value, as data


@pytest.mark.slow
@pytest.mark.process
def test_a_removed_current_directory_is_an_environment_refusal(tmp_path: Path) -> None:
    """Run from a directory removed meanwhile, every relative path fails in getcwd(): that
    was INTERNAL ERROR FileNotFoundError (exit 4) from list, install and build."""
    gone = tmp_path / "gone"
    gone.mkdir()
    for args in (["list", "--home", "rel"], ["build"], ["install", "x.zip", "--home", "rel",
                                                          "--json"]):
        script = (f"cd {shlex.quote(str(gone))} && rmdir {shlex.quote(str(gone))} && exec "
                  f"{shlex.quote(sys.executable)} -m horon_bundle {shlex.join(args)}")
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                              check=False, timeout=120)
        assert done.returncode == 3, (args, done.stderr)
        code = "environment.cwd"
        assert f"ERROR {code}: the current directory no longer exists" in done.stderr
        assert "INTERNAL ERROR" not in done.stderr and "Traceback" not in done.stderr
        gone.mkdir()
    assert not (tmp_path / "rel").exists()


def _say_literals() -> list[str]:
    """Every markup literal `cli/` passes to `say` or `result` (the first argument of each
    call)."""
    import ast  # noqa: PLC0415

    found: list[str] = []
    for source in sorted((REPO / "tooling" / "horon_bundle" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            if (isinstance(node, ast.Call) and node.args
                    and getattr(node.func, "id", getattr(node.func, "attr", ""))
                    in ("say", "result")
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)):
                found.append(node.args[0].value)
    return found


@pytest.mark.parametrize("markup", [*_say_literals(), r"a \[b] [bold]c[/] \\[red]d[/red]",
                                    "[link=https://x.example]e[/link] [#ff0000]f[/]"])
def test_plain_output_is_what_rich_shows_without_styles(markup: str) -> None:
    """Off a terminal rich is not imported: the markup's tags are dropped by `strip_markup`,
    which must give exactly the text rich would print without colour."""
    import io  # noqa: PLC0415

    from rich.console import Console  # noqa: PLC0415

    from horon_bundle.cli.render import strip_markup  # noqa: PLC0415

    buffer = io.StringIO()
    Console(file=buffer, color_system=None, highlight=False, soft_wrap=True, emoji=False,
            width=10_000).print(markup)
    assert strip_markup(markup) + "\n" == buffer.getvalue()


def test_there_are_say_literals_to_compare() -> None:
    assert len(_say_literals()) > 20


def _path_arguments() -> list[tuple[str, argparse.Action]]:
    """Every (command, argument) whose value names a file or directory."""
    from horon_bundle.cli.argtypes import named_path  # noqa: PLC0415

    found: list[tuple[str, argparse.Action]] = []
    top = parser()
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, command in action.choices.items():
                for argument in command._actions:
                    assert argument.type is not Path, (name, argument.dest)  # use named_path
                    if argument.type is named_path:
                        found.append((name, argument))
    return found


def _argv_with_empty(command: str, chosen: argparse.Action) -> list[str]:
    """`command` with `chosen` given "" and every other required argument a plain name."""
    top = parser(command)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    argv = [command]
    for argument in sub.choices[command]._actions:
        value = "" if argument.dest == chosen.dest else "x"
        if argument.option_strings:
            if argument is chosen or argument.dest == chosen.dest or argument.required:
                argv += [argument.option_strings[0], value]
        elif argument.dest == chosen.dest or argument.nargs not in ("?", "*"):
            argv.append(value)
    return argv


def test_an_empty_path_is_a_usage_error_for_every_path_argument(tmp_path: Path) -> None:
    """`--out ""` (an unset variable in a script) is Path(""), the current directory: build
    would write its bundle there, install would read it as the bundle. Every path argument
    of every command refuses it before anything is read or written."""
    arguments = _path_arguments()
    named = {(command, a.dest) for command, a in arguments}
    assert {("build", "out"), ("verify", "paths"), ("install", "home"), ("fetch", "into"),
            ("verify", "trust_root"), ("publish", "dist_dir")} <= named, named
    work = tmp_path / "work"
    work.mkdir()
    for command, argument in arguments:
        argv = _argv_with_empty(command, argument)
        # in this process: a usage error ends in the parser, as in a child (the harness test
        # keeps the two equal), and 40-odd child processes would cost 15 s
        result = in_process(*argv, cwd=work, env={"HORON_AGENT_HOME": str(tmp_path / "home")})
        assert_refused(result, "usage.invalid", status=2)
        assert "an empty path" in result.stderr, (argv, result.stderr)
        assert not any(work.iterdir()), argv
        assert not (tmp_path / "home").exists(), argv
