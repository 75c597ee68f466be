"""`horon-bundle`: argument parsing, dispatch, and the one place refusals become exit codes."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from collections.abc import Sequence

import horon_bundle
from horon_bundle.cli import (
    cmd_build,
    cmd_codes,
    cmd_compile,
    cmd_doctor,
    cmd_publish,
    cmd_reproduce,
    cmd_sign,
    cmd_verify,
    cmd_yank,
    render,
)
from horon_bundle.errors import EXIT_INTERNAL, EXIT_USAGE, Refused

COMMANDS = (cmd_build, cmd_compile, cmd_verify, cmd_doctor, cmd_publish, cmd_yank,
            cmd_sign, cmd_reproduce, cmd_codes)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        render.stderr.print(f"[bold red]usage error:[/] {message}")
        raise SystemExit(EXIT_USAGE)


def parser() -> argparse.ArgumentParser:
    top = _Parser(prog="horon-bundle",
                  description="Build, check, sign, publish and audit native plugin bundles.")
    top.add_argument("--version", action="version", version=horon_bundle.__version__)
    sub = top.add_subparsers(dest="command", required=True, metavar="COMMAND",
                             parser_class=_Parser)
    for command in COMMANDS:
        command.register(sub)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    as_json = bool(getattr(args, "json", False))
    try:
        status: int = args.run(args)
    except Refused as exc:
        if as_json:
            render.print_json(render.refusal_document(exc.findings, exc.exit_status))
        render.findings(exc.findings)
        return exc.exit_status
    except KeyboardInterrupt:
        render.stderr.print("[bold red]interrupted[/]")
        return 130
    except Exception as exc:  # noqa: BLE001 - the last line of defence: no traceback for users
        if os.environ.get("HORON_DEBUG"):
            traceback.print_exc()
        render.stderr.print(f"[bold red]INTERNAL ERROR[/] {type(exc).__name__}: {exc}")
        render.stderr.print("  [dim]hint:[/] this is a horon-bundle bug; rerun with "
                            "HORON_DEBUG=1 and report the traceback")
        return EXIT_INTERNAL
    return status
