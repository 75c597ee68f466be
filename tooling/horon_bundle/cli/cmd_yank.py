"""`horon-bundle yank`: mark a published version withdrawn, keeping its bytes."""

from __future__ import annotations

import argparse
import os

from horon_bundle.cli import render
from horon_bundle.cli.cmd_publish import say_log, say_marketplace
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.publish.publisher import YankRequest, yank


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Mark ID VERSION (one --target, or every published target) withdrawn at "
        "HORON_PUBLISH_DESTINATION; gated by the same two variables as publish."
    )
    parser.add_argument("plugin_id", metavar="ID", help="the published plugin id")
    parser.add_argument("version", metavar="VERSION", help="the published version")
    parser.add_argument("--target", metavar="TRIPLE",
                        help="one target (default: every published target)")
    parser.add_argument("--reason", required=True, metavar="TEXT",
                        help="why the version is withdrawn")
    parser.add_argument("--json", action="store_true", help="print the result on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    reporter = render.ConsoleReporter()
    try:
        outcome = yank(YankRequest(plugin_id=args.plugin_id, version=args.version,
                                   target=args.target, reason=args.reason), os.environ, reporter)
    finally:
        reporter.close()
    if not outcome.gate.open:
        line = outcome.gate.skip_line("yank")
        render.result("{}", line)
        render.warnings(outcome.gate.warnings)
        if args.json:
            render.print_json({"format": "horon.yank-result.v1", "ok": True, "skipped": True,
                               "reason": line, "yanked": []})
        return EXIT_OK
    for result in outcome.results:
        state = "already yanked" if result.already else "yanked"
        render.result("[bold yellow]{}[/] {} {} {}  sha256 {}", state, result.plugin_id,
                   result.version, result.target, result.archive_sha256)
    if outcome.log is not None:
        say_log(outcome.log)
    if outcome.marketplace is not None:
        say_marketplace(outcome.marketplace)
    if args.json:
        render.print_json({"format": "horon.yank-result.v1", "ok": True, "skipped": False,
                           "destination": outcome.destination, "yanked": [
                               {"id": r.plugin_id, "version": r.version, "target": r.target,
                                "archive_sha256": r.archive_sha256, "location": r.location,
                                "already": r.already} for r in outcome.results],
                           **({"log": outcome.log} if outcome.log is not None else {})})
    return EXIT_OK
