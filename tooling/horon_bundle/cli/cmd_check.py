"""`horon-bundle check`: what a host runs before each load of a plugin."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.home_args import (
    add_home_arguments,
    add_kind_argument,
    home_from_args,
    names_harness,
    target_from_args,
)
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.install.harness_survey import check_harness
from horon_bundle.install.survey import check


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Re-verify the enabled version of ID (or VERSION) for this host's target: every file "
        "against the installed plugin.json and SHA256SUMS, nothing missing or added, and the "
        "whole equal to what state.json recorded at install. For a harness bundle NAME: its "
        "stored zip's digest, every harness rule, and its catalogue against state.json "
        "(VERSION needed when several are installed). Exit 0, or a refusal. Reads only."
    )
    parser.add_argument("plugin_id", metavar="ID", help="the installed plugin's id")
    parser.add_argument("version", nargs="?", metavar="VERSION",
                        help="check this version (default: the enabled one)")
    add_home_arguments(parser, target="the target (default: this host's)")
    add_kind_argument(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    if names_harness(home, args):
        checked = check_harness(home, args.plugin_id, version=args.version)
        render.result("[bold green]ok[/] {} {} (harness, sha256 {}) verifies as installed",
                   checked.name, checked.version, checked.record.sha256)
        if args.json:
            render.print_json(checked.to_json())
        return EXIT_OK
    result = check(home, args.plugin_id, target=target_from_args(args), version=args.version)
    state = "enabled" if result.enabled else "not enabled"
    render.result("[bold green]ok[/] {} {} {} ({}) verifies as installed", result.plugin_id,
               result.version, result.target, state)
    if args.json:
        render.print_json(result.to_json())
    return EXIT_OK
