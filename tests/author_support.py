"""Running the installed `horon-bundle` exactly as a plugin author types it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.helpers import CliResult

BIN = Path(sys.executable).parent
COMMAND = shutil.which("horon-bundle", path=str(BIN)) or shutil.which("horon-bundle")
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "A. Author", "GIT_AUTHOR_EMAIL": "author@example.invalid",
                "GIT_COMMITTER_NAME": "A. Author",
                "GIT_COMMITTER_EMAIL": "author@example.invalid"}


def author_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This environment, with the console script's directory first on PATH and nothing the
    CI runner sets that would change the output."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("GITHUB_ACTIONS", "GITHUB_STEP_SUMMARY", "NO_COLOR", "FORCE_COLOR",
                        "SOURCE_DATE_EPOCH", "CARGO_TARGET_DIR")}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("COLUMNS", "200")
    env.update(GIT_IDENTITY)
    env.update(extra or {})
    return env


def horon(*args: str | Path, cwd: Path, env: dict[str, str] | None = None,
          timeout: float = 600) -> CliResult:
    """`horon-bundle ARGS` in `cwd` (the console script when installed, else `python -m`)."""
    argv = [COMMAND] if COMMAND else [sys.executable, "-m", "horon_bundle"]
    done = subprocess.run([*argv, *map(str, args)], cwd=cwd, env=author_env(env),
                          capture_output=True, text=True, timeout=timeout, check=False)
    return CliResult(done.returncode, done.stdout, done.stderr)


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=author_env(), capture_output=True,
                          text=True, check=True, timeout=60)
    return done.stdout


def has_command(name: str) -> bool:
    from horon_bundle.cli.main import COMMANDS  # noqa: PLC0415

    return name in COMMANDS
