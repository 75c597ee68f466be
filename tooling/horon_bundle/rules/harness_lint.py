"""Hook lint: pure rules over a plugin's catalogue and files, each finding with its code.

Refusals (in build and verify alike): a command or script referenced through
`${CLAUDE_PLUGIN_ROOT}` that is not in the bundle, or resolves outside it. Warnings, naming
the hosts they matter to (refusals under `--strict`, or when the chosen host profile marks the
behaviour broken, see `promote`): a credential read from the environment, a
`permissionDecision: "ask"`, an HTTP PreToolUse hook, an unresolvable path, a bundled script
run directly without its executable bit.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings
from horon_bundle.model.harness.catalogue import Catalogue
from horon_bundle.model.harness.profile import HostProfile
from horon_bundle.rules.harness_refs import (
    DYNAMIC,
    MAX_FOLLOWED,
    MISSING,
    OUTSIDE,
    RootReference,
    exec_references,
    local_imports,
    shell_references,
)

# names whose value is a secret: a component (between underscores) such as TOKEN, SECRET …
CREDENTIAL_NAME = re.compile(
    r"(?i)(?:^|_)(?:[A-Z0-9]*TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|APIKEY|API_KEY|"
    r"ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|AUTH|BEARER|COOKIE)(?:_|$)")
_NAME = r"([A-Za-z_][A-Za-z0-9_]*)"
ENV_READS = (
    re.compile(r"\$\{?" + _NAME),  # shell, also inside hook command lines and headers
    re.compile(r"os\.environ(?:\.get)?\s*[\[(]\s*['\"]" + _NAME),  # Python
    re.compile(r"os\.getenv\(\s*['\"]" + _NAME),
    re.compile(r"process\.env(?:\.|\[\s*['\"])" + _NAME),  # Node
    re.compile(r"Deno\.env\.get\(\s*['\"]" + _NAME),
    re.compile(r"ENV(?:\.fetch\(|\[)\s*['\"]" + _NAME),  # Ruby
    re.compile(r"(?:os\.Getenv|os\.LookupEnv|getenv)\(\s*['\"]" + _NAME),  # Go, PHP, C
)
PERMISSION_ASK = re.compile(
    r"permissionDecision\\?['\"]?\s*[:=,]\s*\\?['\"]ask\\?['\"]")
_NOT_SECRETS = {"CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR"}
MAX_SCRIPT_BYTES = 1 << 20
_MAX_NAME = 128  # longer identifiers are no environment variables worth judging
WHO = {
    codes.HOOK_ENV_CREDENTIAL.name: "hosts that run hooks with a cleared environment",
    codes.HOOK_PERMISSION_ASK.name: "hosts with no permission prompt record \"ask\" and "
                                    "treat it as allow",
    codes.HOOK_HTTP_PRETOOLUSE.name: "a host whose HTTP hooks fail closed denies the call "
                                     "when the endpoint fails; Claude Code lets it through "
                                     "(open)",
}


@dataclass(slots=True)
class LintResult:
    refusals: Findings = field(default_factory=Findings)
    warnings: Findings = field(default_factory=Findings)
    scripts: set[str] = field(default_factory=set)  # bundle files the hooks and servers run


def credential_reads(text: str, shell: bool = True) -> list[str]:
    """Credential-like environment variables `text` reads (`shell`: also `$NAME`)."""
    found: set[str] = set()
    for pattern in ENV_READS if shell else ENV_READS[1:]:
        for match in pattern.finditer(text):
            name = match.group(1)
            if (len(name) <= _MAX_NAME and name not in _NOT_SECRETS
                    and CREDENTIAL_NAME.search(name)):
                found.add(name)
    return sorted(found)


def _matters(code: str, profiles: Sequence[HostProfile]) -> str:
    broken = [p.token for p in profiles if code in p.broken]
    where = WHO.get(code, "")
    if broken:
        where += f"; broken on {', '.join(broken)}" if where else f"broken on {', '.join(broken)}"
    return f" (matters to: {where})" if where else ""


def lint(catalogue: Catalogue, files: Mapping[str, Any],
         read_text: Callable[[str], str | None],
         profiles: Sequence[HostProfile]) -> LintResult:
    """Every hook-lint finding of the plugin; `read_text` gives a bundle file's text (None
    for binary or oversized files); `profiles` are the hosts named in warnings."""
    result = LintResult()
    reached: dict[str, list[str]] = {}  # bundle file -> the hooks and servers that run it
    for hook in catalogue.hooks:
        where = f"{hook.source}: {hook.where} ({hook.event})"
        inline: list[str] = []
        if hook.type == "command" and (command := hook.text("command")) is not None:
            args = hook.args()
            references = (exec_references(command, args) if args is not None
                          else shell_references(command))
            inline += [command, *(args or ())]
            _references(where, references, files=files, reached=reached, result=result)
        if hook.type == "http":
            if hook.event == "PreToolUse":
                code = codes.HOOK_HTTP_PRETOOLUSE
                result.warnings.add(code, f"{where}: HTTP hook {hook.text('url')!r} guards "
                                          f"PreToolUse{_matters(code.name, profiles)}")
            headers = hook.fields.get("headers")
            allowed = hook.fields.get("allowedEnvVars")
            names = set(allowed) if isinstance(allowed, list) else set()
            if isinstance(headers, dict):
                names |= {m.group(1) for value in headers.values()
                          for m in ENV_READS[0].finditer(str(value))}
            if names:
                _credential(where, "sends headers from environment variables "
                            f"{', '.join(sorted(names))}", result, profiles)
        _scan(where, [(True, text) for text in inline], result, profiles)
    for server in catalogue.servers:
        where = f"{server.source}: mcpServers.{server.name}"
        runs: list[RootReference] = []
        if isinstance(command := server.fields.get("command"), str):
            runs = exec_references(command, server.args())
        _references(where, runs, files=files, reached=reached, result=result)
        _scan(where, [(True, value) for _key, value in server.strings()], result, profiles)
    for path, (origin, texts) in _closure(reached, files, read_text).items():
        users = reached[origin]
        run_by = users[0] + (f" and {len(users) - 1} more" if len(users) > 1 else "")
        pulled = "" if origin == path else f", imported by {origin}"
        _scan(f"{path} (run by {run_by}{pulled})", texts, result, profiles)
    return result


def _references(where: str, references: list[RootReference], *, files: Mapping[str, Any],
                reached: dict[str, list[str]], result: LintResult) -> None:
    for reference in references:
        state = reference.resolve(files)
        shown = f"{reference.field} {reference.word!r}"
        if state == MISSING:
            result.refusals.add(codes.HOOK_COMMAND_MISSING,
                                f"{where}: {shown}: {reference.path} is not in the bundle")
        elif state == OUTSIDE:
            result.refusals.add(codes.HOOK_COMMAND_OUTSIDE,
                                f"{where}: {shown} resolves outside the plugin root")
        elif state == DYNAMIC:
            result.warnings.add(codes.HOOK_COMMAND_UNRESOLVED,
                                f"{where}: {shown}: the path is not static, not checked")
        elif reference.path and reference.path in files:
            result.scripts.add(reference.path)
            reached.setdefault(reference.path, []).append(where)
            if reference.runs_directly and files[reference.path].executable is False:
                result.warnings.add(codes.HOOK_NOT_EXECUTABLE,
                                    f"{where}: {reference.path} is run directly but is not "
                                    "executable (the host gets 'permission denied')")


def _is_shell(path: str, text: str) -> bool:
    if path.endswith((".sh", ".bash", ".zsh", ".ksh")):
        return True
    first = text.split("\n", 1)[0]
    return first.startswith("#!") and first.rstrip().endswith(("sh", "bash", "zsh"))


def _closure(reached: Mapping[str, list[str]], files: Mapping[str, Any],
             read_text: Callable[[str], str | None],
             ) -> dict[str, tuple[str, list[tuple[bool, str]]]]:
    """Every file the hooks run, and the bundle files those import or source, transitively:
    path -> (the script run that pulls it in, [(is shell, text)])."""
    found: dict[str, tuple[str, list[tuple[bool, str]]]] = {}
    origin = {path: path for path in reached}
    queue = sorted(reached)
    while queue and len(origin) <= MAX_FOLLOWED:
        current = queue.pop(0)
        text = read_text(current)
        if text is None:
            continue
        found[current] = (origin[current], [(_is_shell(current, text), text)])
        for imported in local_imports(current, text, files):
            if imported not in origin:
                origin[imported] = origin[current]
                queue.append(imported)
    return found


def _scan(where: str, texts: list[tuple[bool, str]], result: LintResult,
          profiles: Sequence[HostProfile]) -> None:
    names = sorted({name for shell, text in texts for name in credential_reads(text, shell)})
    if names:
        _credential(where, f"reads {', '.join(names)} from the environment", result, profiles)
    if any(PERMISSION_ASK.search(text) for _shell, text in texts):
        code = codes.HOOK_PERMISSION_ASK
        result.warnings.add(code, f"{where}: answers permissionDecision \"ask\""
                                  f"{_matters(code.name, profiles)}")


def _credential(where: str, what: str, result: LintResult,
                profiles: Sequence[HostProfile]) -> None:
    code = codes.HOOK_ENV_CREDENTIAL
    result.warnings.add(code, f"{where}: {what}{_matters(code.name, profiles)}")


def promote(warnings: Findings, *, strict: bool,
            host: HostProfile | None) -> tuple[list[Finding], list[Finding]]:
    """(refusals, warnings): every warning under --strict; those the chosen host marks
    broken otherwise. The rest stay warnings."""
    refused: list[Finding] = []
    kept: list[Finding] = []
    for finding in warnings:
        reason = host.broken.get(finding.code.name) if host is not None else None
        if strict:
            refused.append(Finding(finding.code, f"{finding.message} [--strict]"))
        elif reason is not None and host is not None:
            refused.append(Finding(finding.code,
                                   f"{finding.message} [broken on {host.token}: {reason}]"))
        else:
            kept.append(finding)
    return refused, kept
