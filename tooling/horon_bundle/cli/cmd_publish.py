"""`horon-bundle publish`: gated, all-or-nothing, immutable publication of a release."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from horon_bundle.cli import github, render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.signer_args import add_signer_arguments, required_signer
from horon_bundle.cli.words import plural, shown_path
from horon_bundle.core.errors import EXIT_OK, Refused
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.declaration import find_workspace
from horon_bundle.publish.preflight import PublishRequest
from horon_bundle.publish.publisher import publish
from horon_bundle.publish.receipt import WOULD_PUBLISH, skipped_receipt
from horon_bundle.publish.signature import VerifierFactory
from horon_bundle.verify.signature import SignatureVerifier
from horon_bundle.verify.trust import load_trust


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Publish the archives of DIST_DIR (exactly those its release statements name, when it "
        "holds *.intoto.jsonl) to HORON_PUBLISH_DESTINATION, only when "
        "HORON_PUBLISH_ENABLED is exactly 'true' and the destination is set; otherwise print "
        "one line saying why it was skipped and exit 0."
    )
    parser.add_argument("dist_dir", nargs="?", type=named_path, default=None, metavar="DIST_DIR",
                        help="directory `build --out` wrote (default: the dist/ of the "
                             "plugin workspace holding the current directory, else ./dist)")
    parser.add_argument("--dry-run", action="store_true",
                        help="run the full preflight and print the plan; upload nothing")
    parser.add_argument("--json", action="store_true", help="print the receipt on stdout")
    parser.add_argument("--require-signature", action="store_true",
                        help="every archive needs a valid <archive>.sigstore.json from the "
                             "signer named below")
    parser.add_argument("--leave-out-unlisted", action="store_true",
                        help="when DIST_DIR holds release statements, leave out (and name) "
                             "the archives none of them names instead of refusing them")
    parser.add_argument("--upload-ahead", action="store_true",
                        help="oci:// only: send each archive's bytes into an upload session "
                             "while it is verified, stored only once the whole release "
                             "passed (a refused release's bytes reach the registry, which "
                             "drops them; docs/publishing.md)")
    parser.add_argument("--workspace", action="append", type=named_path, default=[],
                        metavar="DIR",
                        help="also check this workspace's horon-release.toml (repeatable)")
    add_signer_arguments(parser, what="each archive (with --require-signature)")
    parser.set_defaults(run=run)


def _verifier_factory(args: argparse.Namespace) -> VerifierFactory | None:
    """Check the signer options now; load the trust root only when the gate is open."""
    wanted = required_signer(args, flag="--require-signature")
    if wanted is None:
        return None
    identity, trust = wanted
    return lambda: SignatureVerifier(trust=load_trust(trust), identity=identity)


OUT_NAME = "dist"  # build's default output folder (build/places.py), not imported: publish
# never loads the builder


def default_dist() -> Path:
    """Where `build` wrote with no --out: `<workspace>/dist` (else ./dist)."""
    try:
        return find_workspace(Path.cwd()) / OUT_NAME
    except Refused:
        return Path(OUT_NAME)


def run(args: argparse.Namespace) -> int:
    reporter = render.ConsoleReporter()
    dist_dir = args.dist_dir if args.dist_dir is not None else default_dist()
    args.subject = str(dist_dir)
    request = PublishRequest(dist_dir=dist_dir, dry_run=args.dry_run,
                             signature_verifier=_verifier_factory(args),
                             workspaces=tuple(args.workspace),
                             leave_out_unlisted=args.leave_out_unlisted,
                             upload_ahead=args.upload_ahead)
    try:
        outcome = publish(request, os.environ, reporter)
    finally:
        reporter.close()
    if not outcome.gate.open:
        line = outcome.gate.skip_line()
        render.result("{}", line)
        render.warnings(outcome.gate.warnings)
        github.summary("horon-bundle publish", [github.cell(line)])
        if args.json:
            render.print_json(skipped_receipt(line))
        return EXIT_OK
    for note in outcome.notes:
        reporter.note(note)
    render.warnings(outcome.warnings, subject=str(dist_dir))
    assert outcome.receipt is not None
    for bundle in outcome.receipt["bundles"]:
        status = bundle["status"]
        label = {WOULD_PUBLISH: "would publish"}.get(status, status.replace("-", " "))
        render.result("[bold green]{}[/] {}  sha256 {}", label, _label(bundle),
                   bundle["archive"]["sha256"])
        render.result("        -> {}", bundle["location"])
    if outcome.log is not None:
        say_log(outcome.log)
    if outcome.marketplace is not None:
        say_marketplace(outcome.marketplace)
    if outcome.receipt_path is not None:
        render.result("receipt {}", shown_path(outcome.receipt_path))
    if args.dry_run:
        render.result("dry run: nothing was uploaded")
    github.summary("horon-bundle publish", [
        f"destination `{github.cell(outcome.receipt.get('destination', ''))}`", "",
        *github.table(["bundle", "status", "archive sha256", "location"], [
            [_label(b), b["status"], b["archive"]["sha256"],
             b["location"]] for b in outcome.receipt["bundles"]])])
    if args.json:
        render.print_json(outcome.receipt)
    return EXIT_OK


def say_marketplace(marketplace: dict[str, Any]) -> None:
    """The line saying what a store's Claude Code marketplace became (publish and yank)."""
    render.result("[bold green]marketplace {}[/] {} ({})  sha256 {}", marketplace["status"],
               marketplace["name"], plural(marketplace["plugins"], "plugin"),
               marketplace["sha256"])
    render.result("        -> {}", marketplace["url"])


def say_log(log: dict[str, Any]) -> None:
    """The line saying what a store's transparency log became (publish and yank)."""
    if log["status"] == "not-kept":
        render.result("[bold yellow]log not extended[/]: {}", log["reason"])
        return
    render.result("[bold green]log {}[/] {} new {}, {} in all", log["status"], len(log["added"]),
               "leaf" if len(log["added"]) == 1 else "leaves", log["size"])
    render.result("        -> {}", log["checkpoint"])


def _label(bundle: dict[str, Any]) -> str:
    """`id version target`, or `name version (harness)`."""
    if bundle.get("kind") == BundleKind.HARNESS:
        return f"{bundle['id']} {bundle['version']} (harness)"
    return f"{bundle['id']} {bundle['version']} {bundle['target']}"
