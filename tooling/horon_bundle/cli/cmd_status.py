"""`horon-bundle status`: installed versions and targets, the enabled one, and (--verify)
whether the installed bytes still verify."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.cmd_list import show
from horon_bundle.cli.home_args import add_home_arguments, home_from_args
from horon_bundle.install.survey import survey


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Show every installed copy (or those of ID): version, target, enabled or not, when "
        "and from what it was installed, and whether the copy on disk is recorded. With "
        "--verify, re-hash each copy against its plugin.json and SHA256SUMS and the digest "
        "recorded at install (exit 1 when one does not verify). Reads only."
    )
    parser.add_argument("plugin_id", nargs="?", metavar="ID",
                        help="one installed plugin (default: every one)")
    parser.add_argument("--verify", action="store_true",
                        help="re-verify every installed copy")
    add_home_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    result = survey(home, plugin_id=args.plugin_id, verify=args.verify)
    show(result, details=True)
    if args.json:
        render.print_json(result.to_json())
    return result.exit_status
