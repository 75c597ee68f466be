"""`horon-bundle profiles`: the shipped host profiles, one line each, starting with the exact
token `--host` accepts."""

from __future__ import annotations

import argparse
import sys

from horon_bundle.cli import render
from horon_bundle.cli.escaping import plain
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.model.harness.profile import shipped_profiles


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = ("List the host profiles shipped with horon-bundle: each line starts "
                          "with the NAME@VERSION that `verify --host` and `build --host` accept.")
    parser.add_argument("--json", action="store_true", help="as a JSON document")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    profiles = shipped_profiles()
    if args.json:
        render.print_json({"format": "horon.host-profiles.v1", "profiles": [
            {"token": p.token, "host": p.host, "version": p.version,
             "description": p.description, "source": p.source, "fired": list(p.fired),
             "understood": list(p.understood), "absent": list(p.absent),
             "broken": dict(p.broken)} for p in profiles]})
        return EXIT_OK
    for profile in profiles:  # the listing is this command's output: on stdout, escaped
        sys.stdout.write(plain(f"{profile.token}  {profile.description} "
                               f"({len(profile.fired)} events fired; from {profile.source})")
                         + "\n")
    return EXIT_OK
