"""`horon-bundle build`: build, gate, assemble, verify and archive a plugin bundle."""

from __future__ import annotations

import argparse
from pathlib import Path

from horon_bundle.build.kind import find_workspace_root, workspace_kind
from horon_bundle.build.pipeline import build
from horon_bundle.build.request import BuildRequest
from horon_bundle.cli import github, render
from horon_bundle.cli.argtypes import named_path, positive_seconds
from horon_bundle.cli.signer_args import add_signer_arguments, record_signer_from_args
from horon_bundle.cli.words import plural, shown_path
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.model.bundle_kind import KIND_NAMES, BundleKind

BUILD_RESULT_FORMAT = "horon.build-result.v1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Build the declared library with cargo (or bind a prebuilt one through its artifact "
        "record), gate it, assemble and verify the bundle, write its archive."
    )
    parser.add_argument("workspace", nargs="?", type=named_path, default=None,
                        metavar="WORKSPACE",
                        help="plugin workspace holding horon-release.toml, or a harness plugin "
                             "or marketplace (.claude-plugin/, .muse-plugin/) (default: the one "
                             "holding the current directory, found like cargo finds "
                             "Cargo.toml)")
    parser.add_argument("--kind", choices=KIND_NAMES,
                        help="which bundle to build when the workspace holds both kinds")
    parser.add_argument("--host", metavar="PROFILE[@VERSION]|FILE",
                        help="harness: name the declared hook events this host cannot fire")
    parser.add_argument("--strict", action="store_true",
                        help="harness: every warning is a refusal")
    plugins = parser.add_mutually_exclusive_group()
    plugins.add_argument("--plugin", dest="plugin_id", metavar="ID", help="[[plugin]] id to build")
    plugins.add_argument("--all-plugins", action="store_true",
                         help="every declared [[plugin]], in one run (docs/declaration.md)")
    targets = parser.add_mutually_exclusive_group()
    targets.add_argument("--target", action="append", default=[], metavar="TRIPLE",
                         help="declared target triple (repeatable; default: the host's)")
    targets.add_argument("--all-targets", action="store_true", help="every declared target")
    parser.add_argument("--channel", choices=("release", "qa"), default="release",
                        help="release (the declared features) or qa (plus qa-features); default "
                             "release")
    parser.add_argument("--out", type=named_path, default=None, metavar="DIR",
                        help="output directory, anywhere (default: WORKSPACE/dist)")
    parser.add_argument("--target-dir", type=named_path, metavar="DIR",
                        help="cargo target directory (default: cargo's own, WORKSPACE/target "
                             "unless CARGO_TARGET_DIR or .cargo/config.toml say otherwise)")
    parser.add_argument("--prebuilt", type=named_path, metavar="LIBRARY",
                        help="a library built elsewhere")
    parser.add_argument("--record", type=named_path, metavar="REC",
                        help="the artifact record `horon-bundle compile` wrote for --prebuilt")
    parser.add_argument("--builder-id", metavar="URI",
                        help="builder identity recorded in provenance (default: $HORON_BUILDER_ID, "
                             "else the GitHub Actions workflow, else "
                             "urn:horon-bundle:builder:local)")
    parser.add_argument("--require-signed-record", action="store_true",
                        help="refuse --record unless REC.sigstore.json verifies (offline) as "
                             "signed by the signer named below")
    add_signer_arguments(parser, what="the artifact record")
    parser.add_argument("--probe-timeout", type=positive_seconds, default=20.0, metavar="S",
                        help="seconds the child-process handshake may take (default 20)")
    parser.add_argument("--json", action="store_true", help="print a JSON result on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    workspace = args.workspace if args.workspace is not None else find_workspace_root(Path.cwd())
    if workspace is not None and workspace_kind(workspace, args.kind) == BundleKind.HARNESS:
        from horon_bundle.cli import harness_build  # noqa: PLC0415 - only for harness builds

        return harness_build.run(args, workspace)
    reporter = render.ConsoleReporter()
    try:
        results = build(BuildRequest(
            workspace=args.workspace, out=args.out, plugin_id=args.plugin_id,
            all_plugins=args.all_plugins,
            targets=tuple(args.target), all_targets=args.all_targets, channel=args.channel,
            target_dir=args.target_dir, prebuilt=args.prebuilt, record=args.record,
            builder=args.builder_id, probe_timeout=args.probe_timeout,
            record_signer=record_signer_from_args(args)), reporter)
    finally:
        reporter.close()
    shown: set[str] = set()
    for result in results:
        for warning in result.warnings:
            if warning not in shown:  # the same source tree for every target: say it once
                shown.add(warning)
                render.warning(warning)
        for note in result.notes:
            reporter.note(note)
        if result.qa_providers:
            reporter.note(f"qa bundle with {plural(len(result.qa_providers), 'QA provider')}: "
                          + "; ".join(result.qa_providers))
        render.result("[bold green]bundle[/]  {}  (verified)", shown_path(result.bundle))
        render.result("[bold green]archive[/] {}", shown_path(result.archive))
        render.result("        sha256 {}", result.archive_sha256)
    if results and results[0].statement is not None:
        render.result("[bold green]statement[/] {}  ({})", shown_path(results[0].statement),
                      plural(len(results), "archive"))
    github.summary("horon-bundle build", github.table(
        ["bundle", "channel", "features", "archive sha256"],
        [[f"{r.manifest.id} {r.manifest.version} {r.manifest.target}", r.manifest.channel,
          ", ".join(r.manifest.features) or "(none)", r.archive_sha256] for r in results]))
    if args.json:
        render.print_json({"format": BUILD_RESULT_FORMAT, "ok": True,
                           "statement": str(results[0].statement), "bundles": [
            {"bundle": str(r.bundle), "archive": str(r.archive), "sha256": r.archive_sha256,
             "id": r.manifest.id, "version": r.manifest.version, "target": r.manifest.target,
             "channel": r.manifest.channel, "features": list(r.manifest.features),
             "qa_providers": list(r.qa_providers), "notes": list(r.notes),
             "warnings": list(r.warnings)}
            for r in results]})
    return EXIT_OK
