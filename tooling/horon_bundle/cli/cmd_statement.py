"""`horon-bundle statement merge`: join the release statements of one workflow run."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.words import plural, shown_path
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.sign.statements import merge_statement_files

MERGE_RESULT_FORMAT = "horon.statement-merge.v1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Release statements (*.intoto.jsonl, in-toto v1 with SLSA provenance) that `build` "
        "writes beside the archives (docs/release-statement.md)."
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True,
                                    help="merge: join one run's statements into one")
    merge = actions.add_parser(
        "merge", help="join the statements of one workflow run into one release statement",
        description="Join the statements of one run's jobs into one Statement naming every "
                    "archive (same builder, invocation and source; one digest per name), to "
                    "be signed once with `horon-bundle sign`.")
    merge.add_argument("statements", nargs="+", type=named_path, metavar="STATEMENT",
                       help="*.intoto.jsonl files written by build (e.g. dist/*.intoto.jsonl)")
    merge.add_argument("--out", type=named_path, required=True,
                       help="the release statement to write (e.g. dist/release.intoto.jsonl)")
    merge.add_argument("--json", action="store_true", help="print a JSON result on stdout")
    merge.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    merged = merge_statement_files(list(args.statements), args.out)
    render.result("[bold green]release statement[/] {}  ({} from {})", shown_path(merged.path),
               plural(len(merged.subjects), "archive"), plural(len(merged.inputs), "statement"))
    if args.json:
        render.print_json({"format": MERGE_RESULT_FORMAT, "ok": True,
                           "statement": str(merged.path),
                           "inputs": [str(p) for p in merged.inputs],
                           "subjects": [{"name": n, "sha256": s}
                                        for n, s in sorted(merged.subjects.items())]})
    return EXIT_OK
