"""`--help` that reads well: every option taking a value shows a meaningful placeholder (never
argparse's upper-cased destination, such as PROBE_TIMEOUT), every default a user could rely on
is written in the help, and `doctor --version` (the plugin's version, easily read as the
global flag) is spelled `--installed-version`, the old spelling kept with a deprecation note."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.cli.main import COMMANDS, parser
from horon_bundle.cli.parsing import Parser
from tests.helpers import cli


def _commands() -> dict[str, argparse.ArgumentParser]:
    top = parser(None)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def _actions(command: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in command._actions if a.help is not argparse.SUPPRESS
            and not isinstance(a, argparse._HelpAction)]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_value_has_a_chosen_placeholder(name: str) -> None:
    for action in _actions(_commands()[name]):
        if action.nargs == 0:
            continue  # a flag takes no value
        assert action.metavar is not None or action.choices is not None, \
            f"{name} {action.option_strings or action.dest}: give it a metavar"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_default_is_in_the_help(name: str) -> None:
    for action in _actions(_commands()[name]):
        if action.default in (None, False, [], (), argparse.SUPPRESS) or action.nargs == 0:
            continue
        assert "default" in (action.help or ""), \
            f"{name} {action.option_strings}: default {action.default!r} is not shown"


def test_the_top_level_help_speaks_of_both_kinds() -> None:
    shown = cli("--help")
    assert shown.status == 0
    assert "native" in shown.stdout and "harness" in shown.stdout


def test_build_help_names_its_placeholders() -> None:
    shown = cli("build", "--help").stdout
    for placeholder in ("PREBUILT", "RECORD", "--builder-id BUILDER_ID", "PROBE_TIMEOUT"):
        assert placeholder not in shown  # argparse's upper-cased destinations
    assert "--prebuilt LIBRARY" in shown and "--record REC" in shown
    assert "(default 20)" in " ".join(shown.split())


def test_doctor_installed_version_and_its_old_spelling(tmp_path: object) -> None:
    shown = " ".join(cli("doctor", "--help").stdout.split())
    assert "--installed-version VERSION" in shown
    old = cli("doctor", "example", "--version", "0.1.0", "--home", f"{tmp_path}/none")
    new = cli("doctor", "example", "--installed-version", "0.1.0", "--home", f"{tmp_path}/none")
    assert old.codes == new.codes == ["install.not-installed"]
    assert "note: doctor --version is deprecated: use --installed-version" in old.stderr
    assert "deprecated" not in new.stderr


@pytest.mark.parametrize("name", list(COMMANDS))
def test_a_command_parsed_alone_helps_as_in_the_full_parser(name: str) -> None:
    """A command line naming a command gets that command's parser alone (start-up: the
    others are never made); its help, usage and options are the full parser's."""
    top = parser(name, alone=True)
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sub.choices) == [name]
    assert sub.choices[name].format_help() == _commands()[name].format_help()
    assert top.format_usage() == parser(None).format_usage()


def test_help_before_a_command_still_lists_every_command(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    made: list[str] = []
    original = Parser.__init__

    def counting(self: Parser, *args: Any, **kwargs: Any) -> None:
        made.append(str(kwargs.get("prog")))
        original(self, *args, **kwargs)

    monkeypatch.setattr(Parser, "__init__", counting)
    assert cli("list", "--home", tmp_path / "home").status == 0
    assert made == ["horon-bundle", "horon-bundle list"], "list made other commands' parsers"
    monkeypatch.undo()
    for helped in (cli("--help", "verify"), cli("--he", "verify"), cli("-h", "list")):
        assert helped.status == 0
        assert helped.stdout == cli("--help").stdout  # the top level's help, every command
    refused = cli("--", "verify", "x")  # anything before the command: the top level parses
    assert refused.status == 2 and all(repr(name) in refused.stderr for name in COMMANDS)
