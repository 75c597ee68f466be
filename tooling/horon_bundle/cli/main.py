"""`horon-bundle`: argument parsing, dispatch, and the one place refusals become exit codes.

Start-up stays cheap: `--version` imports nothing but this module, and a command's module
(with the stages it drives) is imported only when that command runs; `--help` names every
command from the table below without importing any of them.
"""

from __future__ import annotations

import argparse
import difflib
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from typing import Any, NoReturn

import horon_bundle
from horon_bundle.core.errors import EXIT_INTERNAL, EXIT_USAGE, Refused

PROG = "horon-bundle"
# name -> (module under horon_bundle.cli, one-line help), in the order `--help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "new": ("cmd_new", "start a plugin workspace from the shipped templates"),
    "build": ("cmd_build", "build and bundle a plugin"),
    "compile": ("cmd_compile", "build the library and write an artifact record"),
    "verify": ("cmd_verify", "verify a bundle directory or archive"),
    "doctor": ("cmd_doctor",
               "load a bundle's library in a child process and check the ABI contract"),
    "publish": ("cmd_publish", "publish a release's archives (gated by two variables)"),
    "yank": ("cmd_yank",
             "withdraw a published version (its bytes stay; it can never be reused)"),
    "sign": ("cmd_sign", "sign archives and artifact records with Sigstore (in CI)"),
    "reproduce": ("cmd_reproduce", "rebuild a bundle from source and compare it byte for byte"),
    "inspect": ("cmd_inspect", "show what a bundle holds: identity, graph, evidence, digests"),
    "install": ("cmd_install", "verify a bundle and install it into an agent home"),
    "list": ("cmd_list", "list the plugins installed in an agent home"),
    "enable": ("cmd_enable", "enable one installed version of a plugin"),
    "disable": ("cmd_disable", "disable a plugin (it stays installed)"),
    "status": ("cmd_status", "installed copies, the enabled one, and whether they verify"),
    "check": ("cmd_check", "re-verify an installed plugin before loading it"),
    "uninstall": ("cmd_uninstall", "remove an installed version from an agent home"),
    "fetch": ("cmd_fetch", "check a harness ref and unpack its zip into a new directory"),
    "codes": ("cmd_codes", "list every refusal code"),
    "profiles": ("cmd_profiles", "list the shipped harness host profiles (--host NAME@VERSION)"),
    "docs": ("cmd_docs", "print a page of the documentation shipped with horon-bundle"),
}


class _Parser(argparse.ArgumentParser):
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
    if _Parser.json_errors:
        render.print_json(render.refusal_document([finding], EXIT_USAGE))
    if parser is not None:
        parser.print_usage(sys.stderr)
    render.findings([finding])
    raise SystemExit(EXIT_USAGE)


def _nearest(word: str, choices: Sequence[str]) -> str | None:
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.5)
    return close[0] if close else None


def _suggestion(message: str) -> str:
    """A hint for argparse's message: the nearest option for an unknown one."""
    if message.startswith("unrecognized arguments:"):
        for word in message.split(":", 1)[1].split():
            nearest = _nearest(word.split("=", 1)[0], _Parser.options) if word.startswith(
                "-") else None
            if nearest:
                return f"Did you mean `{nearest}`?"
    return ""


def command_module(name: str) -> Any:
    return importlib.import_module(f"horon_bundle.cli.{COMMANDS[name][0]}")


def parser(chosen: str | None = None) -> argparse.ArgumentParser:
    """The parser; only `chosen`'s module is imported to add its options (None: every one,
    "": none)."""
    top = _Parser(prog=PROG,
                  description="Build, check, sign, publish and audit native plugin bundles.")
    top.add_argument("--version", action="version", version=f"{PROG} {horon_bundle.__version__}")
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                             parser_class=_Parser)
    for name, (_module, summary) in COMMANDS.items():
        command = sub.add_parser(name, help=summary)
        if chosen is None or name == chosen:
            command_module(name).configure(command)
            if name == chosen:
                _Parser.options = tuple(o for a in command._actions for o in a.option_strings)
    return top


def _chosen(argv: Sequence[str]) -> str | None:
    """The command the arguments name (the first word that is one), if any."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-"):
            return None
    return None


def _unknown_command(arguments: Sequence[str]) -> None:
    """A first word that names no command: say which, and the nearest one."""
    word = next((w for w in arguments if not w.startswith("-")), None)
    if word is None:
        return  # no command at all (or --help): argparse says what is missing
    nearest = _nearest(word, list(COMMANDS))
    usage_error(f"unknown command {word!r}",
                f"Did you mean `{PROG} {nearest}`?" if nearest else
                f"Commands: {', '.join(COMMANDS)}.", parser=parser(""))


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:
        sys.stdout.write(f"{PROG} {horon_bundle.__version__}\n")
        return 0
    _Parser.json_errors = "--json" in arguments
    chosen = _chosen(arguments)
    if chosen is None:
        _unknown_command(arguments)
    args = parser(chosen).parse_args(arguments)
    as_json = bool(getattr(args, "json", False))
    from horon_bundle.cli import render  # noqa: PLC0415 - after parsing: --help needs no rich

    try:
        status: int = args.run(args)
    except Refused as exc:
        if as_json:
            render.print_json(render.refusal_document(exc.findings, exc.exit_status))
        render.findings(exc.findings, subject=getattr(args, "subject", None))
        return exc.exit_status
    except KeyboardInterrupt:
        render.say("[bold red]interrupted[/]")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("HORON_DEBUG"):
            traceback.print_exc()
        render.say("[bold red]INTERNAL ERROR[/] {}: {}", type(exc).__name__, exc)
        render.say("  [dim]hint:[/] this is a horon-bundle bug; rerun with HORON_DEBUG=1 and "
                   "report the traceback")
        return EXIT_INTERNAL
    return status
