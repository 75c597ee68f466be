"""The argument parser: the command table's parsers, usage errors and "did you mean".

Imported by `cli.main` once it is clear that arguments must be parsed (never for
`--version`); it imports only the chosen command's module.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

import horon_bundle
from horon_bundle.core.errors import EXIT_USAGE


class Parser(argparse.ArgumentParser):
    json_errors = False  # set by `main` when the arguments ask for --json
    options: tuple[str, ...] = ()  # the chosen command's options, for "did you mean"

    def error(self, message: str) -> NoReturn:
        usage_error(message, _suggestion(message), parser=self)


def usage_error(message: str, hint: str = "", *,
                parser: argparse.ArgumentParser | None = None) -> NoReturn:
    """A malformed command line: exit 2, as `ERROR usage.invalid` (and, under --json, as the
    one JSON document on stdout)."""
    from horon_bundle.cli import render  # noqa: PLC0415 - rich only when something is shown
    from horon_bundle.core import codes  # noqa: PLC0415
    from horon_bundle.core.errors import Finding  # noqa: PLC0415

    finding = Finding(codes.USAGE_INVALID, message, hint)
    if Parser.json_errors:
        render.print_json(render.refusal_document([finding], EXIT_USAGE))
    if parser is not None:
        parser.print_usage(sys.stderr)
    render.findings([finding])
    raise SystemExit(EXIT_USAGE)


def nearest(word: str, choices: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return close[0] if close else None


def _suggestion(message: str) -> str:
    """A hint for argparse's message: the nearest option for an unknown one."""
    if message.startswith("unrecognized arguments:"):
        for word in message.split(":", 1)[1].split():
            close = nearest(word.split("=", 1)[0], Parser.options) if word.startswith(
                "-") else None
            if close:
                return f"Did you mean `{close}`?"
    return ""


def command_module(module: str) -> Any:
    return importlib.import_module(f"horon_bundle.cli.{module}")


def parser(commands: dict[str, tuple[str, str]], prog: str,
           chosen: str | None = None) -> argparse.ArgumentParser:
    """The parser of `commands` (`cli.main.COMMANDS`, passed in: this module never imports
    `cli.main`); only `chosen`'s module is imported to add its options (None: every one,
    "": none)."""
    top = Parser(prog=prog,
                  description="Build, check, sign, publish, install and audit plugin "
                              "bundles: native (a Rust library behind the horon ABI) and "
                              "harness (Claude Code and Muse Code plugins and marketplaces).")
    top.add_argument("--version", action="version", version=f"{prog} {horon_bundle.__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                             parser_class=Parser)
    for name, (module, summary) in commands.items():
        command = sub.add_parser(name, help=summary)
        if chosen is None or name == chosen:
            command_module(module).configure(command)
            if name == chosen:
                Parser.options = tuple(o for a in command._actions for o in a.option_strings)
    return top
