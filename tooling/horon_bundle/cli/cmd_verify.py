"""`horon-bundle verify`: check a bundle directory, archive or harness ref offline, every rule."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from horon_bundle.cli import github, render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.log_args import add_log_arguments, log_requested, prove, remember, say_proof
from horon_bundle.cli.signer_args import add_signer_arguments, identity_from_args, trust_from_args
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused, exit_status_for
from horon_bundle.core.hashing import hash_file
from horon_bundle.model.checks import PASS, SKIP, WARN
from horon_bundle.verify.audit import audit_options
from horon_bundle.verify.harness.options import HarnessOptions
from horon_bundle.verify.report import VerifyReport
from horon_bundle.verify.route import verify_any

if TYPE_CHECKING:
    from horon_bundle.model.harness.profile import HostProfile
    from horon_bundle.rules.policy import Policy


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Verify bundles offline: strict plugin.json, layout, checksums, provenance binding, "
        "evidence, graph, features; signatures and an audit policy; harness zips and refs."
    )
    parser.add_argument("paths", nargs="+", type=named_path, metavar="PATH",
                        help="bundle directory, .zip archive, or a harness <zip>.ref.json")
    parser.add_argument("--json", action="store_true", help="print the report on stdout")
    parser.add_argument("--require-signature", action="store_true",
                        help="refuse an archive without a valid <archive>.sigstore.json from "
                             "the named signer")
    parser.add_argument("--attestation", type=named_path, metavar="FILE",
                        help="refuse an archive that is not a subject of this signed release "
                             "statement (its .sigstore.json, or the *.intoto.jsonl beside "
                             "it) from the named signer (docs/release-statement.md)")
    parser.add_argument("--policy", type=named_path, metavar="FILE",
                        help="audit policy (TOML, docs/auditing.md): every requirement reported")
    add_signer_arguments(parser, what="each archive")
    harness = parser.add_argument_group("harness bundles (docs/harness.md)")
    harness.add_argument("--host", metavar="PROFILE[@VERSION]|FILE",
                         help="name every declared hook event this host cannot fire "
                              "(`horon-bundle profiles` lists the shipped ones)")
    harness.add_argument("--strict", action="store_true", help="every warning is a refusal")
    harness.add_argument("--zip", metavar="PATH", help="the zip a single REF names")
    add_log_arguments(parser, home=True)
    parser.set_defaults(run=run)


MARKS = {PASS: "[green]ok  [/]", SKIP: "[yellow]skip[/]", WARN: "[yellow]warn[/]"}


def show(report: VerifyReport) -> None:
    render.result("[bold]{}[/]", report.path)
    for check in report.checks:
        mark = MARKS.get(check.status, "[red]FAIL[/]")
        if check.note:
            render.result("  " + mark + " {} [dim]({})[/]", check.name, check.note)
        else:
            render.result("  " + mark + " {}", check.name)
    for text in report.notes:
        render.say("  [dim]note: {}[/]", text)
    render.findings(report.findings, subject=report.path)
    render.warnings(report.warnings, subject=report.path)
    render.result("  [bold green]verified[/]" if report.ok else "  [bold red]refused[/]")


def summary(reports: list[VerifyReport]) -> None:
    """The step summary: one row per bundle, its verdict and its failed checks."""
    rows = []
    for report in reports:
        failed = [c.name for c in report.checks if c.status not in (PASS, SKIP, WARN)]
        passed = sum(c.status == PASS for c in report.checks)
        rows.append([report.path, "verified" if report.ok else "refused",
                     f"{passed} passed", ", ".join(failed) or "none",
                     ", ".join(sorted({f.code.name for f in report.findings})) or "none"])
    github.summary("horon-bundle verify", github.table(
        ["bundle", "verdict", "checks", "failed checks", "codes"], rows))


def _policy(path: Path | None) -> Policy | None:
    """The audit policy of --policy; its rules are imported only then (start-up)."""
    if path is None:
        return None
    from horon_bundle.rules.policy import load_policy  # noqa: PLC0415

    return load_policy(path)


def _host(name: str | None) -> HostProfile | None:
    if not name:
        return None
    from horon_bundle.model.harness.profile import resolve_profile  # noqa: PLC0415 - start-up

    return resolve_profile(name)


def _attestation_usage(paths: list[Path], verifier: object) -> None:
    if verifier is None:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          "--attestation needs the expected signer: --identity and --issuer, "
                          "or --github-repository (a statement signed by anyone proves nothing)")
    for path in paths:
        if not path.name.endswith(".zip") or not path.is_file():
            raise Refused.one(codes.USAGE_INVALID,
                              f"--attestation: {path} is not an archive (.zip) file")


def run(args: argparse.Namespace) -> int:
    if args.zip is not None and (len(args.paths) != 1
                                 or not args.paths[0].name.endswith(".ref.json")):
        raise Refused.one(codes.USAGE_INVALID, "--zip goes with a single <zip>.ref.json")
    options = audit_options(
        identity=identity_from_args(args), trust=trust_from_args(args),
        require_signature=args.require_signature, policy=_policy(args.policy))
    harness = HarnessOptions(host=_host(args.host), strict=args.strict, zip_path=args.zip)
    args.subject = str(args.paths[0])
    if args.attestation is not None:
        _attestation_usage(args.paths, options.verifier)
    proofs = [prove(args, path, args.home) for path in args.paths] if log_requested(args) else []
    reports = [verify_any(path, options, harness) for path in args.paths]
    if args.attestation is not None:
        assert options.verifier is not None
        from horon_bundle.verify.attestation import check_attestation  # noqa: PLC0415

        for path, report in zip(args.paths, reports, strict=True):
            report.checks.append(check_attestation(
                path.name, hash_file(path, what="archive", follow_symlinks=False).sha256,
                args.attestation, options.verifier))
    if all(report.ok for report in reports):
        for proof in proofs:
            remember(args, proof, args.home)
            say_proof(proof)
    for report in reports:
        show(report)
    summary(reports)
    if args.json:
        document = reports[0].to_json() if len(reports) == 1 else {
            "format": "horon.verify-reports.v1", "ok": all(r.ok for r in reports),
            "reports": [r.to_json() for r in reports]}
        render.print_json(document)
    return exit_status_for([f for report in reports for f in report.findings])
