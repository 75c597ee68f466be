"""Hook lint: pure rules over a plugin's catalogue and files, each finding with its code.

Lint is a best-effort reader of what a plugin declares and of the text of the scripts it runs
— not a proof of what a script does when it runs (docs/harness.md, "What lint is"). It judges
decoded values and normalised commands, never the spelling: hook commands and shell scripts
through `rules.harness_shell` (quotes removed, programs reduced to their names, `sh -c` and
`$( … )` read again), Python through its syntax tree (`rules.harness_python`: any alias of
`os.environ`), other languages by patterns over their decoded text, and what a hook may answer
over its strings decoded as its host would decode them (`rules.harness_literals`).

Refusals (in build and verify alike): a command or script referenced through
`${CLAUDE_PLUGIN_ROOT}` that is not in the bundle, or resolves outside it. Warnings, naming
the hosts they matter to (refusals under `--strict`, or when the chosen host profile marks the
behaviour broken, see `promote`): a credential read from the environment (by name, or the
whole environment at once), a `permissionDecision: "ask"`, an HTTP PreToolUse hook, an
unresolvable path, a bundled script run directly without its executable bit — and whatever
lint cannot judge (`hook.unjudged`: a name or an answer computed at run time, a binary, a
script over its budget), so that `--strict` refuses what lint could not read.
"""

from __future__ import annotations

import re
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from horon_bundle.core import codes
from horon_bundle.core.errors import Finding, Findings
from horon_bundle.model.harness.catalogue import Catalogue
from horon_bundle.model.harness.file_index import FileIndex
from horon_bundle.model.harness.profile import HostProfile
from horon_bundle.rules.harness_literals import ENV_READS, permission_answers, read_patterns
from horon_bundle.rules.harness_python import read_python
from horon_bundle.rules.harness_reads import Reads
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
from horon_bundle.rules.harness_shell import read_argv, read_shell

# names whose value is a secret: a component (between underscores) such as TOKEN, SECRET …
CREDENTIAL_NAME = re.compile(
    r"(?i)(?:^|_)(?:[A-Z0-9]*TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE|APIKEY|API_KEY|"
    r"ACCESS_KEY|PRIVATE_KEY|CREDENTIALS?|AUTH|BEARER|COOKIE)(?:_|$)")
_NOT_SECRETS = {"CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR"}
# what one lint run reads (about a second): each script at most MAX_SCRIPT_BYTES, all of them
# together MAX_LINT_BYTES, and of all the Python it meets (scripts, `python -c`) at most
# MAX_PYTHON_BYTES through its syntax tree (some 10 µs a byte), the rest by its patterns.
# Past a budget a script is not judged (hook.unjudged), never silently passed.
MAX_SCRIPT_BYTES = 256 << 10
MAX_LINT_BYTES = 256 << 10
MAX_PYTHON_BYTES = 64 << 10
MAX_INLINE = 16  # code handed to an interpreter (`python -c`, `node -e`) read per text
MAX_LISTED = 100  # findings of one code a check lists; the rest are counted in one line
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


def is_credential(name: str) -> bool:
    return len(name) <= _MAX_NAME and name not in _NOT_SECRETS \
        and CREDENTIAL_NAME.search(name) is not None


def credential_reads(text: str, shell: bool = True) -> list[str]:
    """Credential-like environment variables `text` names in a read, by the patterns of every
    language lint knows (`shell`: also `$NAME`)."""
    reads = Reads()
    read_patterns(text, reads, expansions=shell)
    return sorted(name for name in reads.names if is_credential(name))


def language(path: str, text: str) -> str:
    """python, shell or other: by the extension, else by the #! line."""
    first = text.split("\n", 1)[0] if text.startswith("#!") else ""
    if path.endswith((".py", ".pyw")) or "python" in first:
        return "python"
    if path.endswith((".sh", ".bash", ".zsh", ".ksh")) or \
            first.rstrip().endswith(("sh", "bash", "zsh")):
        return "shell"
    return "other"


@dataclass(slots=True)
class Budget:
    """What is left of one lint run's reading: script bytes, and bytes of Python parsed."""

    scripts: int = MAX_LINT_BYTES
    python: int = MAX_PYTHON_BYTES


def reads_of(text: str, kind: str, budget: Budget, reads: Reads | None = None) -> Reads:
    """What `text` in language `kind` reads and says, code it runs inline included."""
    reads = reads if reads is not None else Reads()
    _read_one(text, kind, reads, budget)
    for _count in range(MAX_INLINE):
        if not reads.code:
            break
        kind, code = reads.code.pop(0)
        _read_one(code, kind, reads, budget)
    if reads.code:
        reads.unread.add(f"more than {MAX_INLINE} pieces of code run inline")
        reads.code.clear()
    return reads


def _read_one(text: str, kind: str, reads: Reads, budget: Budget) -> None:
    if kind == "python":
        if len(text) > budget.python:
            reads.unread.add(f"Python over lint's budget of {MAX_PYTHON_BYTES} bytes parsed "
                             "per plugin")
            read_patterns(text, reads, expansions=False)
            return
        budget.python -= len(text)
        if not read_python(text, reads):
            reads.unread.add("Python this reader cannot parse")
            read_patterns(text, reads, expansions=False)
    elif kind == "shell":
        read_shell(text, reads)
        read_patterns(text, reads, expansions=True)
    else:
        read_patterns(text, reads, expansions=False)


def command_reads(command: str, args: Sequence[str] | None, budget: Budget) -> Reads:
    """A hook's or server's command as the host runs it: one shell line, or (exec form, with
    `args`) the program and its arguments as they are."""
    reads = Reads()
    if args is None:
        return reads_of(command, "shell", budget, reads)
    read_argv([command, *args], reads)
    for text in (command, *args):
        read_patterns(text, reads, expansions=True)
    return reads_of("", "shell", budget, reads)


def _matters(code: str, profiles: Sequence[HostProfile]) -> str:
    broken = list(dict.fromkeys(p.token for p in profiles if code in p.broken))  # each once
    where = WHO.get(code, "")
    if broken:
        where += f"; broken on {', '.join(broken)}" if where else f"broken on {', '.join(broken)}"
    return f" (matters to: {where})" if where else ""


def lint(catalogue: Catalogue, files: Mapping[str, Any],
         read_text: Callable[[str], str | None],
         profiles: Sequence[HostProfile]) -> LintResult:
    """Every hook-lint finding of the plugin; `read_text` gives a bundle file's text (None
    for a binary); `profiles` are the hosts named in warnings."""
    result = LintResult()
    index = FileIndex(files)
    budget = Budget()
    reached: dict[str, list[str]] = {}  # bundle file -> the hooks and servers that run it
    for hook in catalogue.hooks:
        where = f"{hook.source}: {hook.where} ({hook.event})"
        reads = Reads()
        if hook.type == "command" and (command := hook.text("command")) is not None:
            args = hook.args()
            references = (exec_references(command, args) if args is not None
                          else shell_references(command))
            reads = command_reads(command, args, budget)
            _references(where, references, files=files, index=index, reached=reached,
                        result=result)
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
                          for m in ENV_READS[0][0].finditer(str(value))}
            if names:
                _credential(where, "sends headers from environment variables "
                            f"{', '.join(sorted(names))}", result, profiles)
        _judge(where, reads, result, profiles)
    for server in catalogue.servers:
        where = f"{server.source}: mcpServers.{server.name}"
        runs: list[RootReference] = []
        reads = Reads()
        if isinstance(command := server.fields.get("command"), str):
            runs = exec_references(command, server.args())
            reads = command_reads(command, server.args(), budget)
        for _key, value in server.strings():
            read_patterns(value, reads, expansions=True)
        _references(where, runs, files=files, index=index, reached=reached, result=result)
        _judge(where, reads, result, profiles)
    _scripts(reached, files, read_text, result, profiles=profiles, budget=budget)
    return result


def _scripts(reached: Mapping[str, list[str]], files: Mapping[str, Any],
             read_text: Callable[[str], str | None], result: LintResult, *,
             profiles: Sequence[HostProfile], budget: Budget) -> None:
    """Every file the hooks and servers run, and the bundle files those import or source,
    each judged for what it reads; what it may answer is judged per script run, over it and
    its imports together (a helper module may print what the script decides)."""
    found = _closure(reached, files, read_text, result, profiles=profiles, budget=budget)
    answered: dict[str, Reads] = {}
    for path, (origin, reads) in found.items():
        users = reached[origin]
        run_by = users[0] + (f" and {len(users) - 1} more" if len(users) > 1 else "")
        pulled = "" if origin == path else f", imported by {origin}"
        _judge(f"{path} (run by {run_by}{pulled})", reads, result, profiles, answers=False)
        together = answered.setdefault(origin, Reads())
        together.strings.extend(reads.strings)
        together.answers |= reads.answers
        together.answer_computed |= reads.answer_computed
        for name, values in reads.assigned.items():
            together.assigned.setdefault(name, set()).update(values)
    for origin, together in answered.items():
        users = reached[origin]
        run_by = users[0] + (f" and {len(users) - 1} more" if len(users) > 1 else "")
        _answers(f"{origin} (run by {run_by})", together, result, profiles)


def _closure(reached: Mapping[str, list[str]], files: Mapping[str, Any],
             read_text: Callable[[str], str | None], result: LintResult, *,
             profiles: Sequence[HostProfile], budget: Budget) -> dict[str, tuple[str, Reads]]:
    """Every file the hooks run, and the bundle files those import or source, transitively,
    read within lint's budgets: path -> (the script run that pulls it in, what it reads)."""
    found: dict[str, tuple[str, Reads]] = {}
    origin = {path: path for path in reached}
    queue = deque(sorted(reached))
    while queue and len(origin) <= MAX_FOLLOWED:
        current = queue.popleft()
        size = files[current].size
        why = (f"over {MAX_SCRIPT_BYTES} bytes" if size > MAX_SCRIPT_BYTES else
               f"lint's budget of {MAX_LINT_BYTES} bytes of scripts per plugin is spent"
               if size > budget.scripts else None)
        text = read_text(current) if why is None else None
        if text is None:
            first = origin[current]
            pulled = "" if first == current else f", imported by {first}"
            _unjudged(f"{current} (run by {reached[first][0]}{pulled})",
                      f"not read: {why or 'it holds a NUL byte (a binary?)'}", result, profiles)
            continue
        budget.scripts -= size
        found[current] = (origin[current], reads_of(text, language(current, text), budget))
        for imported in local_imports(current, text, files):
            if imported not in origin:
                origin[imported] = origin[current]
                queue.append(imported)
    if queue:
        _unjudged(f"{queue[0]} and {len(queue) - 1} more files the hooks' scripts import",
                  f"not read: lint follows at most {MAX_FOLLOWED} files", result, profiles)
    return found


def _references(where: str, references: list[RootReference], *, files: Mapping[str, Any],
                index: FileIndex, reached: dict[str, list[str]], result: LintResult) -> None:
    for reference in references:
        state = reference.resolve(index)
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


def _judge(where: str, reads: Reads, result: LintResult, profiles: Sequence[HostProfile],
           *, answers: bool = True) -> None:
    names = sorted(name for name in reads.names if is_credential(name))
    what = [f"reads {', '.join(names)} from the environment"] if names else []
    if reads.dumps:
        what.append(f"reads the whole environment ({', '.join(sorted(reads.dumps))}), "
                    "credentials included")
    if what:
        _credential(where, "; ".join(what), result, profiles)
    if reads.computed:
        _unjudged(where, "reads the environment by names made at run time "
                         f"({'; '.join(sorted(reads.computed))}): lint cannot tell which",
                  result, profiles)
    if reads.unread:
        _unjudged(where, f"read by its patterns only ({'; '.join(sorted(reads.unread))})",
                  result, profiles)
    if answers:
        _answers(where, reads, result, profiles)


def _answers(where: str, reads: Reads, result: LintResult,
             profiles: Sequence[HostProfile]) -> None:
    """permission-ask when "ask" is among the answers; unjudged when the key is named and its
    value is made at run time, or no answer is given at all."""
    mentions, answers, computed = permission_answers(reads.strings, reads.assigned)
    answers |= reads.answers
    computed = computed or reads.answer_computed
    if not (mentions or answers or computed):
        return
    if "ask" in answers:
        code = codes.HOOK_PERMISSION_ASK
        result.warnings.add(code, f"{where}: answers permissionDecision \"ask\""
                                  f"{_matters(code.name, profiles)}")
    elif computed or not answers:
        _unjudged(where, "sets permissionDecision to a value made when it runs (no literal "
                         "allow, deny or ask): lint cannot tell its answer", result, profiles)


def _unjudged(where: str, what: str, result: LintResult,
              profiles: Sequence[HostProfile]) -> None:
    code = codes.HOOK_UNJUDGED
    result.warnings.add(code, f"{where}: {what}{_matters(code.name, profiles)}")


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


def condense(findings: Iterable[Finding]) -> list[Finding]:
    """At most `MAX_LISTED` findings of each code, then one line counting the rest: a hostile
    plugin can name a million unknown fields, and a report of a million lines is itself work."""
    seen: Counter[str] = Counter()
    kept: list[Finding] = []
    extra: dict[str, tuple[Finding, int]] = {}
    for finding in findings:
        name = finding.code.name
        seen[name] += 1
        if seen[name] <= MAX_LISTED:
            kept.append(finding)
        else:
            first, count = extra.get(name, (finding, 0))
            extra[name] = (first, count + 1)
    for name, (first, count) in extra.items():
        kept.append(Finding(first.code, f"… and {count} more {name} findings (the first "
                                        f"{MAX_LISTED} of each code are listed)", first.hint))
    return kept
