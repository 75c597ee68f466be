"""Facts about the Rust toolchain: versions, host triple, installed standard libraries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import DEVNULL, PIPE, Popen, TimeoutExpired, run_text

_LIBDIR_TIMEOUT = 60  # seconds; rustc answers in milliseconds


@dataclass(frozen=True, slots=True, kw_only=True)
class Toolchain:
    cargo_version: str
    rustc_version: str
    rustc_commit: str
    host: str
    # the host's standard library directory (`rustc --print target-libdir`, run while
    # `cargo --version` runs); None when it did not answer (`require_targets` asks again); not
    # a recorded fact
    host_libdir: Path | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, str]:
        return {"cargo": self.cargo_version, "rustc": self.rustc_version,
                "rustc_commit": self.rustc_commit, "host": self.host}


def probe_toolchain(workspace: Path, *, env: Mapping[str, str] | None = None) -> Toolchain:
    """Ask cargo and rustc about themselves, from the workspace (rust-toolchain files apply).

    `rustc -vV` runs first (rustup may install the workspace's toolchain on that first use);
    then `rustc --print target-libdir` (the host's standard library, so that `require_targets`
    asks nothing more for the host target) is started, and runs while `cargo --version`
    does."""
    # a toolchain that cannot say its own version (rustup with no default toolchain, a
    # rust-toolchain file naming one not installed) is this machine's problem: exit 3
    verbose = run_text(["rustc", "-vV"], cwd=workspace, env=env, failed=codes.TOOLCHAIN_MISSING)
    libdir = _started(["rustc", "--print", "target-libdir"], cwd=workspace, env=env)
    try:
        cargo = run_text(["cargo", "--version"], cwd=workspace, env=env,
                         failed=codes.TOOLCHAIN_MISSING).strip()
    finally:
        host_libdir = _printed_path(libdir)
    facts = dict(line.split(": ", 1) for line in verbose.splitlines()[1:] if ": " in line)
    return Toolchain(cargo_version=cargo, rustc_version=verbose.splitlines()[0].strip(),
                     rustc_commit=facts.get("commit-hash", "unknown"),
                     host=facts.get("host", "unknown"), host_libdir=host_libdir)


def _started(argv: list[str], *, cwd: Path,
             env: Mapping[str, str] | None) -> Popen[str] | None:
    try:
        return Popen(argv, cwd=cwd, env=None if env is None else dict(env), stdin=DEVNULL,
                     stdout=PIPE, stderr=DEVNULL, text=True, encoding="utf-8",
                     errors="replace")
    except OSError:
        return None


def _printed_path(process: Popen[str] | None) -> Path | None:
    """The absolute path the process printed, or None (failed, silent, too slow: then
    `require_targets` asks rustc itself and reports what it says)."""
    if process is None:
        return None
    try:
        out, _ = process.communicate(timeout=_LIBDIR_TIMEOUT)
    except TimeoutExpired:
        process.kill()
        process.communicate()
        return None
    path = Path(out.strip())
    return path if process.returncode == 0 and path.is_absolute() else None


def require_targets(workspace: Path, targets: list[str], *,
                    env: Mapping[str, str] | None = None,
                    toolchain: Toolchain | None = None) -> None:
    """Refuse (exit 3) before building anything if a target's standard library is missing
    (the host's directory from `toolchain`, when its probe printed it)."""
    missing = []
    for target in targets:
        if toolchain is not None and target == toolchain.host and toolchain.host_libdir:
            libdir = toolchain.host_libdir
        else:
            libdir = Path(run_text(["rustc", "--print", "target-libdir", "--target", target],
                                   cwd=workspace, env=env,
                                   failed=codes.TOOLCHAIN_TARGET_MISSING).strip())
        if not libdir.is_dir() or not any(libdir.glob("libcore-*")):
            missing.append(target)
    if missing:
        raise Refused.one(codes.TOOLCHAIN_TARGET_MISSING,
                          f"no Rust standard library for {', '.join(missing)}",
                          f"Run `rustup target add {' '.join(missing)}`.")
