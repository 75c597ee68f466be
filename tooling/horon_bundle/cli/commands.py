"""The command table: each command's module under `horon_bundle.cli` and its one-line help.

Plain data, so that `--version` and `--help` read it without importing any command.
"""

from __future__ import annotations

PROG = "horon-bundle"
# name -> (module under horon_bundle.cli, one-line help), in the order `--help` lists them
COMMANDS: dict[str, tuple[str, str]] = {
    "new": ("cmd_new", "start a plugin workspace from the shipped templates"),
    "build": ("cmd_build", "build and bundle a plugin"),
    "compile": ("cmd_compile", "build the library and write an artifact record"),
    "verify": ("cmd_verify", "verify a bundle directory or archive"),
    "doctor": ("cmd_doctor",
               "load a bundle's library in a child process and check the ABI contract"),
    "publish": ("cmd_publish", "publish a release's archives (gated by two variables)"),
    "yank": ("cmd_yank",
             "withdraw a published version (its bytes stay; it can never be reused)"),
    "sign": ("cmd_sign", "sign archives and artifact records with Sigstore (in CI)"),
    "reproduce": ("cmd_reproduce", "rebuild a bundle from source and compare it byte for byte"),
    "inspect": ("cmd_inspect", "show what a bundle holds: identity, graph, evidence, digests"),
    "install": ("cmd_install", "verify a bundle and install it into an agent home"),
    "list": ("cmd_list", "list the plugins installed in an agent home"),
    "enable": ("cmd_enable", "enable one installed version of a plugin"),
    "disable": ("cmd_disable", "disable a plugin (it stays installed)"),
    "status": ("cmd_status", "installed copies, the enabled one, and whether they verify"),
    "check": ("cmd_check", "re-verify an installed plugin before loading it"),
    "uninstall": ("cmd_uninstall", "remove an installed version from an agent home"),
    "codes": ("cmd_codes", "list every refusal code"),
    "profiles": ("cmd_profiles", "list the shipped harness host profiles (--host NAME@VERSION)"),
    "docs": ("cmd_docs", "print a page of the documentation shipped with horon-bundle"),
}
