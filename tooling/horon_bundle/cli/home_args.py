"""Options every agent-home command shares: --home, --json, --target, --lock-timeout.

`--home` defaults to `$HORON_AGENT_HOME`, then `$XDG_DATA_HOME/horon-agent`, then
`~/.local/share/horon-agent` (docs/install.md says why). The default target is this host's,
derived from the platform without running anything (install runs no program).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from horon_bundle.cli.argtypes import named_path, positive_seconds
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.install.layout import resolve_home
from horon_bundle.install.lock import DEFAULT_LOCK_TIMEOUT
from horon_bundle.model.bundle_kind import KIND_NAMES, BundleKind

TYPE_CHECKING = False  # typing is not imported at run time (start-up: cli/main.py)
if TYPE_CHECKING:
    from typing import Any


def add_home_arguments(parser: Any, *, writes: bool = False, target: str | None = None) -> None:
    parser.add_argument("--home", type=named_path, metavar="DIR",
                        help="the agent home (default: $HORON_AGENT_HOME, else "
                             "$XDG_DATA_HOME/horon-agent, else ~/.local/share/horon-agent)")
    parser.add_argument("--json", action="store_true", help="print the result on stdout")
    if target is not None:
        parser.add_argument("--target", metavar="TRIPLE", help=target)
    if writes:
        parser.add_argument("--lock-timeout", type=positive_seconds,
                            default=DEFAULT_LOCK_TIMEOUT, metavar="S",
                            help="seconds to wait for another writer of the home (default "
                                 f"{DEFAULT_LOCK_TIMEOUT:g})")


def add_kind_argument(parser: Any) -> None:
    parser.add_argument("--kind", choices=KIND_NAMES,
                        help="which kind ID names, when the home holds both under that name")


def names_harness(home: Path, args: argparse.Namespace) -> bool:
    """Whether ID (`args.plugin_id`) names a harness bundle in `home` (`--kind`, else the one
    kind the home holds); a harness bundle has no targets, so `--target` is refused for it."""
    from horon_bundle.install.harness_survey import installed_kind  # noqa: PLC0415 - start-up

    if installed_kind(home, args.plugin_id, args.kind) != BundleKind.HARNESS:
        return False
    if args.target is not None:
        raise Refused.one(codes.HARNESS_UNSUPPORTED,
                          f"--target: {args.plugin_id} is a harness bundle (no targets)")
    return True


def home_from_args(args: argparse.Namespace) -> tuple[Path, bool]:
    """The home, and whether its missing parents may be created (the XDG default only)."""
    return resolve_home(args.home, os.environ)


def target_from_args(args: argparse.Namespace) -> str:
    if args.target is not None:
        return str(args.target)
    import platform  # noqa: PLC0415 - start-up: only the target needs it

    from horon_bundle.load.host import triple_from_platform  # noqa: PLC0415 - install alone

    triple = triple_from_platform(sys.platform, platform.machine(), platform.libc_ver()[0])
    if triple is None:
        raise Refused.one(codes.INSTALL_NAME, "this host's target is unknown; pass --target")
    return triple
