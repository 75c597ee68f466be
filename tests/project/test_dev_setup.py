"""The README's test command on a fresh machine: `nox -s tests` either has every system tool
it needs or stops at once, before installing or running anything, naming every missing tool
and the one command that installs them; `.ci/run` installs the same set."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.process


def _nox_tests(path: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "nox", "--no-venv", "--no-color", "-s", "tests"],
                          cwd=REPO, env={"PATH": path, "HOME": "/nonexistent"},
                          capture_output=True, text=True, timeout=120, check=False)


def _system_tools() -> dict[str, str]:
    text = (REPO / "noxfile.py").read_text()
    table = text.split("SYSTEM_TOOLS = {", 1)[1].split("}", 1)[0]
    return dict(re.findall(r'"([\w-]+)": "([\w-]+)"', table))


def test_nox_tests_stops_at_once_naming_every_missing_tool(tmp_path: Path) -> None:
    done = _nox_tests(str(tmp_path))  # a PATH with nothing on it
    assert done.returncode != 0
    output = done.stdout + done.stderr
    tools = _system_tools()
    assert "missing: " in output, output
    missing = output.split("missing: ", 1)[1].splitlines()[0]
    assert missing.split(", ") == [*tools, "cargo"]
    packages = " ".join(sorted(set(tools.values())))
    assert f"install with: sudo apt-get install -y {packages}" in output
    assert "or run .ci/run" in output and "https://rustup.rs" in output
    assert "pytest" not in output.replace("pytest options", "")  # nothing ran


def test_ci_run_installs_every_tool_the_tests_need() -> None:
    script = (REPO / ".ci" / "run").read_text()
    checked = dict(re.findall(r"command -v ([\w-]+) .*\|\| missing\+=\(([\w-]+)\)", script))
    for tool, package in _system_tools().items():
        if tool in ("setarch", "prlimit", "nsenter"):  # util-linux, checked through unshare
            assert checked.get("unshare") == package
            continue
        assert checked.get(tool) == package, tool


def test_the_pre_commit_hooks_are_the_lint_sessions_checks() -> None:
    """Each pre-commit hook runs one check of `nox -s lint`, in its environment, and together
    they are all of them: a commit is checked as CI checks it."""
    import yaml  # noqa: PLC0415 - only this test reads YAML

    sys.path.insert(0, str(REPO))
    try:
        import noxfile  # noqa: PLC0415 - the session's own list of checks
    finally:
        sys.path.remove(str(REPO))
    config = yaml.safe_load((REPO / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    [local] = config["repos"]
    assert local["repo"] == "local"
    entries = [hook["entry"].split() for hook in local["hooks"]]
    assert all(entry[:5] == ["nox", "-R", "-s", "lint", "--"] and len(entry) == 6
               for entry in entries), entries
    assert sorted(entry[5] for entry in entries) == sorted(noxfile.LINT_CHECKS)
    assert all(hook["pass_filenames"] is False for hook in local["hooks"])


def test_lint_refuses_a_check_it_does_not_have() -> None:
    done = subprocess.run([sys.executable, "-m", "nox", "--no-venv", "--no-color", "-s", "lint",
                           "--", "pylint"], cwd=REPO, capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode != 0
    assert "unknown check pylint: choose from ruff, mypy, imports" in done.stdout + done.stderr
