"""Every command the docs show is checked against the real tool.

Each shell block of README.md and docs/*.md carries a mark just above its fence:

- `<!-- doc-test: run -->` — run verbatim, in order with the page's other run blocks, by
  bash in an empty directory (HOME there too), with the installed `horon-bundle` first on
  PATH; `run-if install` blocks also, once the `install` command exists;
- `<!-- doc-test: by … -->` — run elsewhere, as named (a nox session, CI);
- `<!-- doc-test: parsed -->` — commands that need what a test machine has not (a GitHub
  OIDC identity, a signed release, a registry login).

Whatever the mark, every `horon-bundle …` line is parsed by the real argument parser, so a
command or option the docs name and the tool lacks fails here.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from horon_bundle.cli.main import COMMANDS, parser
from tests.author_support import author_env, has_command
from tests.helpers import REPO

pytestmark = pytest.mark.process

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(?:<!-- doc-test: (?P<mark>[^>]*?) -->\n)?```(?P<lang>[a-z]*)\n"
                    r"(?P<body>.*?)^```", re.S | re.M)
_SHELL = ("sh", "bash", "shell", "console")
_MARKS = re.compile(r"run|run-if install|parsed|by .+")
_ENDS = re.compile(r"\s(?:&&|\|\||\||;|>>?|2>&1)\s")


def _blocks(page: Path) -> list[tuple[str | None, str]]:
    return [(m["mark"], m["body"]) for m in _BLOCK.finditer(page.read_text())
            if m["lang"] in _SHELL]


def _commands(body: str) -> list[list[str]]:
    """Every `horon-bundle …` invocation of a block, as argv after the program name."""
    joined = re.sub(r"\\\n\s*", " ", body)
    found = []
    for raw in joined.splitlines():
        for part in re.split(r"&&|;", raw.split(" #", 1)[0]):
            at = part.find("horon-bundle ")
            if at < 0 or part[:at].rstrip().endswith(("install", "pipx", "tool")):
                continue
            text = _ENDS.split(" " + part[at:] + " ", 1)[0]
            words = shlex.split(text)
            if words and words[0] == "horon-bundle":
                found.append(words[1:])
    return found


def test_every_shell_block_is_marked() -> None:
    for page in PAGES:
        for mark, body in _blocks(page):
            assert mark is not None and _MARKS.fullmatch(mark), (page.name, body[:80])


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_command_shown_parses(page: Path) -> None:
    for _mark, body in _blocks(page):
        for argv in _commands(body):
            if argv[0] == "--version":
                continue
            if argv[0] == "install" and not has_command("install"):
                continue  # a tree without the command: parsed in one that has it
            assert argv[0] in COMMANDS, (page.name, argv)
            try:
                parser(argv[0]).parse_args(argv)
            except SystemExit as exc:
                pytest.fail(f"{page.name}: `horon-bundle {shlex.join(argv)}` does not parse "
                            f"(exit {exc.code})")


RUN_PAGES = [page for page in PAGES
             if any(mark in ("run", "run-if install") for mark, _ in _blocks(page))]


@pytest.mark.slow
@pytest.mark.cargo
@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: p.name)
def test_run_blocks_run_verbatim(page: Path, tmp_path: Path) -> None:
    wanted = {"run"} | ({"run-if install"} if has_command("install") else set())
    script = "\n".join(body for mark, body in _blocks(page) if mark in wanted)
    home = tmp_path / "home"
    home.mkdir()
    real_home = Path.home()  # rustup and cargo keep their toolchains there
    env = author_env({"HOME": str(home),
                      "RUSTUP_HOME": os.environ.get("RUSTUP_HOME", str(real_home / ".rustup")),
                      "CARGO_HOME": os.environ.get("CARGO_HOME", str(real_home / ".cargo"))})
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, f"{page.name}:\n{script}\n---\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr
