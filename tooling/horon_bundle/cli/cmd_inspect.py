"""`horon-bundle inspect`: what a bundle holds, after verifying it."""

from __future__ import annotations

import argparse
from typing import Any

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.inspection.view import inspect_path


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Verify a bundle directory or archive, then show what it holds: identity, target, "
        "channel, features, the evidence (cargo invocation or artifact record), the resolved "
        "graph as a tree with QA providers marked, and every file's size and SHA-256. Exit 0 "
        "when the bundle verifies, 1 when it is refused (what could be read is still shown)."
    )
    parser.add_argument("path", type=named_path, metavar="PATH", help="bundle directory or .zip")
    parser.add_argument("--json", action="store_true",
                        help="print the horon.inspect-report.v1 document on stdout")
    parser.set_defaults(run=run)


def _tree(node: dict[str, Any], prefix: str, last: bool, top: bool) -> None:
    branch = "" if top else ("└── " if last else "├── ")
    features = f" [{', '.join(node['features'])}]" if node["features"] else ""
    kinds = f" ({', '.join(k for k in node['kinds'] if k != 'normal')})" if any(
        k != "normal" for k in node["kinds"]) else ""
    label = f"{node['name']} {node['version']}{features}{kinds}"
    if node["seen"]:
        render.result("  {}{} [dim](*)[/]", prefix + branch, label)
    elif node["qa"]:
        render.result("  {}[bold red]{}[/]  [red]QA provider: {}[/]", prefix + branch, label,
                   "; ".join(node["qa"]))
    else:
        render.result("  {}{}", prefix + branch, label)
    below = prefix + ("" if top else ("    " if last else "│   "))
    for index, child in enumerate(node["children"]):
        _tree(child, below, index == len(node["children"]) - 1, False)


def show(document: dict[str, Any]) -> None:
    bundle, provenance = document["bundle"], document["provenance"]
    verdict = "[bold green]verified[/]" if document["ok"] else "[bold red]refused[/]"
    if bundle is None:
        render.result("[bold]{}[/]  " + verdict, document["path"])
    else:
        render.result("[bold]{} {}[/]  {}  {}  " + verdict, bundle["id"], bundle["version"],
                   bundle["target"], bundle["channel"])
        render.result("  name        {}", bundle["name"])
        render.result("  profile     {}   ABI {}.{}   wire {}", bundle["profile"],
                   bundle["abi"]["major"], bundle["abi"]["minor"], bundle["wire_schema"])
        render.result("  features    {}", ", ".join(bundle["features"]) or "(none)")
        render.result("  library     {}  {} bytes  sha256 {}", bundle["library"]["path"],
                   bundle["library"]["size"], bundle["library"]["sha256"])
        render.result("  license     {} ({})", bundle["license"]["spdx"], bundle["license"]["path"])
    if provenance is not None:
        render.result("  evidence    {}", provenance["evidence"])
        invocation = provenance["invocation"]
        if invocation is not None:
            render.result("  invocation  {}  (exit {})", " ".join(invocation["argv"]),
                       invocation["exit_status"])
            toolchain = invocation["toolchain"]
            render.result("  toolchain   {}; {}", toolchain.get("cargo", "?"),
                       toolchain.get("rustc", "?"))
        if provenance["record_sha256"]:
            render.result("  record      sha256 {}", provenance["record_sha256"])
        source = provenance["source"]
        state = (source["revision"] or "no git revision") + (
            " (dirty)" if source["dirty"] else "")
        render.result("  source      {}", state)
        render.result("  builder     {}", provenance["builder_id"])
        advertised = provenance["advertised"]
        if advertised is not None:
            render.result("  advertised  ABI {}.{}, {}, features {}  (from {})",
                       advertised["abi_major"], advertised["abi_minor"],
                       advertised["wire_schema"], ", ".join(advertised["features"]) or "none",
                       ", ".join(advertised.get("observed_by", [])) or "?")
        graph = provenance["graph"]
        if graph is None:
            render.result("  graph       [yellow]none recorded[/]")
        else:
            count = graph["packages"]
            render.result("[bold]graph[/] ({} {}, {} QA provider{})", count,
                       "package" if count == 1 else "packages", len(graph["qa_providers"]),
                       "" if len(graph["qa_providers"]) == 1 else "s")
            _tree(graph["tree"], "", True, True)
            if graph["cut"]:
                render.result("  [dim]… the tree is cut here ({} packages in all)[/]", count)
    if document["files"]:
        render.result("[bold]files[/]")
        width = max(len(f["path"]) for f in document["files"])
        for item in document["files"]:
            render.result("  {}  {}  sha256 {}", item["path"].ljust(width),
                       str(item["size"]).rjust(10), item["sha256"])


def run(args: argparse.Namespace) -> int:
    args.subject = str(args.path)
    report, document = inspect_path(args.path)
    show(document)
    render.findings(report.findings, subject=str(args.path))
    if args.json:
        render.print_json(document)
    return report.exit_status
