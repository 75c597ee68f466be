"""`horon-bundle new NAME`: start a plugin workspace from the templates shipped in the package."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.words import shown_path
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.scaffold.new import NewRequest, new_workspace
from horon_bundle.scaffold.templates import LICENSES


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Create a plugin workspace NAME: a Rust cdylib implementing ABI v1 (the example "
        "plugin with its names replaced), horon-release.toml (the plugin id's only place), "
        "Cargo.lock (so --locked builds work offline), the C header, LICENSE, .gitignore, "
        "README, a noxfile.py and .github/workflows/release.yml. Never overwrites anything."
    )
    parser.add_argument("name", metavar="NAME",
                        help="the plugin id and cargo package name, e.g. acme-notes")
    parser.add_argument("--dir", type=named_path, default=None, metavar="D",
                        help="the directory to create (default: ./NAME); it must not exist")
    parser.add_argument("--license", choices=LICENSES, default="Apache-2.0",
                        help="the licence of the new plugin (default: Apache-2.0)")
    parser.add_argument("--no-git", dest="git", action="store_false",
                        help="do not make the new directory a git repository")
    parser.add_argument("--json", action="store_true", help="print a JSON result on stdout")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    result = new_workspace(NewRequest(name=args.name, directory=args.dir, license=args.license,
                                      git=args.git))
    where = shown_path(result.workspace)
    render.result("[bold green]created[/] {}  (plugin {}, package {}, {}{})", where,
               result.names.plugin_id, result.names.package, result.names.license,
               ", git repository" if result.git else "")
    render.say("next:")
    render.say("  cd {}", where)
    render.say("  horon-bundle build")
    if args.json:
        render.print_json({"format": "horon.new-result.v1", "ok": True,
                           "workspace": str(result.workspace), "id": result.names.plugin_id,
                           "package": result.names.package, "license": result.names.license,
                           "files": list(result.files), "git": result.git})
    return EXIT_OK
