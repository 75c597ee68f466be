"""`--log STORE --log-key KEY [--witness KEY …] [--witnesses-required K]` of `verify` and
`install`: the store's entry for the archive must be in the store's transparency log
(docs/transparency-log.md). The log's modules are imported only when --log is given."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.core import codes
from horon_bundle.core.errors import Refused


def add_log_arguments(parser: argparse.ArgumentParser, *, home: bool = False) -> None:
    group = parser.add_argument_group("transparency log (docs/transparency-log.md)")
    group.add_argument("--log", metavar="STORE",
                       help="a local copy of the store (a directory or file:// URL): its "
                            "index entry for the archive must be in its log")
    group.add_argument("--log-key", metavar="VERIFIER",
                       help="the log's verifier key (<name>+<hash>+<key>) or a file holding it")
    group.add_argument("--witness", action="append", default=[], metavar="KEY",
                       help="a witness's verifier key (or a file holding it); repeat for each")
    group.add_argument("--witnesses-required", type=int, metavar="K",
                       help="cosignatures of the named witnesses required (default: all)")
    if home:
        group.add_argument("--home", type=named_path, metavar="DIR",
                           help="an agent home remembering the largest checkpoint seen (as "
                                "install does): a smaller or inconsistent one is refused")


def log_requested(args: argparse.Namespace) -> bool:
    given = [args.log is not None, args.log_key is not None]
    if any(given) and not all(given):
        raise Refused.one(codes.USAGE_INVALID, "--log and --log-key go together")
    if (args.witness or args.witnesses_required is not None) and not all(given):
        raise Refused.one(codes.USAGE_INVALID, "--witness needs --log and --log-key")
    required = args.witnesses_required
    if required is not None and not 1 <= required <= len(args.witness):
        raise Refused.one(codes.USAGE_INVALID, f"--witnesses-required {required}: between 1 "
                                               f"and the {len(args.witness)} --witness keys")
    return all(given)


def prove(args: argparse.Namespace, archive: Path, home: Path | None) -> Any:
    """The inclusion of `archive`'s store entry in the log, checked against what `home`
    remembers (a rollback or split view is refused)."""
    from horon_bundle.core.hashing import hash_file  # noqa: PLC0415 - only with --log
    from horon_bundle.install.log_memory import check_against  # noqa: PLC0415
    from horon_bundle.tlog.inclusion import WitnessPolicy, check_inclusion  # noqa: PLC0415
    from horon_bundle.tlog.store import load_verifier, store_root  # noqa: PLC0415

    if not archive.is_file():
        raise Refused.one(codes.USAGE_INVALID, f"{archive}: --log checks an archive or "
                                               "harness zip taken from a store, not a directory")
    verifier = load_verifier(args.log_key, "--log-key")
    witnesses = tuple(load_verifier(w, "--witness") for w in args.witness)
    policy = None if not witnesses else WitnessPolicy(
        witnesses=witnesses, required=args.witnesses_required or len(witnesses))
    root = store_root(args.log, "--log")
    proof = check_inclusion(root, verifier, hash_file(archive, what="archive").sha256, policy)
    if home is not None:
        check_against(home, verifier, proof)
    return proof


def remember(args: argparse.Namespace, proof: Any, home: Path | None) -> None:
    from horon_bundle.install.log_memory import remember as keep  # noqa: PLC0415
    from horon_bundle.tlog.store import load_verifier  # noqa: PLC0415

    if home is not None:
        keep(home, load_verifier(args.log_key, "--log-key"), proof)


def say_proof(proof: Any) -> None:
    witnesses = f", cosigned by {', '.join(proof.cosigned_by)}" if proof.cosigned_by else ""
    render.result("[bold green]in the log[/] {}: leaf {} of {}'s checkpoint of {} leaves{}",
               proof.place, proof.index, proof.checkpoint.origin, proof.checkpoint.size,
               witnesses)
