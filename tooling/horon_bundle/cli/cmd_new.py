"""`horon-bundle new NAME`: start a plugin workspace from the templates shipped in the package."""

from __future__ import annotations

import argparse

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.words import shown_path
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.scaffold.new import NewRequest, new_workspace
from horon_bundle.scaffold.pin import INSTALL_SCRIPT
from horon_bundle.scaffold.templates import LICENSES


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Create a plugin workspace NAME: a Rust cdylib implementing ABI v1 (the example "
        "plugin with its names replaced), horon-release.toml (the plugin id's only place), "
        "Cargo.lock (so --locked builds work offline), the C header, LICENSE, .gitignore, "
        "README, a noxfile.py, .github/workflows/release.yml and the script its jobs install "
        "horon-bundle with (pinned by commit, else a placeholder that stops the job until "
        "you pin it). Never overwrites anything."
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


def next_steps(where: str, plugin_id: str, *, git: bool) -> list[str]:
    """What to run next: the README's first-plugin steps, in its order (a test keeps them
    equal), the commit working before git knows its user."""
    bundle = f"dist/{plugin_id}-0.1.0-<target>"
    return ["next:", f"  cd {where}",
            *(['  git add -A && git -c user.name="Your Name" -c user.email="you@example.com" '
               'commit -q -m "a new plugin"'] if git else []),
            f"  horon-bundle build                      # writes {bundle}.zip",
            f"  horon-bundle verify {bundle}.zip",
            f"  horon-bundle doctor {bundle}",
            "  HORON_PUBLISH_ENABLED=true HORON_PUBLISH_DESTINATION=file:///abs/store "
            "horon-bundle publish",
            f"  horon-bundle inspect {bundle}.zip",
            "  (horon-bundle docs getting-started explains each step)"]


def run(args: argparse.Namespace) -> int:
    result = new_workspace(NewRequest(name=args.name, directory=args.dir, license=args.license,
                                      git=args.git))
    where = shown_path(result.workspace)
    render.result("[bold green]created[/] {}  (plugin {}, package {}, {}{})", where,
               result.names.plugin_id, result.names.package, result.names.license,
               ", git repository" if result.git else "")
    if result.pin.kind == "commit":
        render.say("the release workflow installs horon-bundle by commit: {}",
                   result.pin.requirement)
    else:
        render.warning(f"the release workflow's horon-bundle is NOT pinned ({result.pin.reason}): "
                       f"{INSTALL_SCRIPT} stops every release job until you set it to install "
                       "by hashes or by a commit (horon-bundle docs publishing)")
    for line in next_steps(where, result.names.plugin_id, git=result.git):
        render.say("{}", line)
    if args.json:
        render.print_json({"format": "horon.new-result.v1", "ok": True,
                           "workspace": str(result.workspace), "id": result.names.plugin_id,
                           "package": result.names.package, "license": result.names.license,
                           "files": list(result.files), "git": result.git,
                           "pin": {"kind": result.pin.kind,
                                   "requirement": result.pin.requirement,
                                   "reason": result.pin.reason or None}})
    return EXIT_OK
