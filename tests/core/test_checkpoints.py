"""The one test-only hook (core/checkpoint.py): its step registry is the code's, and both of
its spellings — `HORON_TEST_CHECKPOINT` (docs/interrupted-runs.md) and install's
`HORON_INSTALL_PAUSE_AT` / `HORON_INSTALL_PAUSE_FILE` handshake (docs/install.md) — reach
every step."""

from __future__ import annotations

import ast
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from horon_bundle.core import checkpoint as hook
from tests.helpers import REPO

PACKAGE = REPO / "tooling" / "horon_bundle"
# the steps docs/install.md names: a stable contract of the kill-and-race tests
INSTALL_STEPS = ("hashed", "walked", "copying", "staged", "before-rename", "renamed",
                 "state-replace", "trashed", "unpacked")


def _called_steps() -> dict[str, list[str]]:
    """Step -> the modules calling `checkpoint(STEP)`."""
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "checkpoint"):
                assert len(node.args) == 1 and isinstance(node.args[0], ast.Constant), path
                found.setdefault(str(node.args[0].value), []).append(
                    str(path.relative_to(PACKAGE)))
    return found


def test_every_registered_step_is_in_the_code_and_every_step_in_the_code_registered() -> None:
    called = _called_steps()
    assert sorted(called) == sorted(hook.STEPS)
    assert set(INSTALL_STEPS) <= set(hook.STEPS)


def test_an_unknown_step_is_a_programming_error() -> None:
    with pytest.raises(RuntimeError, match="unknown checkpoint 'no-such-step'"):
        hook.checkpoint("no-such-step")


def _at(step: str, env: dict[str, str]) -> subprocess.Popen[str]:
    code = ("import sys\nfrom horon_bundle.core.checkpoint import checkpoint\n"
            f"checkpoint({step!r})\nprint('passed')\n")
    return subprocess.Popen([sys.executable, "-c", code], env={**os.environ, **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.process
@pytest.mark.parametrize("step", ["hashed", "build.staged"])
def test_the_checkpoint_variable_kills_at_any_step(step: str) -> None:
    process = _at(step, {hook.CHECKPOINT: f"kill:{step}"})
    out, _ = process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL and out == ""
    elsewhere = _at(step, {hook.CHECKPOINT: "kill:renamed"})
    assert elsewhere.communicate(timeout=60)[0] == "passed\n"


@pytest.mark.process
@pytest.mark.parametrize("step", ["state-replace", "publish.temp"])
def test_the_install_pause_handshake_holds_at_any_step(step: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    process = _at(step, {hook.PAUSE_AT: step, hook.PAUSE_FILE: str(marker)})
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.02)
    assert marker.read_text() == f"{process.pid}\n"
    time.sleep(0.2)
    assert process.poll() is None, "it goes on only once the marker is removed"
    marker.unlink()
    out, _ = process.communicate(timeout=60)
    assert process.returncode == 0 and out == "passed\n"
