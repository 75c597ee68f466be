"""`horon-bundle reproduce`: rebuild a bundle from a source checkout and compare it."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.core.errors import exit_status_for
from horon_bundle.reproduce.rebuild import reproduce
from horon_bundle.reproduce.report import IDENTICAL


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Re-run the bundle's recorded cargo invocation from a clean checkout in a fresh "
        "target directory (recorded toolchain and revision checked first), then compare the "
        "library and sidecars byte for byte and every other file (provenance field by field, "
        "builder id excepted). Exit 0 identical, 1 different."
    )
    parser.add_argument("path", type=named_path, metavar="PATH", help="bundle directory or archive")
    parser.add_argument("--source", type=named_path, required=True, metavar="DIR",
                        help="the plugin workspace checkout to rebuild from")
    parser.add_argument("--out", type=named_path, metavar="DIR",
                        help="keep the rebuilt bundle here (default: a temporary directory)")
    parser.add_argument("--json", action="store_true",
                        help="print the horon.reproduce-report.v1 report on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    reporter = render.ConsoleReporter()
    try:
        report = reproduce(args.path, args.source, out=args.out, reporter=reporter)
    finally:
        reporter.close()
    recorded, here = report.toolchain.get("recorded", {}), report.toolchain.get("here", {})
    for key, value in recorded.items():
        if here.get(key) == value:
            render.result("  [green]=[/] {}: {}", key, value)
        else:
            render.result("  [red]≠[/] {}: {}  (here: {})", key, value, here.get(key, ""))
    for item in report.files:
        if item.result == IDENTICAL:
            render.result("  [green]same[/] {}", item.path)
        else:
            render.result("  [red]{}[/] {}", item.result, item.path)
    if report.archive is not None:
        render.result("  [green]same[/] archive sha256 {}" if report.archive["identical"]
                   else "  [red]different[/] archive sha256 {}",
                   report.archive["rebuilt"]["sha256"])
    for note in report.notes:
        reporter.note(note)
    render.findings(report.findings, subject=str(args.path))
    render.result("[bold green]identical[/]" if report.identical
               else "[bold red]different[/]" if report.built else "[bold red]not rebuilt[/]")
    if args.json:
        render.print_json(report.to_json())
    return exit_status_for(report.findings)
