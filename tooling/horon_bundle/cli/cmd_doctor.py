"""`horon-bundle doctor`: load a bundle's library in a child process and check ABI v1."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from horon_bundle.cli import github, render
from horon_bundle.cli.argtypes import mebibytes, positive_seconds
from horon_bundle.cli.home_args import add_home_arguments, home_from_args, target_from_args
from horon_bundle.core import identifiers
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
    parser.add_argument("path", metavar="PATH|ID",
                        help="bundle directory or .zip; or the id of a plugin installed in the "
                             "agent home (an id naming no existing path, or with --installed)")
    parser.add_argument("--installed", action="store_true",
                        help="read PATH|ID as an installed id even if a path of that name exists")
    parser.add_argument("--installed-version", "--version", dest="installed_version",
                        metavar="VERSION", action=DeprecatedSpelling,
                        help="with an id: this installed version (default: the enabled one, or "
                             "the only one installed when none is enabled; --version is the "
                             "old, deprecated spelling)")
    add_home_arguments(parser, target="with an id: the installed target (default: this host's)")
    parser.add_argument("--timeout", type=positive_seconds, default=DEFAULT_TIMEOUT, metavar="S",
                        help=f"seconds the child may run (default {DEFAULT_TIMEOUT:g})")
    parser.add_argument("--memory-limit", type=mebibytes, default=DEFAULT_MEMORY_LIMIT_MIB,
                        metavar="MIB", help="address space the child may use, in MiB (default "
                                            f"{DEFAULT_MEMORY_LIMIT_MIB}, i.e. 1 GiB)")
    parser.set_defaults(run=run)


class DeprecatedSpelling(argparse.Action):
    """`--installed-version`, still accepted as `--version` (which reads as the global
    `horon-bundle --version`) with a note that the spelling is deprecated."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        if option_string == "--version":
            render.say("[yellow]note:[/] {}", "doctor --version is deprecated: use "
                       "--installed-version (the same meaning)")
        setattr(namespace, self.dest, values)


def _value(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def show(report: DoctorReport) -> None:
    render.result("[bold]{}[/]", report.path)
    if report.bundle:
        bundle = report.bundle
        render.result("  {} {} {} on host {}", bundle["id"], bundle["version"], bundle["target"],
                   report.host or "?")
    for check in report.checks:
        mark = {PASS: "[green]ok  [/]", SKIP: "[yellow]skip[/]"}.get(check.status, "[red]FAIL[/]")
        if check.status == PASS:
            detail = _value(check.got) if check.got is not None else ""
        elif check.status == SKIP:
            detail = check.note
        else:
            detail = f"expected {_value(check.expected)}, got {_value(check.got)}"
        if check.note and check.status == PASS:
            render.result("  " + mark + " {} {} [dim]({})[/]", f"{check.name:<24}", detail,
                       check.note)
        else:
            render.result("  " + mark + " {} {}", f"{check.name:<24}", detail)
    for note in report.notes:
        render.say("  [yellow]note:[/] {}", note)
    render.findings(report.findings, subject=report.path)
    render.result("  [bold green]conformant[/]" if report.ok else "  [bold red]refused[/]")
    github.summary("horon-bundle doctor", github.table(
        ["bundle", "check", "result"],
        [[report.path, c.name, c.status] for c in report.checks]))


def _bundle_path(args: argparse.Namespace) -> Path:
    """The bundle the argument names: an existing path, or anything that cannot be a plugin
    id, is a path; otherwise the copy installed under that id (checked like `horon-bundle
    check` first)."""
    if not args.installed and (os.path.lexists(args.path)
                               or not identifiers.PLUGIN_ID.fullmatch(args.path)):
        return Path(args.path)
    home, _ = home_from_args(args)
    from horon_bundle.install.survey import check as check_installed  # noqa: PLC0415 - ids only

    checked = check_installed(home, args.path, target=target_from_args(args),
                              version=args.installed_version, sole_installed=True)
    render.result("installed {} {} {} verifies: {}", checked.plugin_id, checked.version,
                  checked.target, checked.path)
    if checked.chosen == "only-installed":
        render.say("[yellow]note:[/] {}", f"no version of {checked.plugin_id} is enabled for "
                   f"{checked.target}: checking {checked.version}, the only one installed")
    return checked.path


def run(args: argparse.Namespace) -> int:
    args.subject = str(args.path)
    path = _bundle_path(args)
    reporter = render.ConsoleReporter(quiet=True)
    try:
        report = doctor_path(path, timeout=args.timeout,
                             memory_limit_mib=args.memory_limit, reporter=reporter)
    finally:
        reporter.close()
    show(report)
    if args.json:
        render.print_json(report.to_json())
    return report.exit_status
