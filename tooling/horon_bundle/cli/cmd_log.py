"""`horon-bundle log`: the transparency log of a store — `keygen` makes its key pair,
`verify` is the monitor (docs/transparency-log.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.escaping import plain
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.core.files import write_new
from horon_bundle.core.inputs import read_input

LOG_VERIFY_FORMAT = "horon.log-verify.v1"
LOG_KEYGEN_FORMAT = "horon.log-keygen.v1"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = "Keep and check the transparency log of a file:// store."
    sub = parser.add_subparsers(dest="log_command", required=True, metavar="SUBCOMMAND",
                                parser_class=type(parser), help="keygen or verify")
    keygen = sub.add_parser("keygen", help="write a signer key file (0600) and print its "
                                           "verifier key")
    keygen.add_argument("name", metavar="NAME", help="the log's name: its checkpoints' origin "
                                                     "line (e.g. example.com/plugins)")
    keygen.add_argument("--out", type=named_path, default=Path("log-signer.key"),
                        help="the signer file to create (default: log-signer.key; never "
                             "overwritten)")
    keygen.add_argument("--witness", action="store_true",
                        help="a witness's key (a tlog-cosignature/v1 key, type 0x04)")
    keygen.add_argument("--json", action="store_true", help="print the result as JSON")
    keygen.set_defaults(run=run_keygen)
    verify = sub.add_parser("verify", help="recompute a store's log and check it against the "
                                           "store (a monitor)")
    verify.add_argument("store", metavar="STORE", help="the store: a directory or file:// URL")
    verify.add_argument("--key", required=True, metavar="VERIFIER",
                        help="the log's verifier key (<name>+<hash>+<key>) or a file holding it")
    verify.add_argument("--since", type=named_path, metavar="CHECKPOINT",
                        help="a checkpoint seen before (the one the last run printed): the "
                             "log must extend it")
    verify.add_argument("--json", action="store_true", help="print the result as JSON")
    verify.set_defaults(run=run_verify)


def run_keygen(args: argparse.Namespace) -> int:
    from horon_bundle.tlog.note import COSIGNATURE_V1, ED25519, generate  # noqa: PLC0415

    signer = generate(args.name, COSIGNATURE_V1 if args.witness else ED25519)
    write_new(args.out, (signer.text + "\n").encode(), mode=0o600)
    verifier = signer.verifier.text
    if args.json:
        render.print_json({"format": LOG_KEYGEN_FORMAT, "ok": True, "name": signer.name,
                           "signer_file": str(args.out), "verifier": verifier,
                           "witness": bool(args.witness)})
    else:
        sys.stdout.write(plain(verifier) + "\n")
    render.say("note: signer key written to {} (mode 0600): keep it secret "
               "(docs/transparency-log.md)", args.out)
    return EXIT_OK


def run_verify(args: argparse.Namespace) -> int:
    from horon_bundle.tlog.checkpoint import open_checkpoint  # noqa: PLC0415
    from horon_bundle.tlog.monitor import monitor  # noqa: PLC0415
    from horon_bundle.tlog.store import MAX_LOG_FILE_BYTES, load_verifier, store_root  # noqa: PLC0415

    verifier = load_verifier(args.key, "--key")
    root = store_root(args.store, "STORE")
    args.subject = str(root)
    since = None
    if args.since is not None:
        data = read_input(args.since, limit=MAX_LOG_FILE_BYTES, what="--since")
        assert data is not None
        since = open_checkpoint(data, verifier, f"--since {args.since}")
    result = monitor(root, verifier, since)
    checkpoint = result.checkpoint
    if args.json:
        render.print_json({
            "format": LOG_VERIFY_FORMAT, "ok": True, "store": "file://" + root.as_posix(),
            "origin": checkpoint.origin, "size": checkpoint.size,
            "root": checkpoint.root_base64, "entries": result.entries,
            "since": None if since is None else {"size": since.size,
                                                 "root": since.root_base64},
            "checkpoint": checkpoint.text.decode()})
        return EXIT_OK
    # the checkpoint, line for line (its reader refused every control character but newlines)
    lines = checkpoint.text.decode().split("\n")[:-1]
    sys.stdout.write("".join(plain(line) + "\n" for line in lines))
    extended = "" if since is None else f", extending the {since.size} seen before"
    # stdout holds the checkpoint alone (kept for the next run's --since): the verdict is a note
    render.say("note: log verified: {} leaves{}, each the store's entry; every entry of the "
               "store is in it", checkpoint.size, extended)
    return EXIT_OK
