"""`horon-bundle verify`: check a bundle directory or archive offline, every rule."""

from __future__ import annotations

import argparse
from pathlib import Path

from horon_bundle.cli import github, render
from horon_bundle.cli.signer_args import add_signer_arguments, identity_from_args, trust_from_args
from horon_bundle.core.errors import exit_status_for
from horon_bundle.model.checks import PASS, SKIP
from horon_bundle.rules.policy import load_policy
from horon_bundle.verify.audit import audit_options, audit_path
from horon_bundle.verify.report import VerifyReport


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Verify bundles offline: strict plugin.json, layout, checksums, provenance binding, "
        "evidence, graph, features; signatures and an audit policy."
    )
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH",
                        help="bundle directories or .zip archives")
    parser.add_argument("--json", action="store_true", help="print the report on stdout")
    parser.add_argument("--require-signature", action="store_true",
                        help="refuse an archive without a valid <archive>.sigstore.json from "
                             "the named signer")
    parser.add_argument("--policy", type=Path, metavar="FILE",
                        help="audit policy (TOML, docs/auditing.md): every requirement reported")
    add_signer_arguments(parser, what="each archive")
    parser.set_defaults(run=run)


MARKS = {PASS: "[green]ok  [/]", SKIP: "[yellow]skip[/]"}


def show(report: VerifyReport) -> None:
    render.say("[bold]{}[/]", report.path)
    for check in report.checks:
        mark = MARKS.get(check.status, "[red]FAIL[/]")
        if check.note:
            render.say("  " + mark + " {} [dim]({})[/]", check.name, check.note)
        else:
            render.say("  " + mark + " {}", check.name)
    for text in report.notes:
        render.say("  [dim]note: {}[/]", text)
    render.findings(report.findings, subject=report.path)
    render.say("  [bold green]verified[/]" if report.ok else "  [bold red]refused[/]")


def summary(reports: list[VerifyReport]) -> None:
    """The step summary: one row per bundle, its verdict and its failed checks."""
    rows = []
    for report in reports:
        failed = [c.name for c in report.checks if c.status not in (PASS, SKIP)]
        passed = sum(c.status == PASS for c in report.checks)
        rows.append([report.path, "verified" if report.ok else "refused",
                     f"{passed} passed", ", ".join(failed) or "none",
                     ", ".join(sorted({f.code.name for f in report.findings})) or "none"])
    github.summary("horon-bundle verify", github.table(
        ["bundle", "verdict", "checks", "failed checks", "codes"], rows))


def run(args: argparse.Namespace) -> int:
    options = audit_options(
        identity=identity_from_args(args), trust=trust_from_args(args),
        require_signature=args.require_signature,
        policy=load_policy(args.policy) if args.policy is not None else None)
    args.subject = str(args.paths[0])
    reports = [audit_path(path, options) for path in args.paths]
    for report in reports:
        show(report)
    summary(reports)
    if args.json:
        document = reports[0].to_json() if len(reports) == 1 else {
            "format": "horon.verify-reports.v1", "ok": all(r.ok for r in reports),
            "reports": [r.to_json() for r in reports]}
        render.print_json(document)
    return exit_status_for([f for report in reports for f in report.findings])
