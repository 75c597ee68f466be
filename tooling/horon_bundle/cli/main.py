"""`horon-bundle`: dispatch, and the one place refusals become exit codes.

Start-up stays cheap: `--version` imports nothing but this module (not even argparse or
typing: the parser lives in `cli.parsing`), a command's module (with the stages it drives)
is imported only when that command runs, and `--help` names every command from the table
below without importing any of them (it is passed to `cli.parsing`, which builds the parser).
"""

from __future__ import annotations

import sys

import horon_bundle

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
    "log": ("cmd_log", "keep and check a store's transparency log (keygen, verify)"),
    "sign": ("cmd_sign", "sign archives, artifact records or a release statement (in CI)"),
    "statement": ("cmd_statement", "merge the release statements of a workflow run's jobs"),
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
    "completion": ("cmd_completion", "print a shell completion script (bash, zsh, tcsh)"),
}

TYPE_CHECKING = False  # typing itself is not imported at run time (start-up)
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, NoReturn

    from horon_bundle.core.errors import Refused

__all__ = ["COMMANDS", "PROG", "command_module", "main", "parser", "usage_error"]


def usage_error(message: str, hint: str = "", *,
                parser: argparse.ArgumentParser | None = None) -> NoReturn:
    """A malformed command line: exit 2, as `ERROR usage.invalid` (`cli.parsing`)."""
    from horon_bundle.cli import parsing  # noqa: PLC0415 - start-up: see the module docstring

    parsing.usage_error(message, hint, parser=parser)


def command_module(name: str) -> Any:
    from horon_bundle.cli import parsing  # noqa: PLC0415

    return parsing.command_module(COMMANDS[name][0])


def parser(chosen: str | None = None, *, alone: bool = False) -> argparse.ArgumentParser:
    """The parser; only `chosen`'s module is imported to add its options (None: every one,
    "": none); `alone`: no other command's parser is made (`cli.parsing.parser`)."""
    from horon_bundle.cli import parsing  # noqa: PLC0415

    return parsing.parser(COMMANDS, PROG, chosen, alone=alone)


def _chosen(argv: Sequence[str]) -> str | None:
    """The command the arguments name (the first word that is one), if any."""
    for word in argv:
        if word in COMMANDS:
            return word
        if not word.startswith("-"):
            return None
    return None


def _alone(argv: Sequence[str], chosen: str) -> bool:
    """Whether the chosen command's parser alone parses `argv`: when the command is the first
    word. Anything before it (--help, --version, `--`, an unknown option) goes to the top
    level, whose help and errors may list every command."""
    return bool(argv) and argv[0] == chosen


def _unknown_command(arguments: Sequence[str]) -> None:
    """A first word that names no command: say which, and the nearest one."""
    word = next((w for w in arguments if not w.startswith("-")), None)
    if word is None:
        return  # no command at all (or --help): argparse says what is missing
    from horon_bundle.cli.parsing import nearest  # noqa: PLC0415

    close = nearest(word, list(COMMANDS))
    usage_error(f"unknown command {word!r}",
                f"Did you mean `{PROG} {close}`?" if close else
                f"Commands: {', '.join(COMMANDS)}.", parser=parser(""))


def _cwd_gone() -> bool:
    """Whether the current directory was removed (every relative path then fails)."""
    import os  # noqa: PLC0415 - start-up: see the module docstring

    try:
        os.getcwd()  # noqa: PTH109 - the call that fails, rather than Path.cwd() around it
    except FileNotFoundError:
        return True
    return False


def _refused(exc: Refused, args: argparse.Namespace, as_json: bool) -> int:
    from horon_bundle.cli import render  # noqa: PLC0415 - after parsing, as in main

    if as_json:
        render.print_json(render.refusal_document(exc.findings, exc.exit_status))
    render.findings(exc.findings, subject=getattr(args, "subject", None))
    return exc.exit_status


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments == ["--version"]:
        sys.stdout.write(f"{PROG} {horon_bundle.__version__}\n")
        return 0
    from horon_bundle.cli.parsing import Parser  # noqa: PLC0415 - not for --version
    from horon_bundle.core.errors import EXIT_INTERNAL, Refused  # noqa: PLC0415

    Parser.json_errors = "--json" in arguments
    chosen = _chosen(arguments)
    if chosen is None:
        _unknown_command(arguments)
    # top-level --help: no command loaded; a command named: its parser alone (start-up)
    args = parser(chosen or "", alone=bool(chosen) and _alone(arguments, chosen or "")
                  ).parse_args(arguments)
    as_json = bool(getattr(args, "json", False))
    from horon_bundle.cli import render  # noqa: PLC0415 - after parsing: --help needs no rich

    render.json_run = as_json
    try:
        status: int = args.run(args)
    except Refused as exc:
        return _refused(exc, args, as_json)
    except KeyboardInterrupt:
        render.say("[bold red]interrupted[/]")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        import os  # noqa: PLC0415
        import traceback  # noqa: PLC0415

        if isinstance(exc, FileNotFoundError) and _cwd_gone():
            from horon_bundle.core import codes  # noqa: PLC0415 - only on this path

            return _refused(Refused.one(codes.ENVIRONMENT_CWD, "the current directory no "
                                                               "longer exists"), args, as_json)
        if os.environ.get("HORON_DEBUG"):
            traceback.print_exc()
        render.say("[bold red]INTERNAL ERROR[/] {}: {}", type(exc).__name__, exc)
        render.say("  [dim]hint:[/] this is a horon-bundle bug; rerun with HORON_DEBUG=1 and "
                   "report the traceback")
        return EXIT_INTERNAL
    return status
