"""Running external tools (cargo, rustc, git): one seam that turns OS errors into refusals."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

from horon_bundle import codes
from horon_bundle.errors import Code, Refused


def run_text(argv: Sequence[str], *, cwd: Path | None = None,
             env: Mapping[str, str] | None = None, missing: Code = codes.TOOLCHAIN_MISSING,
             failed: Code = codes.CARGO_FAILED, timeout: float = 600) -> str:
    """Run a tool to completion and return its stdout; a failure becomes a refusal."""
    try:
        done = subprocess.run(list(argv), cwd=cwd, env=None if env is None else dict(env),
                              capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise Refused.one(missing, f"{argv[0]}: command not found") from None
    except subprocess.TimeoutExpired:
        raise Refused.one(failed, f"{' '.join(argv[:3])}: no answer in {timeout:.0f} s") from None
    except OSError as exc:
        raise Refused.one(missing, f"{argv[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        detail = (done.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise Refused.one(failed, f"`{' '.join(argv[:3])}` exited {done.returncode}: {detail}")
    return done.stdout
