"""`horon-bundle fetch REF --into DIR`: what a sandbox does with a harness bundle's ref."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.home_args import home_from_args
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.install.fetch import FetchRequest, fetch
from horon_bundle.model.harness.profile import resolve_profile
from horon_bundle.verify.harness.options import HarnessOptions


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Read a harness bundle's <zip>.ref.json ({name, sha256}), find the zip (--zip, else the "
        "agent home's store, else beside the ref), check its SHA-256 before reading any entry, "
        "judge it, and unpack it into DIR, a new directory created by one rename (DIR must "
        "not exist). Links, '..' and absolute entries are refused before anything is written; "
        "the executable bit is kept. See docs/harness.md."
    )
    parser.add_argument("ref", type=named_path, metavar="REF", help="the <zip>.ref.json")
    parser.add_argument("--into", type=named_path, metavar="DIR", required=True,
                        help="the directory to create (its parent must exist)")
    parser.add_argument("--zip", type=named_path, metavar="PATH",
                        help="the zip the ref names (default: the home's store, else beside "
                             "the ref)")
    parser.add_argument("--home", type=named_path, metavar="DIR",
                        help="the agent home whose store is searched (default: "
                             "$HORON_AGENT_HOME, else $XDG_DATA_HOME/horon-agent, else "
                             "~/.local/share/horon-agent)")
    parser.add_argument("--host", metavar="PROFILE[@VERSION]|FILE",
                        help="judge the bundle against this host profile")
    parser.add_argument("--strict", action="store_true", help="every warning is a refusal")
    parser.add_argument("--json", action="store_true", help="print the result on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    home = None if args.zip is not None else home_from_args(args)[0]
    harness = HarnessOptions(host=resolve_profile(args.host) if args.host else None,
                             strict=args.strict)
    result = fetch(FetchRequest(ref=args.ref, into=args.into, zip_path=args.zip, home=home,
                                harness=harness))
    render.result("[bold green]fetched[/] {} {} (sha256 {}) into {}", result.name, result.version,
               result.sha256, result.into)
    render.result("        {} files, from {} ({})", result.files, result.zip, result.found)
    if args.json:
        render.print_json(result.to_json())
    return EXIT_OK
