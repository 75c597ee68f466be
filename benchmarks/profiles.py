"""Where the time of an operation goes: `cProfile` of one run, summarised for the report.

The report shows this for the operations whose target is not met, so the page says why with
the figures of the same run (docs/benchmarks.md)."""

from __future__ import annotations

import pstats
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _where(filename: str, line: int, name: str) -> str:
    if filename.startswith("~") or filename.startswith("<"):
        return name  # a built-in: `{method 'update' of '_hashlib.HASH' objects}`
    path = Path(filename)
    for anchor in (ROOT / "tooling", Path(sys.prefix), Path(sys.base_prefix)):
        if path.is_relative_to(anchor):
            path = path.relative_to(anchor)
            break
    return f"{path}:{line} {name}"


def summary(argv: Sequence[str | Path], *, env: Mapping[str, str], top: int = 8,
            cwd: Path | None = None) -> list[str]:
    """Run `python -m cProfile -m horon_bundle ARGV` once; its own time per function, most
    first (`top` rows), as markdown list items."""
    with tempfile.TemporaryDirectory(prefix="horon-profile-") as scratch:
        out = Path(scratch) / "run.prof"
        done = subprocess.run([sys.executable, "-m", "cProfile", "-o", str(out), "-m",
                               "horon_bundle", *map(str, argv)], env=dict(env), cwd=cwd,
                              capture_output=True, text=True, check=False)
        if not out.is_file():
            return [f"profile failed (exit {done.returncode}): {done.stderr[-300:]}"]
        stats = pstats.Stats(str(out))
        total = stats.total_tt  # type: ignore[attr-defined]
        rows = sorted(stats.stats.items(),  # type: ignore[attr-defined]
                      key=lambda item: item[1][2], reverse=True)[:top]
        lines = [f"{total:.2f} s in all (profiled: slower than unprofiled)"]
        for (filename, line, name), (_calls, count, own, cumulative, _) in rows:
            lines.append(f"{own:.2f} s own, {cumulative:.2f} s cumulative, {count} calls: "
                         f"`{_where(filename, line, name)}`")
        return lines
