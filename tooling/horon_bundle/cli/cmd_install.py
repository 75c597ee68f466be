"""`horon-bundle install`: a verified bundle into an agent home, like the host installs it."""

from __future__ import annotations

import argparse
from pathlib import Path

from horon_bundle.cli import render
from horon_bundle.cli.home_args import add_home_arguments, home_from_args
from horon_bundle.cli.signer_args import add_signer_arguments, identity_from_args, trust_from_args
from horon_bundle.core.errors import EXIT_OK
from horon_bundle.install.installer import INSTALLED, InstallRequest, install
from horon_bundle.rules.policy import load_policy
from horon_bundle.verify.audit import audit_options


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Verify a bundle directory or archive (every verify rule, release channel, graph "
        "present and QA-free, claimed = advertised, evidence, and the signature and policy "
        "options below), then copy it into HOME/native-plugins/<id>/<version>/<target> through "
        "a staging directory that is verified again and renamed into place. Runs nothing. "
        "The same bytes again are 'already installed'; other bytes under an installed "
        "version are refused. POSIX only; see docs/install.md."
    )
    parser.add_argument("path", type=Path, metavar="PATH", help="bundle directory or .zip")
    parser.add_argument("--enable", action="store_true",
                        help="also enable this version for its target (replacing the one "
                             "enabled)")
    parser.add_argument("--allow-qa", action="store_true",
                        help="accept a bundle of the qa channel (QA providers allowed)")
    parser.add_argument("--require-signature", action="store_true",
                        help="refuse an archive without a valid <archive>.sigstore.json from "
                             "the named signer")
    parser.add_argument("--policy", type=Path, metavar="FILE",
                        help="audit policy (TOML, docs/auditing.md): every requirement must hold")
    add_home_arguments(parser, writes=True)
    add_signer_arguments(parser, what="the archive")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    options = audit_options(
        identity=identity_from_args(args), trust=trust_from_args(args),
        require_signature=args.require_signature,
        policy=load_policy(args.policy) if args.policy is not None else None)
    home, parents = home_from_args(args)
    request = InstallRequest(source=args.path, home=home, create_parents=parents,
                             options=options, allow_qa=args.allow_qa, enable=args.enable,
                             lock_timeout=args.lock_timeout)
    reporter = render.ConsoleReporter()
    try:
        result = install(request, reporter)
    finally:
        reporter.close()
    words = f"{result.plugin_id} {result.version} {result.target}"
    if result.status == INSTALLED:
        render.say("[bold green]installed[/] {}", words)
    else:
        detail = "same bytes; nothing written" if not result.wrote else "same bytes"
        render.say("[bold green]already installed[/] {} ({})", words, detail)
    render.say("        -> {}", result.home / result.location)
    for note in result.notes:
        render.say("[yellow]note:[/] {}", note)
    if result.enabled:
        render.say("enabled for {}", result.target)
    else:
        render.say("not enabled: horon-bundle enable {} {}", result.plugin_id, result.version)
    if args.json:
        render.print_json(result.to_json())
    return EXIT_OK
