"""cargo's own words when it fails: its error lines with their context, the whole command, a
hint that fits the failure, and the file and line it points at (for CI annotations).

cargo and rustc say precisely what is wrong (`unclosed table, expected ]` at
`Cargo.toml:15:10`, `does not contain this feature` with the nearest spelling); the
toolchain's job is to show that, not to summarise it away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import FailureExplainer, command_line, error_lines

_LOCATION = re.compile(r"\s*-->\s*(?P<file>.+?):(?P<line>\d+)(?::\d+)?\s*")
_MANIFEST_AT = re.compile(r"(?:manifest|lock file) at `(?P<file>[^`]+)`")
_MAX_DIAGNOSTICS = 5

# (what cargo said, what to do): the first that matches the error lines wins.
_HINT_TEXTS = (
    (r"does not contain (this|these) features?|none of the selected packages contains",
     "horon-release.toml's `features` (or `qa-features`) names a feature the package's "
     "Cargo.toml [features] table does not define: fix the spelling in one of the two (cargo's "
     "`help:` line names the nearest feature)."),
    (r"cannot update the lock file|needs to be updated but --locked|lock file .* out of date",
     "Cargo.lock no longer matches Cargo.toml and builds use --locked: run `cargo "
     "generate-lockfile --offline` (or `cargo update --workspace --offline`) in the workspace "
     "and commit Cargo.lock."),
    (r"failed to (download|get|load source|query replaced source)|unable to update registry|"
     r"no matching package named|failed to select a version|index\.crates\.io|network",
     "cargo needed the network and could not reach it: vendor the dependencies (`cargo "
     "vendor`) or use path dependencies; Cargo.lock must list every package."),
    (r"could not compile|error\[E\d+\]",
     "Fix the compile errors shown; `cargo build` in the workspace shows the same "
     "diagnostics."),
    (r"failed to parse manifest|TOML parse error|unclosed table|invalid (table|key|type)|"
     r"duplicate key|unknown field|missing field|could not parse|expected `[\]=.]`",
     "Fix the line cargo points at (`--> file:line:col`) in the workspace's Cargo.toml."),
    (r"did not match any packages|package .* not found|not a member of the workspace",
     "`package` in horon-release.toml must name a package of this cargo workspace."),
    (r"rustup could not choose a version|no default is configured|toolchain .* is not "
     r"installed",
     "rustup has no Rust toolchain to run: `rustup default stable` (or the toolchain the "
     "workspace's rust-toolchain file names)."),
    (r"can't find crate for `(core|std)`|target may not be installed",
     "The target's standard library is missing: run `rustup target add <target>`."),
    (r"linker .* not found|linking with .* failed",
     "Install the C linker for this target (cc, or the target's cross linker)."),
)
_HINTS = tuple((re.compile(pattern, re.IGNORECASE), hint) for pattern, hint in _HINT_TEXTS)


def cargo_hint(lines: Iterable[str], argv: Sequence[str]) -> str:
    text = "\n".join(lines)
    for pattern, hint in _HINTS:
        if pattern.search(text):
            return hint
    return (f"Fix what cargo's error names; `{command_line(argv)}` in the workspace shows it "
            "again.")


def _location(lines: Sequence[str], cwd: Path) -> tuple[str | None, int | None]:
    for line in lines:
        match = _LOCATION.fullmatch(line)
        if match:
            return str(cwd / match["file"]), int(match["line"])
    for line in lines:
        match = _MANIFEST_AT.search(line)
        if match:
            return match["file"], None
    return None, None


def cargo_failure(argv: Sequence[str], status: int, stderr: str, *, cwd: Path,
                  diagnostics: Sequence[str] = ()) -> Refused:
    """The refusal for a failed cargo command: its first error line in the message, every
    error line with its context (`diagnostics`: rustc's rendered errors first) as detail."""
    lines: list[str] = []
    for rendered in diagnostics[:_MAX_DIAGNOSTICS]:
        lines += [line.rstrip() for line in rendered.rstrip().splitlines()]
    if len(diagnostics) > _MAX_DIAGNOSTICS:
        lines.append(f"… {len(diagnostics) - _MAX_DIAGNOSTICS} more compiler errors")
    lines += error_lines(stderr)
    first = next((line.strip() for line in lines if line.lstrip().startswith("error")),
                 lines[0].strip() if lines else "(no output)")
    file, line = _location(lines, cwd)
    return Refused.one(codes.CARGO_FAILED, f"`{command_line(argv)}` exited {status}: {first}",
                       cargo_hint(lines, argv), detail=lines, file=file, line=line)


def explainer(cwd: Path) -> FailureExplainer:
    """`run_text(…, explain=explainer(workspace))` for cargo commands run in `cwd`."""
    def explain(argv: Sequence[str], status: int, stderr: str) -> Refused:
        return cargo_failure(argv, status, stderr, cwd=cwd)
    return explain
