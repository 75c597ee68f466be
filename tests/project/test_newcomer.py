"""The README's first-plugin path without a guess: `new` prints every step the README lists,
in its order; the README's commit works on a machine where git knows no user; the
scaffold's `.gitignore` covers what the README's commands create inside a workspace.
(`nox -s dist` runs the block itself, as written, with the installed wheel under a fresh
HOME; tests/project/test_doc_commands.py runs it from the checkout.)"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from tests.helpers import REPO, cli

README = REPO / "README.md"


def _first_plugin_block() -> list[str]:
    """The README's first-plugin commands, one per line (continuations joined)."""
    text = README.read_text().split("## Your first plugin", 1)[1]
    body = text.split("<!-- doc-test: run -->\n```sh\n", 1)[1].split("```", 1)[0]
    return [line.split(" #", 1)[0].strip()
            for line in re.sub(r"\\\n\s*", " ", body).splitlines() if line.strip()]


def _steps(lines: list[str]) -> list[str]:
    """What each line runs: `horon-bundle COMMAND`, `git commit` (mkdir is no step)."""
    found = []
    for line in lines:
        found += [f"horon-bundle {m}" for m in re.findall(r"horon-bundle (\w+)", line)]
        if re.search(r"\bgit\b.*\bcommit\b", line):
            found.append("git commit")
    return found


def test_new_prints_every_readme_step_in_order(tmp_path: Path) -> None:
    created = cli("new", "acme-notes", cwd=tmp_path)
    assert created.status == 0, created.stderr
    readme_steps = [s for s in _steps(_first_plugin_block()) if s != "horon-bundle new"]
    hint_steps = _steps(created.stderr.split("next:", 1)[1].splitlines())
    assert hint_steps[:len(readme_steps)] == readme_steps, (hint_steps, readme_steps)
    assert "cd acme-notes" in created.stderr
    assert created.stdout.startswith("created acme-notes")  # the result; the steps are a hint
    plain = cli("new", "other", "--no-git", cwd=tmp_path)
    assert "git commit" not in _steps(plain.stderr.splitlines())


def test_the_readme_commit_needs_no_configured_identity(tmp_path: Path) -> None:
    assert cli("new", "acme-notes", cwd=tmp_path).status == 0
    [commit] = [line for line in _first_plugin_block() if "commit" in line]
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "EMAIL"))}
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=str(home / "none"))
    workspace = tmp_path / "acme-notes"
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", commit], cwd=workspace, env=env,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr  # no user.name, no user.email, no GIT_* here
    log = subprocess.run(["git", "log", "--format=%an <%ae>"], cwd=workspace, env=env,
                         capture_output=True, text=True, check=True).stdout
    assert log.strip() == "Your Name <you@example.com>"


def test_the_scaffold_ignores_what_the_readme_creates_in_a_workspace() -> None:
    ignored = (REPO / "templates" / "plugin" / ".gitignore").read_text().split()
    created = set()
    for word in re.findall(r"(?:--home|--into|--out) \./?([\w-]+)", README.read_text()):
        created.add(word)
    created |= {"dist", "target"}
    assert {"agent-home", "sandbox"} <= created
    assert {f"/{name}/" for name in created} <= set(ignored), (created, ignored)
