"""`horon-bundle verify`: check a bundle directory or archive offline, every rule."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from horon_bundle.cli import render
from horon_bundle.errors import EXIT_OK, exit_status_for
from horon_bundle.verify import PASS, SKIP, verify_path


def register(sub: Any) -> None:
    parser = sub.add_parser("verify", help="verify a bundle directory or archive",
                            description="Verify bundles offline: strict plugin.json, layout, "
                                        "checksums, provenance binding, evidence, graph, "
                                        "features.")
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH")
    parser.add_argument("--json", action="store_true", help="print the report on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    reports = [verify_path(path) for path in args.paths]
    worst = EXIT_OK
    for report in reports:
        render.stderr.print(f"[bold]{report.path}[/]")
        for check in report.checks:
            mark = {PASS: "[green]ok  [/]", SKIP: "[yellow]skip[/]"}.get(check.status,
                                                                         "[red]FAIL[/]")
            note = f" [dim]({check.note})[/]" if check.note else ""
            render.stderr.print(f"  {mark} {check.name}{note}")
        render.findings(report.findings)
        worst = max(worst, exit_status_for(report.findings))
        verdict = "[bold green]verified[/]" if report.ok else "[bold red]refused[/]"
        render.stderr.print(f"  {verdict}")
    if args.json:
        document = reports[0].to_json() if len(reports) == 1 else {
            "format": "horon.verify-reports.v1", "ok": all(r.ok for r in reports),
            "reports": [r.to_json() for r in reports]}
        render.print_json(document)
    return worst
