"""Running the declared cargo command and reading what it compiled from its JSON messages.

The features actually compiled for each package come from `compiler-artifact` messages, per
package id and compile kind (a build-dependency is compiled for the host, possibly with other
features than the same crate compiled for the target).
"""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from horon_bundle.cargo.diagnostics import cargo_failure
from horon_bundle.cargo.metadata import feature_flags
from horon_bundle.core import codes, identifiers
from horon_bundle.core.errors import Refused
from horon_bundle.core.process import DEVNULL, PIPE, spawn
from horon_bundle.core.strictjson import read_json

KIND_TARGET = "target"
MAX_MESSAGE_BYTES = 64 << 20
KIND_HOST = "host"

_ENV_EXACT = frozenset([
    "RUSTFLAGS", "CARGO_ENCODED_RUSTFLAGS", "RUSTC", "RUSTC_WRAPPER",
    "RUSTC_WORKSPACE_WRAPPER", "RUSTUP_TOOLCHAIN", "SOURCE_DATE_EPOCH", "CARGO_INCREMENTAL",
    "CC", "CXX", "AR", "CFLAGS", "CXXFLAGS", "LDFLAGS", "MACOSX_DEPLOYMENT_TARGET",
])
_ENV_PREFIXES = ("CARGO_PROFILE_", "CARGO_BUILD_", "CARGO_TARGET_", "CARGO_CFG_", "CC_", "CFLAGS_",
                 "CXXFLAGS_")
_SECRET = re.compile(r"TOKEN|SECRET|PASSW|KEY|CREDENTIAL|AUTH|COOKIE|SESSION|PRIVATE|CERT",
                     re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompiledUnit:
    """One compiler-artifact message: a package compiled once for one kind."""

    package_id: str
    kind: str
    features: tuple[str, ...]
    crate_types: tuple[str, ...]
    filenames: tuple[Path, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class CargoRun:
    argv: tuple[str, ...]
    env: dict[str, str]
    exit_status: int
    units: tuple[CompiledUnit, ...]
    library: Path
    artifacts: tuple[Path, ...]
    log: str


def build_argv(*, package: str, claim: Sequence[str], profile: str, target: str,
               target_dir: str) -> list[str]:
    """The declared cargo command; `target_dir` is spelled as it should be recorded."""
    return ["cargo", "build", "--locked", "--lib", "-p", package,
            *feature_flags(package, claim), "--profile", profile, "--target", target,
            "--message-format=json", "--target-dir", target_dir]


class PathNormaliser:
    """Replaces machine-specific paths by placeholders in recorded argv, env and artifacts."""

    def __init__(self, replacements: Mapping[str, Path]) -> None:
        pairs = [(str(path), name) for name, path in replacements.items()]
        self._pairs = sorted(pairs, key=lambda pair: -len(pair[0]))

    def text(self, value: str) -> str:
        for prefix, name in self._pairs:
            value = value.replace(prefix, name)
        return value.replace(os.sep, "/") if os.sep != "/" else value


def recorded_environment(environ: Mapping[str, str], normalise: PathNormaliser) -> dict[str, str]:
    """The allowlisted build environment, secrets never included, paths normalised."""
    recorded = {}
    for name, value in environ.items():
        if _SECRET.search(name):
            continue
        if name in _ENV_EXACT or name.startswith(_ENV_PREFIXES):
            recorded[name] = normalise.text(value)
    return dict(sorted(recorded.items()))


def run_cargo_build(*, workspace: Path, package: str, claim: Sequence[str], profile: str,
                    target: str, target_dir: Path, normalise: PathNormaliser,
                    environ: Mapping[str, str],
                    on_line: Callable[[str], None] | None = None) -> CargoRun:
    argv = build_argv(package=package, claim=claim, profile=profile, target=target,
                      target_dir=str(target_dir))
    env = dict(environ)
    env["CARGO_TERM_COLOR"] = "never"
    units: list[CompiledUnit] = []
    target_root = (target_dir / target).resolve()
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as log:
        errors: list[str] = []
        with spawn(argv, cwd=workspace, env=env, stdout=PIPE, stderr=log, stdin=DEVNULL,
                   text=True, encoding="utf-8", errors="replace") as process:  # closes the pipe
            assert process.stdout is not None
            for line in process.stdout:
                unit = _unit(line, target_root, errors)
                if unit is not None:
                    units.append(unit)
                    if on_line is not None:
                        on_line(f"compiled {unit.package_id.rsplit('#', 1)[-1]} ({unit.kind})")
            status = process.wait()
        log.seek(0)
        log_text = log.read()
    if status != 0:
        raise cargo_failure(argv, status, log_text, cwd=workspace, diagnostics=errors)
    plugin_units = [u for u in units if u.kind == KIND_TARGET and "cdylib" in u.crate_types]
    if len(plugin_units) != 1:
        raise Refused.one(codes.CARGO_OUTPUT,
                          f"cargo reported {len(plugin_units)} cdylib artifacts for {target}")
    library = _library_file(plugin_units[0].filenames, target)
    return CargoRun(argv=tuple(normalise.text(a) for a in argv),
                    env=recorded_environment(environ, normalise), exit_status=status,
                    units=tuple(units), library=library,
                    artifacts=plugin_units[0].filenames, log=log_text)


def _unit(line: str, target_root: Path, errors: list[str]) -> CompiledUnit | None:
    """A compiler-artifact message as a unit; compiler errors are collected into `errors`."""
    if not line.startswith("{"):
        return None
    try:
        message = read_json(line.encode("utf-8"), source="cargo message",
                            max_bytes=MAX_MESSAGE_BYTES, any_number=True)
    except Refused:
        return None
    if not isinstance(message, dict):
        return None
    if message.get("reason") == "compiler-message":
        diagnostic = message.get("message") or {}
        if diagnostic.get("level") == "error":  # rustc's own rendering, with its context
            errors.append(str(diagnostic.get("rendered") or diagnostic.get("message", "")))
        return None
    if message.get("reason") != "compiler-artifact":
        return None
    target = message["target"]
    if "custom-build" in target["kind"]:
        return None  # the build script binary, not the package's code
    filenames = tuple(Path(f) for f in message["filenames"])
    kind = KIND_TARGET if any(_inside(f, target_root) for f in filenames) else KIND_HOST
    return CompiledUnit(package_id=message["package_id"], kind=kind,
                        features=tuple(sorted(message["features"])),
                        crate_types=tuple(target["crate_types"]), filenames=filenames)


def _inside(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True


def _library_file(filenames: Sequence[Path], target: str) -> Path:
    wanted = identifiers.LIBRARY_EXTENSIONS.get(identifiers.target_os(target) or "linux", ".so")
    for filename in filenames:
        if filename.name.endswith(wanted):
            return filename
    raise Refused.one(codes.CARGO_OUTPUT, f"no {wanted} among cargo's artifacts {filenames}")
