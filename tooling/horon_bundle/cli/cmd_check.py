"""`horon-bundle check`: what a host runs before each load of a plugin."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.home_args import add_home_arguments, home_from_args, target_from_args
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.install.survey import check


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Re-verify the enabled version of ID (or VERSION) for this host's target: every file "
        "against the installed plugin.json and SHA256SUMS, nothing missing or added, and the "
        "whole equal to what state.json recorded at install. Exit 0, or a refusal. Reads only."
    )
    parser.add_argument("plugin_id", metavar="ID", help="the installed plugin's id")
    parser.add_argument("version", nargs="?", metavar="VERSION",
                        help="check this version (default: the enabled one)")
    add_home_arguments(parser, target="the target (default: this host's)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    result = check(home, args.plugin_id, target=target_from_args(args), version=args.version)
    state = "enabled" if result.enabled else "not enabled"
    render.say("[bold green]ok[/] {} {} {} ({}) verifies as installed", result.plugin_id,
               result.version, result.target, state)
    if args.json:
        render.print_json(result.to_json())
    return EXIT_OK
