"""The differential table (tests/host_diff.py): one case per rule, both sides of each, each
plugin written by the test. Claude Code's own verdicts are those of the pinned version
(tests/claude_host.py: CLAUDE_CODE_VERSION); when the pin moves, this table, the host profile
(`nox -s host-profile`) and the schemas move with it. The real plugins of Anthropic's own
marketplace are reproduced here by their shapes (their code is not ours to commit).

This module: frontmatter, names, versions, plugin.json. Hooks, MCP servers and the stricter
classes: tests/host_cases_hooks.py.
"""

from __future__ import annotations

from typing import Any

from tests.host_diff import Case, Content

PJ = ".claude-plugin/plugin.json"
MANIFEST: dict[str, Any] = {"name": "guard-kit", "version": "1.0.0", "description": "Guards",
                            "author": {"name": "Team"}}
GUARD = "#!/bin/sh\nexit 0\n"


def plugin(files: dict[str, Content] | None = None, **fields: Any) -> dict[str, Content]:
    """The base plugin (its manifest changed by `fields`: None removes one) and `files`."""
    manifest = {k: v for k, v in {**MANIFEST, **fields}.items() if v is not None}
    return {PJ: manifest, **(files or {})}


def component(path: str, block: str) -> dict[str, Content]:
    return plugin({path: f"---\n{block}---\nBody.\n"})


def agent(block: str) -> dict[str, Content]:
    return component("agents/reviewer.md", block)


def _marketplace(entry: dict[str, Any], files: dict[str, Content]) -> dict[str, Content]:
    return {".claude-plugin/marketplace.json": {
        "name": "team-tools", "owner": {"name": "Team"}, "description": "Team plugins",
        "plugins": [{"source": "./plugins/one", "description": "One plugin", **entry}]},
        **{f"plugins/one/{path}": content for path, content in files.items()}}


_EXAMPLES = ("name: reviewer\ndescription: Use this agent when: a diff is large, e.g.\n\n"
             "Context: the user changed many files\nuser: \"review it\"\n"
             "assistant: \"I'll use the reviewer agent\"\n")
_COMMANDS: dict[str, Content] = {"commands/hello.md": "---\ndescription: Say hello\n---\nHello.\n"}

FRONTMATTER = (
    Case("fm-yaml", "Frontmatter", "plain YAML", agent("name: reviewer\ndescription: Reviews\n"),
         "accepts", "passes"),
    Case("fm-quoted-colon", "Frontmatter",
         "`description: Use this when: things happen` (YAML fails; the host's quoted parse "
         "reads it)", agent("name: reviewer\ndescription: Use this when: things happen\n"),
         "accepts", "passes"),
    Case("fm-quoted-example-lines", "Frontmatter",
         "a description holding `: `, then `Context:`/`user:`/`assistant:` lines (keys the "
         "host loads, as here)", agent(_EXAMPLES), "accepts", "passes"),
    Case("fm-dropped-example-block", "Frontmatter",
         "the same with an `<example>` line: neither parse reads it, every field dropped",
         agent(_EXAMPLES + "<example>review</example>\nmodel: sonnet\n"), "rejects", "refuses",
         "failed to parse", "harness.frontmatter-invalid"),
    Case("fm-dropped-trailing-colon", "Frontmatter",
         "`description: Use it. Examples:` (a value ending in `:` is not quoted by the host)",
         agent("name: reviewer\ndescription: Use it. Examples:\n"), "rejects", "refuses",
         "failed to parse", "harness.frontmatter-invalid"),
    Case("fm-dropped-digit-key", "Frontmatter",
         "`x1: a: b`: a key with a digit is not quoted by the host",
         agent("name: reviewer\ndescription: Reviews\nx1: a: b\n"), "rejects", "refuses",
         "failed to parse", "harness.frontmatter-invalid"),
    Case("fm-dropped-continuation", "Frontmatter",
         "a value needing quotes continued on an indented line",
         agent("name: reviewer\ndescription: first: line\n  continued: here\n"), "rejects",
         "refuses", "failed to parse", "harness.frontmatter-invalid"),
    Case("fm-crlf-colon", "Frontmatter", "CRLF lines and a value needing quotes (the host "
         "quotes no line ending in CR)",
         plugin({"agents/reviewer.md": "---\r\nname: reviewer\r\ndescription: a: b\r\n---\r\n"
                 "x\r\n"}), "rejects", "refuses", "failed to parse",
         "harness.frontmatter-invalid"),
    Case("fm-crlf-plain", "Frontmatter", "CRLF lines of plain YAML",
         plugin({"agents/reviewer.md": "---\r\nname: reviewer\r\ndescription: Reviews\r\n---\r\n"
                 "x\r\n"}), "accepts", "passes"),
    Case("fm-tab-indent", "Frontmatter", "a tab-indented mapping (tabs become two spaces)",
         agent("name: reviewer\ndescription: Reviews\nmeta:\n\tlevel: 1\n"), "accepts",
         "passes"),
    Case("fm-tabs-in-line", "Frontmatter", "tabs separating within lines (`model:\tsonnet`, "
         "a trailing tab)", agent("name: reviewer\t\ndescription: Reviews\tcode\nmodel:\tsonnet\n"),
         "accepts", "passes"),
    Case("fm-comma-value", "Frontmatter", "a value starting with `,` (a plain scalar for the "
         "host's parser)", agent("name: reviewer\ndescription: , and more\n"), "accepts",
         "passes"),
    Case("fm-argument-hint", "Frontmatter", "`argument-hint: [file-path] [--flag]` (quoted by "
         "the host: no sequence)", component("commands/review.md", "description: Review\n"
                                            "argument-hint: [file-path] [--flag]\n"),
         "accepts", "passes"),
    Case("fm-unclosed-flow", "Frontmatter", "`tools: [Read` (quoted by the host: a string)",
         agent("name: reviewer\ndescription: Reviews\ntools: [Read\n"), "accepts", "passes"),
    Case("fm-dash-in-value", "Frontmatter", "`---` inside a value ends the block there",
         agent("name: reviewer\ndescription: before---after\n"), "accepts", "passes"),
    Case("fm-list", "Frontmatter", "a list, not a mapping", agent("- a\n- b\n"), "rejects",
         "refuses", "must be a YAML mapping", "harness.frontmatter-invalid"),
    Case("fm-no-block", "Frontmatter", "no frontmatter block",
         plugin({"agents/reviewer.md": "You review.\n"}), "warns", "warns",
         "No frontmatter block", "harness.frontmatter"),
    Case("fm-name-number", "Frontmatter", "`name: 12` (a number)",
         agent("name: 12\ndescription: Reviews\n"), "rejects", "refuses",
         "name must be a string", "harness.frontmatter-invalid"),
    Case("fm-name-yes", "Frontmatter", "`name: yes` (a string in YAML 1.2)",
         agent("name: yes\ndescription: Reviews\n"), "accepts", "passes"),
    Case("fm-name-true", "Frontmatter", "`name: True` (a boolean in YAML 1.2)",
         agent("name: True\ndescription: Reviews\n"), "rejects", "refuses",
         "name must be a string", "harness.frontmatter-invalid"),
    Case("fm-description-list", "Frontmatter", "a skill's description that is a list",
         component("skills/notes/SKILL.md", "name: notes\ndescription: [a, b]\n"), "rejects",
         "refuses", "description must be a string", "harness.frontmatter-invalid"),
    Case("fm-description-number", "Frontmatter", "a description that is a number",
         component("skills/notes/SKILL.md", "name: notes\ndescription: 12\n"), "accepts",
         "passes"),
    Case("fm-allowed-tools-number", "Frontmatter", "a command's `allowed-tools: 3`",
         component("commands/review.md", "description: Review\nallowed-tools: 3\n"), "rejects",
         "refuses", "allowed-tools must be", "harness.frontmatter-invalid"),
    Case("fm-shell-zsh", "Frontmatter", "a command's `shell: zsh`",
         component("commands/review.md", "description: Review\nshell: zsh\n"), "rejects",
         "refuses", "shell must be", "harness.frontmatter-invalid"),
    Case("fm-shell-agent", "Frontmatter", "an agent's `shell: zsh` (no field of agents)",
         agent("name: reviewer\ndescription: Reviews\nshell: zsh\n"), "accepts", "passes"),
    Case("fm-metadata-number", "Frontmatter", "a skill's `metadata: 3` (dropped at load)",
         component("skills/notes/SKILL.md", "name: notes\ndescription: N\nmetadata: 3\n"),
         "warns", "warns", "'metadata' must be a mapping", "harness.frontmatter"),
    Case("fm-duplicate-key", "Frontmatter", "a key twice (the last wins)",
         agent("name: first\nname: reviewer\ndescription: Reviews\n"), "accepts", "passes"),
    Case("fm-bom", "Frontmatter", "a byte order mark before the block",
         plugin({"agents/reviewer.md": "\ufeff---\nname: reviewer\ndescription: R\n---\nx\n"}),
         "accepts", "passes"),
    Case("fm-over-budget", "Frontmatter", "a block over 64 KiB (not read here)",
         agent("name: reviewer\ndescription: " + "w" * (64 << 10) + "\n"), "accepts", "warns",
         code="harness.frontmatter", why="limit"),
)

NAMES = (
    Case("name-claude-prefix", "Names and versions", "a plugin named `claude-helper`",
         plugin(name="claude-helper"), "rejects", "refuses", "is reserved",
         "harness.name-reserved"),
    Case("name-claude-inside", "Names and versions", "a plugin named `my-claude-kit`",
         plugin(name="my-claude-kit"), "warns", "passes", "reads as one of Anthropic's own",
         why="quiet"),
    Case("name-entry-reserved", "Names and versions",
         "a marketplace entry named `anthropic-tools`",
         _marketplace({"name": "anthropic-tools", "version": "1.0.0"}, _COMMANDS), "rejects",
         "refuses", "anthropic-tools", "harness.name-reserved", judged="marketplace"),
    Case("name-not-kebab", "Names and versions", "a name not in kebab-case (`GuardKit`)",
         plugin(name="GuardKit"), "warns", "warns", "not kebab-case",
         "harness.name-style"),
    Case("name-space", "Names and versions", "a name with a space",
         plugin(name="guard kit"), "rejects", "refuses", "cannot contain spaces",
         "harness.manifest-value"),
    Case("name-long", "Names and versions", "a name of 100 characters",
         plugin(name="a" * 100), "accepts", "refuses", code="harness.manifest-value",
         why="file-name"),
    Case("name-non-ascii", "Names and versions", "a name outside ASCII (`tëam-kit`)",
         plugin(name="t\u00ebam-kit"), "warns", "refuses", "cannot install it",
         "harness.name-reserved", "ascii"),
    Case("version-missing", "Names and versions",
         "no version (built as `0.0.0+sha.` and 12 hex digits of its files' SHA256SUMS)",
         plugin(version=None), "warns", "passes", "No version specified", why="quiet"),
    Case("version-free-text", "Names and versions", "version `1.0 beta`",
         plugin(version="1.0 beta"), "accepts", "refuses", code="harness.manifest-value",
         why="file-name"),
    Case("version-number", "Names and versions", "version `1` (a number)",
         plugin(version=1), "rejects", "refuses", "expected string",
         "harness.manifest-type"),
    Case("manifest-none-listed", "Names and versions",
         "no plugin.json, listed by a marketplace (its entry names and versions it)",
         _marketplace({"name": "hello-kit", "version": "2.0.0"}, _COMMANDS), "accepts",
         "passes", judged="marketplace"),
    Case("marketplace-version-differs", "Names and versions",
         "plugin.json and its marketplace entry disagreeing on the version (plugin.json wins)",
         {**_marketplace({"name": "guard-kit", "version": "2.0.0"}, plugin(_COMMANDS))},
         "warns", "warns", "Entry declares version", "marketplace.version",
         judged="marketplace"),
    Case("manifest-none-dropped", "Names and versions", "no plugin.json, and an agent whose "
         "frontmatter neither parse reads (plugin-dev's shape)",
         {**_COMMANDS, "agents/creator.md": "---\n" + _EXAMPLES + "<example>x</example>\n"
                                            "---\nBody.\n"}, "rejects", "refuses",
         "failed to parse", "harness.frontmatter-invalid", judged="load", plugin="dev-kit"),
    Case("manifest-none", "Names and versions",
         "no plugin.json, no marketplace: named after its directory", _COMMANDS, "accepts",
         "passes", judged="load", plugin="hello-kit"),
)

MANIFEST_FIELDS = (
    Case("manifest-unknown-field", "plugin.json", "a field the host does not know (`hook`)",
         plugin(hook="./hooks.json"), "warns", "warns", "Unknown field",
         "harness.manifest-unknown-field"),
    Case("manifest-entry-field", "plugin.json", "a marketplace entry's field (`category`)",
         plugin(category="tools"), "warns", "warns", "belongs in the marketplace entry",
         "harness.manifest-unknown-field"),
    Case("manifest-known-fields", "plugin.json", "`displayName`, `defaultEnabled`, `icon`, "
         "`engines`", plugin(displayName="Guard Kit", defaultEnabled=True, icon="./icon.png",
                             engines={"claude-code": ">=2.1.0"}), "accepts", "passes"),
    Case("manifest-metadata", "plugin.json", "`metadata` that is not an object (ignored)",
         plugin(metadata="x"), "warns", "passes", "'metadata' must be", why="quiet"),
    Case("manifest-repository-object", "plugin.json", "npm's `repository` object",
         plugin(repository={"type": "git", "url": "https://example.com/r.git"}), "rejects",
         "refuses", "expected string", "harness.manifest-type"),
    Case("manifest-homepage-bad", "plugin.json", "`homepage: not a url`",
         plugin(homepage="not a url"), "rejects", "refuses", "Invalid URL",
         "harness.manifest-value"),
    Case("manifest-homepage-mailto", "plugin.json", "`homepage: mailto:team@example.com`",
         plugin(homepage="mailto:team@example.com"), "accepts", "passes"),
    Case("manifest-author-nameless", "plugin.json", "an author without a name",
         plugin(author={"email": "team@example.com"}), "rejects", "refuses",
         "author.name", "harness.manifest-type"),
    Case("manifest-author-extra", "plugin.json", "an author with another key",
         plugin(author={"name": "Team", "twitter": "@team"}), "accepts", "passes"),
    Case("manifest-user-config-untitled", "plugin.json", "a userConfig option without title",
         plugin(userConfig={"token": {"type": "string", "description": "T"}}), "rejects",
         "refuses", "title", "harness.manifest-type"),
    Case("manifest-user-config-key", "plugin.json", "a userConfig option key with `-`",
         plugin(userConfig={"api-key": {"type": "string", "title": "K", "description": "K"}}),
         "rejects", "refuses", "Invalid key", "harness.manifest-value"),
    Case("manifest-engines-range", "plugin.json", "`engines` naming no version range",
         plugin(engines={"claude-code": "soon"}), "rejects", "refuses", "version range",
         "harness.manifest-value"),
    Case("manifest-engines-unmet", "plugin.json", "`engines` the pinned host does not meet",
         plugin(engines={"claude-code": ">=9.0.0"}), "accepts", "passes"),
    Case("manifest-agents-directory", "plugin.json", "`agents: ./agents` (the host reads "
         "files)", plugin({"agents/reviewer.md": "---\nname: r\ndescription: R\n---\nx\n"},
                         agents="./agents"), "rejects", "refuses", "must end with \".md\"",
         "harness.manifest-value"),
    Case("manifest-skills-file", "plugin.json", "`skills` naming a file",
         plugin({"extra/notes.md": "x\n"}, skills="./extra/notes.md"), "rejects", "refuses",
         "skills entries must be directories", "harness.manifest-value"),
    Case("manifest-path-missing", "plugin.json", "`commands` naming nothing",
         plugin(commands="./nope"), "rejects", "refuses", "Path not found",
         "harness.path-missing"),
    Case("manifest-path-escapes", "plugin.json", "`commands: ./../x`",
         plugin(commands="./../x"), "rejects", "refuses", "..", "harness.path-unsafe"),
)
