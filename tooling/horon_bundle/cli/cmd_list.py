"""`horon-bundle list`: what an agent home holds, one line per id, version and target, and
one per harness bundle; `--catalogue` adds what each harness bundle offers, read from the
home's state file alone (no zip is opened)."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.home_args import add_home_arguments, home_from_args
from horon_bundle.install.survey import INSTALLED, Survey, survey

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any

    from horon_bundle.install.harness_survey import HarnessStatus


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("List the plugins installed in the agent home: id, version, target, "
                          "and which version is enabled; and the harness bundles, with "
                          "--catalogue their skills, commands, agents, hooks and MCP servers "
                          "(from state.json alone). Reads only.")
    parser.add_argument("--catalogue", action="store_true",
                        help="also list what each harness bundle offers (--json: include "
                             "each catalogue)")
    add_home_arguments(parser)
    parser.set_defaults(run=run)


def show(result: Survey, *, details: bool = False, catalogue: bool = False) -> None:
    if not result.exists:
        render.result("no agent home at {}: nothing installed", result.home)
        return
    if not result.copies and not result.harness:
        render.result("nothing installed in {}", result.home)
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
        render.result(markup, *values)
    for bundle in result.harness:
        _harness_line(bundle, details=details)
        if catalogue and bundle.record is not None:
            _catalogue(bundle.record.catalogue)
    for note in result.notes:
        render.say("[yellow]note:[/] {}", note)
    render.findings(result.all_findings)


def _harness_line(bundle: HarnessStatus, *, details: bool) -> None:
    markup = "{} {}  harness  sha256 {}"
    values: list[object] = [bundle.name or "?", bundle.version or "?", bundle.sha256]
    if details and bundle.record is not None:
        markup += "  installed {} from {}"
        values += [bundle.record.installed_at, bundle.record.source]
    if details and bundle.verified is not None:
        markup += "  [red]DOES NOT VERIFY[/]" if bundle.verified else "  [green]verified[/]"
    if bundle.presence != INSTALLED:
        markup += " [yellow]({})[/]"
        values.append(bundle.presence)
    render.result(markup, *values)


def _catalogue(document: dict[str, Any]) -> None:
    for section, label in (("skills", "skill"), ("commands", "command"), ("agents", "agent")):
        for entry in document.get(section, []):
            description = (entry.get("frontmatter") or {}).get("description")
            if isinstance(description, str):
                render.result("    {} {}  [dim]{}[/]", label, entry.get("id"), description[:100])
            else:
                render.result("    {} {}", label, entry.get("id"))
    for hook in document.get("hooks", []):
        what = hook.get("command") or hook.get("url") or hook.get("prompt") or hook.get("tool")
        render.result("    hook {} {} {}  [dim]{}[/]", hook.get("event"),
                   hook.get("matcher") or "*", hook.get("type"), str(what)[:100])
    for server in document.get("mcp_servers", []):
        render.result("    mcp-server {} ({})", server.get("name"), server.get("type"))


def run(args: argparse.Namespace) -> int:
    home, _ = home_from_args(args)
    result = survey(home, catalogue=args.catalogue)
    show(result, catalogue=args.catalogue)
    if args.json:
        render.print_json(result.to_json())
    return result.exit_status
