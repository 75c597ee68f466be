"""The argument parser: the command table's parsers, usage errors and "did you mean".

Imported by `cli.main` once it is clear that arguments must be parsed (never for
`--version`); it imports only the chosen command's module.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

import horon_bundle
from horon_bundle.core.errors import EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any, NoReturn


def _columns() -> int:
    """`shutil.get_terminal_size().columns`, as it finds them (COLUMNS, else the terminal
    of sys.__stdout__, else 80), without importing shutil (and with it bz2 and lzma)."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns > 0:
        return columns
    try:
        size = os.get_terminal_size(sys.__stdout__.fileno())  # type: ignore[union-attr]
    except (AttributeError, ValueError, OSError):
        return 80
    return size.columns or 80


class Formatter(argparse.HelpFormatter):
    """argparse's formatter, its default width found without shutil: argparse makes one for
    every argument it adds (to check the metavar), so this runs on every start (start-up)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position,
                         _columns() - 2 if width is None else width)


class Parser(argparse.ArgumentParser):
    json_errors = False  # set by `main` when the arguments ask for --json
    options: tuple[str, ...] = ()  # the chosen command's options, for "did you mean"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

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
    import difflib  # noqa: PLC0415 - only for a mistyped word (start-up)

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
           chosen: str | None = None, *, alone: bool = False) -> argparse.ArgumentParser:
    """The parser of `commands` (`cli.main.COMMANDS`, passed in: this module never imports
    `cli.main`); only `chosen`'s module is imported to add its options (None: every one,
    "": none). `alone`: `chosen`'s parser is the only one made — what parsing a command
    line that names it needs, when nothing will print the list of commands (start-up:
    argparse makes each parser with its help action, about as much as a dataclass)."""
    top = Parser(prog=prog,
                  description="Build, check, sign, publish, install and audit plugin "
                              "bundles: native (a Rust library behind the horon ABI) and "
                              "harness (Claude Code and Muse Code plugins and marketplaces).")
    top.add_argument("--version", action="version", version=f"{prog} {horon_bundle.__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                             parser_class=Parser)
    for name, (module, summary) in commands.items():
        if alone and name != chosen:
            continue
        command = sub.add_parser(name, help=summary)
        if chosen is None or name == chosen:
            command_module(module).configure(command)
            if name == chosen:
                Parser.options = tuple(o for a in command._actions for o in a.option_strings)
    return top
