"""`horon-bundle install`: a verified bundle into an agent home, like the host installs it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from horon_bundle.cli import render
from horon_bundle.cli.argtypes import named_path
from horon_bundle.cli.home_args import add_home_arguments, home_from_args
from horon_bundle.cli.log_args import add_log_arguments, log_requested, prove, remember, say_proof
from horon_bundle.cli.signer_args import add_signer_arguments, identity_from_args, trust_from_args
from horon_bundle.core import codes
from horon_bundle.core.errors import EXIT_OK, Refused
from horon_bundle.core.hashing import hash_file
from horon_bundle.install.harness_installer import INSTALLED as HARNESS_INSTALLED
from horon_bundle.install.harness_installer import HarnessInstallResult
from horon_bundle.install.installer import INSTALLED, InstallRequest, install
from horon_bundle.model.checks import PASS
from horon_bundle.model.harness.profile import resolve_profile
from horon_bundle.rules.policy import load_policy
from horon_bundle.verify.audit import audit_options
from horon_bundle.verify.harness.options import HarnessOptions

if TYPE_CHECKING:
    from horon_bundle.verify.signature import SignatureVerifier


def configure(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Verify a bundle directory or archive (every verify rule, release channel, graph "
        "present and QA-free, claimed = advertised, evidence, and the signature and policy "
        "options below), then copy it into HOME/native-plugins/<id>/<version>/<target> through "
        "a staging directory that is verified again and renamed into place. A harness zip "
        "(or its .ref.json) is judged by the harness rules (--host, --strict) and stored as "
        "HOME/harness-bundles/sha256/<hex>.zip, its catalogue recorded in state.json. Runs "
        "nothing. The same bytes again are 'already installed'; other bytes under an "
        "installed version are refused. POSIX only; see docs/install.md."
    )
    parser.add_argument("path", type=named_path, metavar="PATH",
                        help="bundle directory or .zip; a harness .zip or <zip>.ref.json")
    parser.add_argument("--enable", action="store_true",
                        help="also enable this version for its target (replacing the one "
                             "enabled)")
    parser.add_argument("--allow-qa", action="store_true",
                        help="accept a bundle of the qa channel (QA providers allowed)")
    parser.add_argument("--require-signature", action="store_true",
                        help="refuse an archive without a valid <archive>.sigstore.json from "
                             "the named signer")
    parser.add_argument("--policy", type=named_path, metavar="FILE",
                        help="audit policy (TOML, docs/auditing.md): every requirement must hold")
    add_home_arguments(parser, writes=True)
    add_signer_arguments(parser, what="the archive")
    harness = parser.add_argument_group("harness bundles (docs/harness.md)")
    harness.add_argument("--host", metavar="PROFILE[@VERSION]|FILE",
                         help="name every declared hook event this host cannot fire "
                              "(`horon-bundle profiles` lists the shipped ones)")
    harness.add_argument("--strict", action="store_true", help="every warning is a refusal")
    harness.add_argument("--zip", metavar="PATH", help="the zip a <zip>.ref.json names, when "
                                                       "it is not beside the ref")
    parser.add_argument("--attestation", type=named_path, metavar="FILE",
                        help="a signed release statement (its .sigstore.json, or the statement "
                             "beside it) that must name the archive: signed by the signer "
                             "--identity/--issuer or --github-repository name "
                             "(docs/release-statement.md)")
    add_log_arguments(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    options = audit_options(
        identity=identity_from_args(args), trust=trust_from_args(args),
        require_signature=args.require_signature,
        policy=load_policy(args.policy) if args.policy is not None else None)
    home, parents = home_from_args(args)
    harness = HarnessOptions(host=resolve_profile(args.host) if args.host else None,
                             strict=args.strict, zip_path=args.zip)
    proof = prove(args, args.path, home) if log_requested(args) else None
    expected = proof.archive_sha256 if proof else None
    if args.attestation is not None:
        attested = _attested(args, options.verifier)
        if expected is not None and attested != expected:
            raise Refused.one(codes.INSTALL_INTEGRITY, f"{args.path}: sha256 {attested} "
                                                       f"when attested, {expected} when logged")
        expected = attested
    request = InstallRequest(source=args.path, home=home, create_parents=parents,
                             options=options, allow_qa=args.allow_qa, enable=args.enable,
                             lock_timeout=args.lock_timeout, harness=harness,
                             expected_sha256=expected)
    reporter = render.ConsoleReporter()
    try:
        result = install(request, reporter)
    finally:
        reporter.close()
    if proof is not None:
        remember(args, proof, home)
        say_proof(proof)
    if isinstance(result, HarnessInstallResult):
        return _harness(result, json=args.json)
    words = f"{result.plugin_id} {result.version} {result.target}"
    if result.status == INSTALLED:
        render.result("[bold green]installed[/] {}", words)
    else:
        detail = "same bytes; nothing written" if not result.wrote else "same bytes"
        render.result("[bold green]already installed[/] {} ({})", words, detail)
    render.result("        -> {}", result.home / result.location)
    for note in result.notes:
        render.say("[yellow]note:[/] {}", note)
    if result.enabled:
        render.result("enabled for {}", result.target)
    else:
        render.result("not enabled: horon-bundle enable {} {}", result.plugin_id, result.version)
    if args.json:
        render.print_json(result.to_json())
    return EXIT_OK


def _attested(args: argparse.Namespace, verifier: SignatureVerifier | None) -> str:
    """The archive's SHA-256, once a signed release statement proves it one of its subjects:
    the install then admits exactly those bytes (`expected_sha256`)."""
    from horon_bundle.verify.attestation import check_attestation  # noqa: PLC0415 - on use

    if verifier is None:
        raise Refused.one(codes.SIGNATURE_OPTIONS,
                          "--attestation needs the expected signer: --identity and --issuer, "
                          "or --github-repository (a statement signed by anyone proves nothing)")
    path: Path = args.path
    if not path.name.endswith(".zip") or not path.is_file() or path.is_symlink():
        raise Refused.one(codes.USAGE_INVALID, f"--attestation: {path} is not an archive "
                                               "(.zip) file")
    sha256 = hash_file(path, what="archive", follow_symlinks=False).sha256
    check = check_attestation(path.name, sha256, args.attestation, verifier)
    if check.status != PASS:
        raise Refused(check.findings)
    render.say("• {}", check.note)
    return sha256


def _harness(result: HarnessInstallResult, *, json: bool) -> int:
    render.warnings(result.warnings)
    words = f"{result.name} {result.version}"
    if result.status == HARNESS_INSTALLED:
        render.result("[bold green]installed[/] {} (harness, sha256 {})", words, result.sha256)
    else:
        detail = "same bytes; nothing written" if not result.wrote else "same bytes"
        render.result("[bold green]already installed[/] {} ({})", words, detail)
    render.result("        -> {}", result.home / result.location)
    for note in result.notes:
        render.say("[yellow]note:[/] {}", note)
    if json:
        render.print_json(result.to_json())
    return EXIT_OK
