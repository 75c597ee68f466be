"""`horon-bundle compile`: build the library alone and write its artifact record."""

from __future__ import annotations

import argparse

from horon_bundle.build.compile import compile_records
from horon_bundle.build.request import CompileRequest
from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path, positive_seconds
from horon_bundle.cli.words import shown_path
from horon_bundle.core.errors import EXIT_OK


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Build the declared library on this (native) runner and write an artifact record "
        "binding it, for `build --prebuilt LIB --record REC` elsewhere."
    )
    parser.add_argument("workspace", nargs="?", type=named_path, default=None,
                        metavar="WORKSPACE",
                        help="plugin workspace holding horon-release.toml (default: the one "
                             "holding the current directory)")
    parser.add_argument("--plugin", dest="plugin_id", metavar="ID", help="[[plugin]] id to compile")
    parser.add_argument("--target", action="append", default=[], metavar="TRIPLE",
                        help="declared target triple (repeatable; default: the host's)")
    parser.add_argument("--channel", choices=("release", "qa"), default="release",
                        help="release (the declared features) or qa (plus qa-features); default "
                             "release")
    parser.add_argument("--out", type=named_path, default=None, metavar="DIR",
                        help="output directory, anywhere (default: WORKSPACE/dist)")
    parser.add_argument("--target-dir", type=named_path, metavar="DIR",
                        help="cargo target directory (default: cargo's own)")
    parser.add_argument("--probe-timeout", type=positive_seconds, default=20.0, metavar="S",
                        help="seconds the child-process handshake may take (default 20)")
    parser.add_argument("--json", action="store_true", help="print a JSON result on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    reporter = render.ConsoleReporter()
    try:
        outputs = compile_records(CompileRequest(
            workspace=args.workspace, out=args.out, plugin_id=args.plugin_id,
            targets=tuple(args.target), channel=args.channel, target_dir=args.target_dir,
            probe_timeout=args.probe_timeout), reporter)
    finally:
        reporter.close()
    for output in outputs:
        render.result("[bold green]library[/] {}", shown_path(output.library))
        render.result("[bold green]record[/]  {}", shown_path(output.record))
    if args.json:
        render.print_json({"format": "horon.compile-result.v1", "ok": True, "compiled": [
            {"library": str(o.library), "record": str(o.record), "sha256": o.sha256,
             "target": o.target} for o in outputs]})
    return EXIT_OK
