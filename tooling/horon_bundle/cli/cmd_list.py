"""`horon-bundle list`: what an agent home holds, one line per id, version and target."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.home_args import add_home_arguments, home_from_args
from horon_bundle.install.survey import INSTALLED, Survey, survey


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("List the plugins installed in the agent home: id, version, target, "
                          "and which version is enabled. Reads only.")
    add_home_arguments(parser)
    parser.set_defaults(run=run)


def show(result: Survey, *, details: bool = False) -> None:
    if not result.exists:
        render.say("no agent home at {}: nothing installed", result.home)
        return
    if not result.copies:
        render.say("nothing installed in {}", result.home)
    for item in result.copies:
        markup = "{} {} {}  " + ("[bold green]enabled[/]" if item.enabled else "[dim]disabled[/]")
        values: list[object] = [item.plugin_id, item.version, item.target]
        if details and item.record is not None:
            markup += "  installed {} from {}"
            values += [item.record.installed_at, item.record.source]
        if details and item.verified is not None:
            markup += "  [red]DOES NOT VERIFY[/]" if item.verified else "  [green]verified[/]"
        if item.presence != INSTALLED:
            markup += " [yellow]({})[/]"
            values.append(item.presence)
        render.say(markup, *values)
    for note in result.notes:
        render.say("[yellow]note:[/] {}", note)
    render.findings(result.all_findings)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    result = survey(home)
    show(result)
    if args.json:
        render.print_json(result.to_json())
    return result.exit_status
