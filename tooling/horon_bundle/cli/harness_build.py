"""`horon-bundle build` of a harness workspace (docs/harness.md): run and render."""

from __future__ import annotations

import argparse
from pathlib import Path

from horon_bundle.build.harness.pipeline import build_harness
from horon_bundle.build.harness.request import HarnessBuildRequest
from horon_bundle.cli import render
from horon_bundle.cli.words import shown_path
from horon_bundle.core import codes
from horon_bundle.core.errors import EXIT_OK, Refused
from horon_bundle.model.bundle_kind import BundleKind
from horon_bundle.model.harness.profile import resolve_profile

HARNESS_BUILD_FORMAT = "horon.harness-build-result.v1"
_NATIVE_ONLY = (("--plugin", "plugin_id"), ("--target", "target"),
                ("--all-targets", "all_targets"), ("--target-dir", "target_dir"),
                ("--prebuilt", "prebuilt"), ("--record", "record"),
                ("--require-signed-record", "require_signed_record"))


def run(args: argparse.Namespace, workspace: Path) -> int:
    given = [flag for flag, name in _NATIVE_ONLY if getattr(args, name, None)]
    if args.channel != "release":
        given.append("--channel")
    if given:
        raise Refused.one(codes.HARNESS_UNSUPPORTED,
                          f"{', '.join(given)}: native-bundle options; {workspace} is a harness "
                          "workspace (pass --kind native if you meant the native build)")
    reporter = render.ConsoleReporter()
    try:
        result = build_harness(HarnessBuildRequest(
            workspace=workspace, out=args.out if args.out is not None else workspace / "dist",
            host=resolve_profile(args.host) if args.host else None, strict=args.strict,
            builder=args.builder_id), reporter)
    finally:
        reporter.close()
    for note in result.notes:
        reporter.note(note)
    render.warnings(result.warnings, subject=str(workspace))
    for built in result.built:
        render.result("[bold green]harness zip[/] {}  (verified)", shown_path(built.zip))
        render.result("        sha256 {}  ref {}", built.sha256, built.ref.name)
    if result.statement is not None:
        render.result("[bold green]statement[/] {}", shown_path(result.statement))
    if result.index is not None:
        render.result("[bold green]marketplace index[/] {}", shown_path(result.index))
    if args.json:
        render.print_json({"format": HARNESS_BUILD_FORMAT, "ok": True,
                           "kind": BundleKind.HARNESS, "bundles": [
            {"name": b.name, "version": b.version, "zip": str(b.zip), "ref": str(b.ref),
             "sha256": b.sha256, "events": list(b.events)} for b in result.built],
            "skipped": list(result.skipped),
            "index": None if result.index is None else str(result.index),
            "statement": None if result.statement is None else str(result.statement),
            "warnings": [w.to_dict() for w in result.warnings]})
    return EXIT_OK
