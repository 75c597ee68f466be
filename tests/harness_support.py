"""Harness plugin workspaces for tests, written from code so each test states its one change."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
import zipfile
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
        SessionStart=[command_hook("python3 \"${CLAUDE_PLUGIN_ROOT}/hooks/start.py\"",
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


def add_small_files(plugin: Path, count: int, *, per_directory: int = 1000) -> None:
    """`count` small files under `plugin/node_modules/pkgNN/` (`per_directory` to a package),
    made through descriptors: a thousand files cost about half a second here."""
    fd = os.open(plugin, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.mkdir("node_modules", dir_fd=fd)
        modules = os.open("node_modules", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        try:
            for start in range(0, count, per_directory):
                package = f"pkg{start // per_directory:02d}"
                os.mkdir(package, dir_fd=modules)
                directory = os.open(package, os.O_RDONLY | os.O_DIRECTORY, dir_fd=modules)
                try:
                    for index in range(start, min(start + per_directory, count)):
                        out = os.open(f"f{index:05d}.js", os.O_WRONLY | os.O_CREAT, 0o644,
                                      dir_fd=directory)
                        os.write(out, b"module.exports = %d;\n" % index)
                        os.close(out)
                finally:
                    os.close(directory)
        finally:
            os.close(modules)
    finally:
        os.close(fd)


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


class MemoryFile:
    def __init__(self, size: int) -> None:
        self.size = size
        self.executable: bool | None = False


class MemoryPlugin:
    """A plugin's files held in memory, as the harness reader sees files."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self._data = files
        self.files = {path: MemoryFile(len(data)) for path, data in files.items()}

    def read_small(self, path: str, limit: int) -> bytes:
        assert len(self._data[path]) <= limit
        return self._data[path]


def assembled_zip(target: Path, files: dict[str, bytes], *,
                  catalogue_of: dict[str, bytes] | None = None) -> Path:
    """A harness zip written directly with zipfile, as an attacker writes one: the plugin's
    `files`, and catalogue.json, provenance.json and SHA256SUMS that agree with them (the
    catalogue by the toolchain's own reader, of `catalogue_of` when given: a plugin.json its
    reader refuses has none), its ref beside it."""
    from horon_bundle.core.errors import Findings  # noqa: PLC0415 - the tree under test
    from horon_bundle.core.strictjson import canonical_bytes  # noqa: PLC0415
    from horon_bundle.model import checksums  # noqa: PLC0415
    from horon_bundle.model.harness.reader import read_plugin  # noqa: PLC0415
    from horon_bundle.model.harness.statement import (  # noqa: PLC0415
        HarnessFacts,
        harness_statement,
    )

    refusals = Findings()
    contents = read_plugin(MemoryPlugin(catalogue_of or files), refusals=refusals,
                           warnings=Findings())
    assert contents is not None, [f.message for f in refusals]
    catalogue = contents.catalogue
    written = {**files, "catalogue.json": catalogue.to_bytes()}
    facts = HarnessFacts(name=catalogue.name, version=catalogue.version,
                         version_from="plugin.json", hosts=catalogue.hosts, marketplace=None,
                         source_revision=None, source_dirty=None,
                         source_date_epoch=315532800,
                         builder_id="urn:horon-bundle:builder:local", tool_version="0")
    written["provenance.json"] = canonical_bytes(harness_statement(facts, {
        path: hashlib.sha256(data).hexdigest() for path, data in written.items()}))
    written["SHA256SUMS"] = checksums.render({path: hashlib.sha256(data).hexdigest()
                                              for path, data in written.items()})
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(written):
            info = zipfile.ZipInfo(path, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (stat.S_IFREG | 0o644) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, written[path])
    Path(f"{target}.ref.json").write_text(json.dumps({
        "name": catalogue.name, "sha256": hashlib.sha256(target.read_bytes()).hexdigest()}))
    return target


HOSTILE_NAME = "amp"


def hostile_manifest(**fields: Any) -> bytes:
    return json.dumps({"name": HOSTILE_NAME, "version": "1.0.0", **fields}).encode()


def repeated_path_zip(directory: Path) -> Path:
    """Issue 20's 419 KB zip: 4,000 empty files and a plugin.json whose `commands` lists
    `./zzz` 400,000 times (a scan per entry made its reader take minutes)."""
    files = {f"e/{index:04d}": b"" for index in range(4000)}
    files["zzz/cmd.md"] = b"---\ndescription: one command\n---\nbody\n"
    once = {**files, ".claude-plugin/plugin.json": hostile_manifest(commands="./zzz")}
    files[".claude-plugin/plugin.json"] = hostile_manifest(commands=["./zzz"] * 400_000)
    directory.mkdir(parents=True, exist_ok=True)
    return assembled_zip(directory / f"{HOSTILE_NAME}-1.0.0.zip", files, catalogue_of=once)


def nested_brackets_zip(directory: Path, commands: int = 60) -> Path:
    """Issue 20's 23 KB zip: commands whose frontmatter is 20,000 nested brackets (PyYAML's
    scanner is quadratic in flow nesting: about a second each), no two alike (a reader that
    parses each distinct block once still meets every one)."""
    files = {f"commands/c{index:02d}.md": b"---\nx: " + b"[" * (20_000 - index)
             + b"]" * (20_000 - index) + b"\n---\nbody\n" for index in range(commands)}
    files[".claude-plugin/plugin.json"] = hostile_manifest()
    directory.mkdir(parents=True, exist_ok=True)
    return assembled_zip(directory / f"{HOSTILE_NAME}-1.0.0.zip", files)
