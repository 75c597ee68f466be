"""The marketplace and plugin names Claude Code keeps for itself, as its version 2.1.332 judges
them (the pinned host: `tests/claude_host.py:CLAUDE_CODE_VERSION`).

Read from the host's own code and checked against the host itself
(`tests/model/test_host_names.py` asks `claude plugin marketplace add` and `claude plugin
validate` about every case listed there):

- **marketplace names** — refused by `marketplace add` (and at load), not by `plugin
  validate`: the names of Anthropic's own marketplaces (any letter case; "only GitHub
  sources from the anthropics organization" may use them), the names Claude Code gives its
  own plugin sources (`inline`, `builtin`, `skills-dir`, `synced`, `claude-plugin-test`), and
  look-alikes: "official" beside "claude" or "anthropic", "claude"/"anthropic" followed by
  "marketplace", "plugins", "official", "directory" or "directories" (with or without
  separators, also split across parts), and any character outside printable ASCII;
- **plugin names** — refused by `plugin validate` and at install: a name that is "claude",
  "anthropic", "anthropics", "claude-code" or "claude-mods", starts with one of the first
  three or "cc-plugin" followed by a separator, or puts "official" beside "claude" or
  "anthropic". The host folds a non-ASCII plugin name to look-alike ASCII letters before
  judging it; that folding is not reproduced here, so a plugin name outside printable ASCII
  is refused outright (the one place this rule is stricter than the host).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

OFFICIAL_MARKETPLACES = frozenset({
    "claude-code-marketplace", "claude-code-plugins", "claude-plugins-official",
    "anthropic-marketplace", "anthropic-plugins", "agent-skills", "anthropic-agent-skills",
    "life-sciences", "knowledge-work-plugins", "claude-for-legal",
    "claude-for-financial-services", "financial-services-plugins", "first-party-plugins",
    "claude-tag-plugins", "claude-community", "claude-plugins-community", "healthcare",
    "anthropic-plugin-directory", "claude-plugin-directory",
})
SOURCE_MARKETPLACES = {
    "inline": "--plugin-dir session plugins", "builtin": "built-in plugins",
    "skills-dir": "plugins auto-loaded from .claude/skills/",
    "synced": "plugins synced from a claude.ai account",
    "claude-plugin-test": "plugins loaded by claude plugin test",
}
_OFFICIAL = r"official[^a-z0-9]*(?:anthropic|claude)|(?:anthropic|claude)[^a-z0-9]*official"
_KINDS = ("marketplace", "plugins", "official", "directory", "directories")
_LOOKALIKE = re.compile(rf"{_OFFICIAL}|^(?:anthropic|claude)[^a-z0-9]*(?:{'|'.join(_KINDS)})",
                        re.IGNORECASE)
_JOINED_LOOKALIKE = re.compile(rf"(?:anthropic|claude)(?:{'|'.join(_KINDS)})s?", re.IGNORECASE)
_JOINED_LIMIT = 9 + max(len(kind) for kind in _KINDS) + 1  # the host's bound on the joins
_OFFICIAL_ANYWHERE = re.compile(_OFFICIAL, re.IGNORECASE)
_NOT_PRINTABLE_ASCII = re.compile(r"[^\x20-\x7e]")
_SEPARATORS = re.compile(r"[^a-z0-9]+", re.IGNORECASE)

_MARKS = ("claude", "anthropic", "anthropics")
_RESERVED_LEADS = frozenset({*_MARKS, "ccplugin"})  # cc-plugin-… is the host's built-ins'
_RESERVED_WHOLE = frozenset({*_MARKS, "claudecode", "claudemods"})
_PLUGIN_JOIN_LIMIT = max(len(name) for name in _RESERVED_LEADS | _RESERVED_WHOLE)


def _joins(name: str, limit: int) -> Iterator[tuple[str, bool]]:
    """The name's alphanumeric parts joined from the first on, one more each time, until the
    join is longer than `limit`; with whether it is the whole name."""
    parts = [part for part in _SEPARATORS.split(name) if part]
    joined = ""
    for index, part in enumerate(parts):
        joined += part
        yield joined, index == len(parts) - 1
        if len(joined) > limit:
            return


def _impersonates(name: str) -> bool:
    if _NOT_PRINTABLE_ASCII.search(name) or _LOOKALIKE.search(name):
        return True
    if _LOOKALIKE.search(re.sub(r"^[^a-z0-9]+", "", name, flags=re.IGNORECASE)):
        return True
    if re.search(r"official(?:anthropic|claude)|(?:anthropic|claude)official",
                 _SEPARATORS.sub("", name), re.IGNORECASE):
        return True
    return any(_JOINED_LOOKALIKE.fullmatch(joined) for joined, _whole in
               _joins(name, _JOINED_LIMIT))


def marketplace_name_problem(name: str) -> str | None:
    """Why Claude Code refuses a third party's marketplace called `name` (None: it does not)."""
    lowered = name.lower()
    if lowered in OFFICIAL_MARKETPLACES:
        return ("is reserved for Anthropic's own marketplaces (Claude Code accepts it only from "
                "a GitHub repository of the anthropics organization)")
    if lowered in SOURCE_MARKETPLACES:
        return f"is reserved by Claude Code for {SOURCE_MARKETPLACES[lowered]}"
    if _impersonates(name):
        return ("reads as an official Anthropic or Claude marketplace; Claude Code refuses it "
                "as an impersonation")
    return None


def plugin_name_problem(name: str) -> str | None:
    """Why Claude Code refuses a third party's plugin called `name` (None: it does not)."""
    if _NOT_PRINTABLE_ASCII.search(name):
        return ("holds a character outside printable ASCII; Claude Code folds such a name to "
                "look-alike letters before judging it, which is not checked here")
    lowered = name.lower()
    parts = "".join(part for part in _SEPARATORS.split(lowered) if part)
    reserved = any(joined in (_RESERVED_WHOLE if whole else _RESERVED_LEADS)
                   for joined, whole in _joins(lowered, _PLUGIN_JOIN_LIMIT))
    if reserved or _OFFICIAL_ANYWHERE.search(lowered) or _OFFICIAL_ANYWHERE.search(parts):
        return ("is reserved by Claude Code: a third party's plugin name cannot be claude, "
                "anthropic, anthropics, claude-code or claude-mods, start with claude-, "
                "anthropic-, anthropics- or cc-plugin-, or put official beside claude or "
                "anthropic")
    return None
