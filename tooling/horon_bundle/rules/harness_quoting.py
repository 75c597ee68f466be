"""Placeholders a hook's shell command leaves unquoted, read exactly as Claude Code 2.1.332 (the
pinned host) reads them when `claude plugin validate` warns "Shell command uses
${CLAUDE_PLUGIN_ROOT} without quotes".

The host substitutes `${CLAUDE_PLUGIN_ROOT}`, `${CLAUDE_PLUGIN_DATA}` and
`${CLAUDE_PROJECT_DIR}` (or `$NAME`) into the command text before a shell reads it, so a path
holding a space splits into words. Its reading is a quote tracker over the text, not a shell:
single quotes and double quotes open and close (a backslash escapes the next character outside
single quotes, so `\\${CLAUDE_PLUGIN_ROOT}` is no placeholder); a placeholder outside both is
unquoted, wherever it stands — in a comment, a here-document or `$( … )` as well. This rule
follows that reading to the character, so that this toolchain warns where the host warns and
nowhere else: `"$(dirname ${CLAUDE_PLUGIN_ROOT})"`, which a shell splits inside the
substitution, is quoted for the host and here; `x # ${CLAUDE_PLUGIN_ROOT}` is not.

Only hooks files are judged (the host says nothing of plugin.json's inline hooks), and only a
command a shell runs: not the exec form (`args` present), not a PowerShell hook.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from horon_bundle.core import codes
from horon_bundle.core.errors import Findings
from horon_bundle.model.harness.hooks import Hook

VARIABLES = ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "CLAUDE_PROJECT_DIR")
_PLACEHOLDER = re.compile(r"\$(?:\{(" + "|".join(VARIABLES) + r")\}|(" + "|".join(VARIABLES)
                          + r")(?![A-Za-z0-9_]))")


def unquoted(command: str) -> Iterator[str]:
    """The variables `command` names outside quotes, in order, as the host's tracker sees it."""
    quote = ""
    index = 0
    while index < len(command):
        char = command[index]
        if char == "\\" and quote != "'":
            index += 2
            continue
        if quote:
            if char == quote:
                quote = ""
        elif char in "'\"":
            quote = char
        elif char == "$" and (found := _PLACEHOLDER.match(command, index)):  # prefix match: at $
            yield found.group(1) or found.group(2)
            index = found.end()
            continue
        index += 1


def judge_quoting(hooks: Iterable[Hook]) -> Findings:
    """A `hook.unquoted-variable` warning for each variable of each hook the host would warn
    about (once per variable per hook)."""
    warnings = Findings()
    for hook in hooks:
        command = hook.text("command")
        if hook.type != "command" or hook.source == "plugin.json" or command is None \
                or "args" in hook.fields or hook.fields.get("shell") == "powershell":
            continue
        for name in dict.fromkeys(unquoted(command)):
            warnings.add(codes.HOOK_UNQUOTED_VARIABLE,
                         f"{hook.source}: {hook.where} ({hook.event}): ${{{name}}} is not "
                         f"quoted in the shell command {command!r}: a path holding a space "
                         "splits into several words and the command fails; write "
                         f"\"${{{name}}}/…\" or use the exec form")
    return warnings
