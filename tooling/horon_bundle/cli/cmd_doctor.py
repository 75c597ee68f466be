"""`horon-bundle doctor`: load a bundle's library in a child process and check ABI v1."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import mebibytes, positive_seconds
from horon_bundle.cli.render import escape
from horon_bundle.doctor.report import DoctorReport
from horon_bundle.doctor.run import doctor_path
from horon_bundle.load.containment import DEFAULT_MEMORY_LIMIT_MIB
from horon_bundle.load.runner import DEFAULT_TIMEOUT
from horon_bundle.model.checks import PASS, SKIP


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Verify the bundle, check its target, then load its library in a child process "
        "(contained: timeout, memory limit, own session, empty HOME, no network and its own PID "
        "namespace where possible, traced with strace where available) "
        "and check the ABI v1 handshake, the refusal matrix, an instance with one tool call, "
        "and side effects. POSIX only."
    )
    parser.add_argument("path", type=Path, metavar="PATH", help="bundle directory or .zip")
    parser.add_argument("--json", action="store_true", help="print the report on stdout")
    parser.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"seconds the child may run (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--memory-limit", type=mebibytes, default=DEFAULT_MEMORY_LIMIT_MIB,
                        metavar="MIB", help="address space the child may use, in MiB (default "
                                            f"{DEFAULT_MEMORY_LIMIT_MIB}, i.e. 1 GiB)")
    parser.set_defaults(run=run)


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def show(report: DoctorReport) -> None:
    render.stderr.print(f"[bold]{escape(report.path)}[/]")
    if report.bundle:
        bundle = report.bundle
        render.stderr.print(f"  {escape(bundle['id'])} {escape(bundle['version'])} "
                            f"{escape(bundle['target'])} on host {escape(report.host or '?')}")
    for check in report.checks:
        mark = {PASS: "[green]ok  [/]", SKIP: "[yellow]skip[/]"}.get(check.status, "[red]FAIL[/]")
        if check.status == PASS:
            detail = _value(check.got) if check.got is not None else ""
        elif check.status == SKIP:
            detail = check.note
        else:
            detail = f"expected {_value(check.expected)}, got {_value(check.got)}"
        extra = f" [dim]({escape(check.note)})[/]" if check.note and check.status == PASS else ""
        render.stderr.print(f"  {mark} {check.name:<24} {escape(detail)}{extra}")
    for note in report.notes:
        render.stderr.print(f"  [yellow]note:[/] {escape(note)}")
    render.findings(report.findings)
    verdict = "[bold green]conformant[/]" if report.ok else "[bold red]refused[/]"
    render.stderr.print(f"  {verdict}")


def run(args: argparse.Namespace) -> int:
    reporter = render.ConsoleReporter(quiet=True)
    try:
        report = doctor_path(args.path, timeout=args.timeout,
                             memory_limit_mib=args.memory_limit, reporter=reporter)
    finally:
        reporter.close()
    show(report)
    if args.json:
        render.print_json(report.to_json())
    return report.exit_status
