"""`horon-bundle check`: what a host runs before each load of a plugin — or, with several ids
or `--all`, before loading every plugin, in one process (one start-up, not one per plugin)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from horon_bundle.cli import render
from horon_bundle.cli.home_args import (
    add_home_arguments,
    add_kind_argument,
    home_from_args,
    names_harness,
    target_from_args,
)
from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import EXIT_OK, Finding, Refused, exit_status_for
from horon_bundle.install.harness_survey import check_harness
from horon_bundle.install.survey import check, survey
from horon_bundle.model.bundle_kind import BundleKind

CHECKS_FORMAT = "horon.install-checks.v1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Re-verify the enabled version of ID (or VERSION) for this host's target: every file "
        "against the installed plugin.json and SHA256SUMS, nothing missing or added, and the "
        "whole equal to what state.json recorded at install. For a harness bundle NAME: its "
        "stored zip's digest, every harness rule, and its catalogue against state.json "
        "(VERSION needed when several are installed). Several IDs (each optionally followed by "
        "its VERSION), or --all (every enabled plugin and every harness bundle), are checked "
        "in one run: a line each, exit 0 only when every one verifies. Reads only."
    )
    parser.add_argument("names", nargs="*", metavar="ID [VERSION]",
                        help="an installed plugin's id (or harness bundle's name), optionally "
                             "followed by the version to check (default: the enabled one)")
    parser.add_argument("--all", action="store_true",
                        help="check every enabled plugin for the target and every harness "
                             "bundle")
    add_home_arguments(parser, target="the target (default: this host's)")
    add_kind_argument(parser)
    parser.set_defaults(run=run)


def _pairs(names: list[str]) -> list[tuple[str, str | None]]:
    """`ID [VERSION] ID [VERSION] …`: a word that is a version (SemVer, so starting with a
    digit, which no plugin id does) is the version of the id before it."""
    pairs: list[tuple[str, str | None]] = []
    for name in names:
        if pairs and pairs[-1][1] is None and identifiers.SEMVER.fullmatch(name):
            pairs[-1] = (pairs[-1][0], name)
        else:
            pairs.append((name, None))
    return pairs


def run(args: argparse.Namespace) -> int:
    if args.all == bool(args.names):
        raise Refused.one(codes.USAGE_INVALID, "check: name an ID (or several), or pass --all",
                          "`horon-bundle check ID [VERSION]`, `check ID ID …` or `check --all`.")
    home, _ = home_from_args(args)
    pairs = _everything(args) if args.all else _pairs(args.names)
    if not args.all and len(pairs) == 1:
        args.plugin_id, args.version = pairs[0]
        document = _check_one(args, home)
        if args.json:
            render.print_json(document)
        return EXIT_OK
    results: list[dict[str, Any]] = []
    failed: list[Finding] = []
    for name, version in pairs:
        args.plugin_id, args.version = name, version
        try:
            results.append(_check_one(args, home))
        except Refused as exc:
            render.result("[bold red]FAILED[/] {}{}", name, f" {version}" if version else "")
            render.findings(exc.findings)
            failed += exc.findings
            results.append({"name": name, "version": version,
                            **render.refusal_document(exc.findings, exc.exit_status)})
    status = exit_status_for(failed)
    passed = len([r for r in results if r["ok"]])
    render.result("{} of {} verified as installed", passed, len(pairs))
    if args.json:
        render.print_json({"format": CHECKS_FORMAT, "ok": not failed, "exit_status": status,
                           "checks": results})
    return status


def _everything(args: argparse.Namespace) -> list[tuple[str, str | None]]:
    """Every plugin enabled for the target (its enabled version) and every harness bundle."""
    home, _ = home_from_args(args)
    target = target_from_args(args)
    found = survey(home)
    native: list[tuple[str, str | None]] = sorted(
        {(c.plugin_id, c.version) for c in found.copies if c.enabled and c.target == target})
    harness: list[tuple[str, str | None]] = sorted(
        {(h.name, h.version) for h in found.harness if h.name is not None and h.version})
    if args.kind is not None:
        return harness if args.kind == BundleKind.HARNESS.value else native
    return [*native, *harness]


def _check_one(args: argparse.Namespace, home: Path) -> dict[str, Any]:
    if names_harness(home, args):
        checked = check_harness(home, args.plugin_id, version=args.version)
        render.result("[bold green]ok[/] {} {} (harness, sha256 {}) verifies as installed",
                   checked.name, checked.version, checked.record.sha256)
        return checked.to_json()
    result = check(home, args.plugin_id, target=target_from_args(args), version=args.version)
    state = "enabled" if result.enabled else "not enabled"
    render.result("[bold green]ok[/] {} {} {} ({}) verifies as installed", result.plugin_id,
               result.version, result.target, state)
    return result.to_json()
