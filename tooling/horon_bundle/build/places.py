"""Where a build reads and writes: the workspace, the output directory, cargo's target dir.

Like cargo (which finds Cargo.toml from the current directory up) and cargo-dist, GoReleaser
and PyPA build (which write into a folder of the project), a build with no arguments uses the
workspace holding the current directory and writes into `<workspace>/dist/`, never into a
folder relative to wherever it was started; cargo's own target directory (by default
`<cargo workspace>/target/`, or whatever `CARGO_TARGET_DIR` and `.cargo/config.toml` say)
is used unless `--target-dir` names another. The template's `.gitignore` lists both, so our
own outputs never make the next build's source tree dirty. `--out` may point anywhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from horon_bundle.model.declaration import find_workspace

OUT_NAME = "dist"


@dataclass(frozen=True, slots=True, kw_only=True)
class Places:
    workspace: Path
    out: Path
    target_dir: Path | None  # None: cargo's own (its metadata's target_directory)
    found_above: bool  # the workspace was found by walking up from the current directory


def resolve_places(*, workspace: Path | None, out: Path | None, target_dir: Path | None,
                   cwd: Path | None = None) -> Places:
    start = (cwd or Path.cwd()).resolve()
    if workspace is None:
        root = find_workspace(start)
        found_above = root != start
    else:
        root = workspace.resolve()
        found_above = False
    return Places(workspace=root, out=(out.resolve() if out is not None else root / OUT_NAME),
                  target_dir=target_dir.resolve() if target_dir is not None else None,
                  found_above=found_above)
