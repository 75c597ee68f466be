"""`horon-bundle publish`: gated, all-or-nothing, immutable publication of a release."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from horon_bundle.cli import render
from horon_bundle.cli.render import escape
from horon_bundle.cli.signer_args import add_signer_arguments, required_signer
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.publish.preflight import PublishRequest
from horon_bundle.publish.publisher import publish
from horon_bundle.publish.receipt import WOULD_PUBLISH, skipped_receipt
from horon_bundle.publish.signature import VerifierFactory
from horon_bundle.verify.signature import SignatureVerifier
from horon_bundle.verify.trust import load_trust


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Publish every archive in DIST_DIR to HORON_PUBLISH_DESTINATION, only when "
        "HORON_PUBLISH_ENABLED is exactly 'true' and the destination is set; otherwise print "
        "one line saying why it was skipped and exit 0."
    )
    parser.add_argument("dist_dir", nargs="?", type=Path, default=Path("dist"),
                        metavar="DIST_DIR", help="directory `build --out` wrote (default: dist)")
    parser.add_argument("--dry-run", action="store_true",
                        help="run the full preflight and print the plan; upload nothing")
    parser.add_argument("--json", action="store_true", help="print the receipt on stdout")
    parser.add_argument("--require-signature", action="store_true",
                        help="every archive needs a valid <archive>.sigstore.json from the "
                             "signer named below")
    parser.add_argument("--workspace", action="append", type=Path, default=[],
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


def run(args: argparse.Namespace) -> int:
    reporter = render.ConsoleReporter()
    request = PublishRequest(dist_dir=args.dist_dir, dry_run=args.dry_run,
                             signature_verifier=_verifier_factory(args),
                             workspaces=tuple(args.workspace))
    try:
        outcome = publish(request, os.environ, reporter)
    finally:
        reporter.close()
    if not outcome.gate.open:
        line = outcome.gate.skip_line()
        render.stderr.print(escape(line))
        if args.json:
            render.print_json(skipped_receipt(line))
        return EXIT_OK
    for note in outcome.notes:
        reporter.note(note)
    assert outcome.receipt is not None
    for bundle in outcome.receipt["bundles"]:
        status = bundle["status"]
        label = {WOULD_PUBLISH: "would publish"}.get(status, status.replace("-", " "))
        render.stderr.print(f"[bold green]{label}[/] {bundle['id']} {bundle['version']} "
                            f"{bundle['target']}  sha256 {bundle['archive']['sha256']}")
        render.stderr.print(f"        -> {escape(bundle['location'])}")
    if outcome.receipt_path is not None:
        render.stderr.print(f"receipt {escape(str(outcome.receipt_path))}")
    if args.dry_run:
        render.stderr.print("dry run: nothing was uploaded")
    if args.json:
        render.print_json(outcome.receipt)
    return EXIT_OK
