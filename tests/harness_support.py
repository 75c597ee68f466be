"""Harness plugin workspaces for tests, written from code so each test states its one change."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.helpers import cli

PLUGIN_NAME = "guard-kit"
PLUGIN_VERSION = "1.2.0"
ZIP_NAME = f"{PLUGIN_NAME}-{PLUGIN_VERSION}.zip"

SKILL = """---
name: Release Notes Writer
description: Writes release notes from the changelog
---
# Release notes

See references/style.md.
"""
COMMAND = """---
description: Review the staged diff
allowed-tools: Bash(git diff:*)
---
Review `git diff --staged`.
"""
AGENT = """---
name: reviewer
description: Use this agent when the diff is large
model: inherit
---
You review code.
"""
GUARD = """#!/bin/sh
# blocks rm -rf
read -r payload
case "$payload" in *"rm -rf"*) echo '{"hookSpecificOutput":{"permissionDecision":"deny"}}';; esac
"""


def hooks_document(**events: list[dict[str, Any]]) -> dict[str, Any]:
    return {"description": "guards", "hooks": events}


def command_hook(command: str, matcher: str | None = "Bash", **extra: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        group["matcher"] = matcher
    return group


def write_json(path: Path, document: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2) + "\n")


def write_plugin(root: Path, *, manifest: dict[str, Any] | None = None,
                 hooks: dict[str, Any] | None = None, muse: bool = False) -> Path:
    """A clean plugin: one skill (with a nested resource), command, agent, hook, MCP server."""
    directory = ".muse-plugin" if muse else ".claude-plugin"
    write_json(root / directory / "plugin.json", manifest if manifest is not None else {
        "name": PLUGIN_NAME, "version": PLUGIN_VERSION, "description": "Guards for agents",
        "author": {"name": "Test Author"}, "license": "MIT", "keywords": ["guard"]})
    (root / "skills" / "release-notes" / "references").mkdir(parents=True, exist_ok=True)
    (root / "skills" / "release-notes" / "SKILL.md").write_text(SKILL)
    (root / "skills" / "release-notes" / "references" / "style.md").write_text("Be brief.\n")
    (root / "commands").mkdir(exist_ok=True)
    (root / "commands" / "review.md").write_text(COMMAND)
    (root / "agents").mkdir(exist_ok=True)
    (root / "agents" / "reviewer.md").write_text(AGENT)
    (root / "hooks").mkdir(exist_ok=True)
    guard = root / "hooks" / "guard.sh"
    guard.write_text(GUARD)
    guard.chmod(0o755)
    write_json(root / "hooks" / "hooks.json", hooks if hooks is not None else hooks_document(
        PreToolUse=[command_hook('"${CLAUDE_PLUGIN_ROOT}/hooks/guard.sh"')],
        SessionStart=[command_hook("python3 ${CLAUDE_PLUGIN_ROOT}/hooks/start.py",
                                   matcher=None, timeout=10)]))
    (root / "hooks" / "start.py").write_text("print('{}')\n")
    write_json(root / ".mcp.json", {"mcpServers": {"notes": {
        "command": "${CLAUDE_PLUGIN_ROOT}/servers/notes", "args": ["--stdio"]}}})
    server = root / "servers" / "notes"
    server.parent.mkdir(exist_ok=True)
    server.write_text("#!/bin/sh\nexec cat\n")
    server.chmod(0o755)
    return root


def git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.invalid",
           "GIT_AUTHOR_DATE": "2026-01-02T03:04:05Z", "GIT_COMMITTER_DATE": "2026-01-02T03:04:05Z"}
    done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                          env=env, check=True)
    return done.stdout


def commit_all(root: Path) -> str:
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "plugin")
    return git(root, "rev-parse", "HEAD").strip()


def edit_json(path: Path, change: Any) -> None:
    document = json.loads(path.read_text())
    change(document)
    write_json(path, document)


def built_zip(root: Path, *, edit: Any = None, **options: Any) -> Path:
    """A plugin written under `root/plugin` (then `edit(plugin_dir)` when given) and built
    with the real CLI into `root/out`; the zip (its ref beside it)."""
    workspace = write_plugin(root / "plugin", **options)
    if edit is not None:
        edit(workspace)
    out = root / "out"
    result = cli("build", workspace, "--out", out)
    assert result.status == 0, result.stderr
    [archive] = out.glob("*.zip")
    return archive


def built_marketplace(root: Path, name: str = "team-tools", *,
                      command: str = "Review `git diff --staged`.") -> Path:
    """A marketplace repository listing two local plugins (guard-kit 1.2.0 and bare 0.3.0),
    built with the real CLI into `root/out`: the zips, their refs and `<name>.index.json`."""
    repository = root / "market"
    write_plugin(repository / "plugins" / "guard-kit")
    (repository / "plugins" / "guard-kit" / "commands" / "review.md").write_text(
        f"---\ndescription: Review the staged diff\n---\n{command}\n")
    bare = repository / "plugins" / "bare"
    (bare / "commands").mkdir(parents=True)
    (bare / "commands" / "hello.md").write_text("---\ndescription: hi\n---\nhello\n")
    write_json(repository / ".claude-plugin" / "marketplace.json", {
        "name": name, "owner": {"name": "Team"},
        "plugins": [{"name": "guard-kit", "source": "./plugins/guard-kit"},
                    {"name": "bare", "source": "./plugins/bare", "version": "0.3.0"}]})
    out = root / "out"
    result = cli("build", repository, "--out", out)
    assert result.status == 0, result.stderr
    return out
