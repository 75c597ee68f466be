"""`horon-bundle uninstall`: remove an installed version (disabling it if it was enabled)."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.cmd_enable import show
from horon_bundle.cli.home_args import add_home_arguments, add_kind_argument, home_from_args
from horon_bundle.core import codes
from horon_bundle.core.errors import EXIT_OK, Refused
from horon_bundle.install.harness_survey import HARNESS, installed_kind
from horon_bundle.install.manage import uninstall, uninstall_harness


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Remove VERSION of ID from the agent home (one --target, or every "
                          "target); an enabled copy is disabled first. A harness bundle's "
                          "record and stored zip are removed.")
    parser.add_argument("plugin_id", metavar="ID", help="the installed plugin's id")
    parser.add_argument("version", metavar="VERSION", help="the installed version to remove")
    add_home_arguments(parser, writes=True, target="only this target (default: every one)")
    add_kind_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    if installed_kind(home, args.plugin_id, args.kind) == HARNESS:
        if args.target is not None:
            raise Refused.one(codes.HARNESS_UNSUPPORTED,
                              f"--target: {args.plugin_id} is a harness bundle (no targets)")
        change = uninstall_harness(home, args.plugin_id, args.version,
                                   lock_timeout=args.lock_timeout)
    else:
        change = uninstall(home, args.plugin_id, args.version, target=args.target,
                           lock_timeout=args.lock_timeout)
    show(change)
    if args.json:
        render.print_json(change.to_json())
    return EXIT_OK
