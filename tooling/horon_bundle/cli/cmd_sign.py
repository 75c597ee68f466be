"""`horon-bundle sign`: keyless Sigstore signatures for archives and artifact records (CI)."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.sign.files import prepare, sign_files
from horon_bundle.sign.signer import ambient_signer


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Sign bundle archives and harness zips (.zip), artifact records (record.json) or a "
        "release statement (*.intoto.jsonl: one DSSE envelope naming all its archives) "
        "keylessly with the "
        "OIDC identity of the CI job (GitHub Actions: `permissions: id-token: write`) or "
        "SIGSTORE_IDENTITY_TOKEN; writes <file>.sigstore.json (and "
        "<archive>.provenance.sigstore.json, a DSSE envelope over the provenance statement). "
        "Never interactive: with no identity, exit 3."
    )
    parser.add_argument("files", nargs="+", type=named_path, metavar="FILE",
                        help="bundle archives or harness zips (.zip), artifact records "
                             "(record.json), or a release statement (*.intoto.jsonl)")
    parser.add_argument("--staging", action="store_true",
                        help="sign with Sigstore's staging instance (for testing a workflow)")
    parser.add_argument("--json", action="store_true", help="print a JSON result on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    inputs = prepare(list(args.files))
    signer = ambient_signer(staging=args.staging)
    reporter = render.ConsoleReporter()
    try:
        render.say("signing as {}", signer.identity)
        signed = sign_files(inputs, signer, reporter)
    finally:
        reporter.close()
        signer.close()
    for item in signed:
        render.result("[bold green]signed[/] {}  ->  {}", item.path, item.signature.name)
        if item.statement_signature is not None:
            render.result("        provenance statement  ->  {}", item.statement_signature.name)
    if args.json:
        render.print_json({"format": "horon.sign-result.v1", "ok": True, "signed": [
            {"path": str(s.path), "kind": s.kind, "sha256": s.sha256,
             "signature": str(s.signature),
             "provenance_signature": None if s.statement_signature is None
             else str(s.statement_signature)} for s in signed]})
    return EXIT_OK
