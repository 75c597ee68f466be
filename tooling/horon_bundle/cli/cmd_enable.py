"""`horon-bundle enable`: make one installed version of a plugin the enabled one."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.home_args import add_home_arguments, home_from_args, target_from_args
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.install.manage import Change, enable
from horon_bundle.model.bundle_kind import BundleKind


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Enable VERSION of ID (default: the highest installed) for the target, replacing the "
        "version enabled before: at most one is. The copy is verified first."
    )
    parser.add_argument("plugin_id", metavar="ID", help="the installed plugin's id")
    parser.add_argument("version", nargs="?", metavar="VERSION",
                        help="the installed version to enable (default: the highest)")
    add_home_arguments(parser, writes=True, target="the target (default: this host's)")
    parser.set_defaults(run=run)


def show(change: Change) -> None:
    what = " ".join(filter(None, (change.plugin_id, change.version)))
    where = ", ".join(change.targets) or ("harness" if change.kind == BundleKind.HARNESS
                                          else "any target")
    render.result("[bold green]{}[/] {} ({})" + ("" if change.wrote else "; nothing written"),
               change.status.replace("-", " "), what, where)
    for note in change.notes:
        render.say("[yellow]note:[/] {}", note)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    change = enable(home, args.plugin_id, target=target_from_args(args), version=args.version,
                    lock_timeout=args.lock_timeout)
    show(change)
    if args.json:
        render.print_json(change.to_json())
    return EXIT_OK
