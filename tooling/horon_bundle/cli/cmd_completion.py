"""`horon-bundle completion SHELL`: the shell completion script, generated from the argument
parser itself by shtab (every command, option and choice, as `--help` shows them)."""

from __future__ import annotations

import argparse
import sys

from horon_bundle.core.errors import EXIT_OK

SHELLS = ("bash", "zsh", "tcsh")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Print a completion script for SHELL on stdout. Install it once, e.g. for bash: "
        "`horon-bundle completion bash > ~/.local/share/bash-completion/completions/"
        "horon-bundle`; for zsh: `horon-bundle completion zsh > ~/.zfunc/_horon-bundle` (with "
        "~/.zfunc in fpath); for tcsh: `horon-bundle completion tcsh > ~/.horon-bundle.tcsh` "
        "and `source` it from ~/.tcshrc. See `horon-bundle docs getting-started`."
    )
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL",
                        help="bash, zsh or tcsh")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    import shtab  # noqa: PLC0415 - only for this command

    from horon_bundle.cli.main import parser  # noqa: PLC0415 - every command's options

    script = shtab.complete(parser(None), shell=args.shell)
    sys.stdout.write(script if script.endswith("\n") else script + "\n")
    return EXIT_OK
