"""Facts about the Rust toolchain: versions, host triple, installed standard libraries."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.core import codes
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import run_text


@dataclass(frozen=True, slots=True, kw_only=True)
class Toolchain:
    cargo_version: str
    rustc_version: str
    rustc_commit: str
    host: str

    def to_json(self) -> dict[str, str]:
        return {"cargo": self.cargo_version, "rustc": self.rustc_version,
                "rustc_commit": self.rustc_commit, "host": self.host}


def probe_toolchain(workspace: Path, *, env: Mapping[str, str] | None = None) -> Toolchain:
    """Ask cargo and rustc about themselves, from the workspace (rust-toolchain files apply)."""
    # a toolchain that cannot say its own version (rustup with no default toolchain, a
    # rust-toolchain file naming one not installed) is this machine's problem: exit 3
    cargo = run_text(["cargo", "--version"], cwd=workspace, env=env,
                     failed=codes.TOOLCHAIN_MISSING).strip()
    verbose = run_text(["rustc", "-vV"], cwd=workspace, env=env, failed=codes.TOOLCHAIN_MISSING)
    facts = dict(line.split(": ", 1) for line in verbose.splitlines()[1:] if ": " in line)
    return Toolchain(cargo_version=cargo, rustc_version=verbose.splitlines()[0].strip(),
                     rustc_commit=facts.get("commit-hash", "unknown"),
                     host=facts.get("host", "unknown"))


def require_targets(workspace: Path, targets: list[str], *,
                    env: Mapping[str, str] | None = None) -> None:
    """Refuse (exit 3) before building anything if a target's standard library is missing."""
    missing = []
    for target in targets:
        libdir = Path(run_text(["rustc", "--print", "target-libdir", "--target", target],
                               cwd=workspace, env=env,
                               failed=codes.TOOLCHAIN_TARGET_MISSING).strip())
        if not libdir.is_dir() or not any(libdir.glob("libcore-*")):
            missing.append(target)
    if missing:
        raise Refused.one(codes.TOOLCHAIN_TARGET_MISSING,
                          f"no Rust standard library for {', '.join(missing)}",
                          f"Run `rustup target add {' '.join(missing)}`.")
