"""`horon-bundle list`: what an agent home holds, one line per id, version and target."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.home_args import add_home_arguments, home_from_args
from horon_bundle.cli.render import escape
from horon_bundle.install.survey import INSTALLED, Survey, survey


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("List the plugins installed in the agent home: id, version, target, "
                          "and which version is enabled. Reads only.")
    add_home_arguments(parser)
    parser.set_defaults(run=run)


def show(result: Survey, *, details: bool = False) -> None:
    if not result.exists:
        render.stderr.print(f"no agent home at {escape(str(result.home))}: nothing installed")
        return
    if not result.copies:
        render.stderr.print(f"nothing installed in {escape(str(result.home))}")
    for item in result.copies:
        mark = "[bold green]enabled[/]" if item.enabled else "[dim]disabled[/]"
        presence = "" if item.presence == INSTALLED else f" [yellow]({item.presence})[/]"
        line = f"{escape(item.plugin_id)} {escape(item.version)} {escape(item.target)}  {mark}"
        if details and item.record is not None:
            line += (f"  installed {item.record.installed_at} from "
                     f"{escape(item.record.source)}")
        if details and item.verified is not None:
            line += "  [green]verified[/]" if not item.verified else "  [red]DOES NOT VERIFY[/]"
        render.stderr.print(line + presence)
    for note in result.notes:
        render.stderr.print(f"[yellow]note:[/] {escape(note)}")
    render.findings(result.all_findings)


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    result = survey(home)
    show(result)
    if args.json:
        render.print_json(result.to_json())
    return result.exit_status
