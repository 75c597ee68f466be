"""Real builds the whole run shares, each made once — once per run, not per worker.

Under pytest-xdist every worker is its own pytest session, so a session fixture alone would
build once per worker. `shared_build` puts each build in a directory common to every worker of
the run (`tmp_path_factory`'s base's parent under xdist) and takes an exclusive `flock` on a
lock file beside it while it builds: the first worker to ask builds, the others wait and reuse
what it left (a `.done` file marks a finished build; a build that failed leaves none, so the
next asker starts it again from nothing). Tests never change what these fixtures return: they
copy it first (`tests.helpers.copy_bundle`).
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import FIXTURES, HOST, TEMPLATE, CliResult, cli, copy_workspace

_DONE = ".done"


def run_root(factory: pytest.TempPathFactory) -> Path:
    """The directory every worker of this run shares (the session's own without xdist)."""
    base = factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def shared_build(factory: pytest.TempPathFactory, name: str,
                 build: Callable[[Path], None]) -> Path:
    """`build(directory)` once per run; the directory it filled."""
    shared = run_root(factory) / "shared"
    shared.mkdir(exist_ok=True)
    directory = shared / name
    with _exclusive(shared / f"{name}.lock"):
        if not (directory / _DONE).exists():
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir()
            build(directory)
            (directory / _DONE).touch()
    return directory


def cargo_target(factory: pytest.TempPathFactory) -> Path:
    """One cargo target directory for the run (cargo and the build lock it themselves)."""
    shared = os.environ.get("HORON_TEST_CARGO_TARGET_DIR")
    if shared:
        return Path(shared)
    target = run_root(factory) / "shared" / "cargo-target"
    target.mkdir(parents=True, exist_ok=True)
    return target


def built(result: CliResult) -> None:
    assert result.status == 0, result.stderr


def the_one(directory: Path, pattern: str) -> Path:
    found = sorted(directory.glob(pattern))
    assert len(found) == 1, (pattern, [p.name for p in directory.iterdir()])
    return found[0]


MANY_FILES = 12_000  # files added to `many_files_harness`: more than a native bundle holds


@dataclass(frozen=True)
class ManyFiles:
    """`many_files_harness`: the plugin workspace and the zip built from it."""

    plugin: Path
    zip: Path


@dataclass(frozen=True)
class BuiltExample:
    out: Path
    bundle: Path
    archive: Path


def example_in(out: Path, name: str = f"example-0.1.0-{HOST}") -> BuiltExample:
    return BuiltExample(out=out, bundle=out / name, archive=out / f"{name}.zip")


@dataclass(frozen=True)
class Compiled:
    """`compile` of the example: the library, its artifact record, and `compile --json`."""

    library: Path
    record: Path
    document: Path  # what `compile --json` printed


def compile_example(out: Path, target_dir: Path, *args: str) -> None:
    result = cli("compile", TEMPLATE, "--out", out / "compiled", "--target-dir", target_dir,
                 "--json", *args)
    built(result)
    (out / "compile.json").write_text(result.stdout)


def compiled_in(out: Path) -> Compiled:
    directory = the_one(out / "compiled", "*.compiled")
    [library] = [p for p in directory.iterdir() if p.name != "record.json"]
    return Compiled(library=library, record=directory / "record.json",
                    document=out / "compile.json")


def bumped_workspace(tmp: Path, version: str) -> Path:
    """A copy of the example plugin at another version."""
    workspace = copy_workspace(TEMPLATE, tmp / f"example-{version}")
    for name in ("Cargo.toml", "Cargo.lock"):
        path = workspace / name
        text = path.read_text()
        changed = re.sub(r'(name = "horon-example"\nversion = )"0\.1\.0"', rf'\1"{version}"',
                         text)
        assert changed != text, name
        path.write_text(changed)
    return workspace


def narrow_workspace(tmp: Path) -> Path:
    """A copy of the example plugin claiming fewer features (so another library)."""
    narrow = copy_workspace(TEMPLATE, tmp / "example-narrow")
    declaration = narrow / "horon-release.toml"
    declaration.write_text(declaration.read_text().replace('features = ["clock", "greeting"]',
                                                           'features = ["greeting"]'))
    return narrow


ABI_FAULTS = FIXTURES / "abi-faults"
# bundled with the build's probe switched off in the building process only (the product has
# no switch for it): the probe refuses each of them, or (fault-minor) records the minor it
# says, where a bundle assembled unobserved records minor 0; and libraries that must never be
# loaded by a build in the test's own process (a daemon, a parent killer, 3 GiB, forgeries)
UNPROBED = frozenset({
    "fault-wire", "fault-short", "fault-segv", "fault-major", "fault-plugin-id",
    "fault-features", "fault-status", "fault-no-symbol", "fault-garbage", "fault-minor",
    "fault-setsid", "fault-kill-parent", "fault-memory", "fault-forged-answer",
    "fault-overrun-one",
})


@contextmanager
def probe_switched_off() -> Iterator[None]:
    """The build's child-process probe replaced, in this process only, by "not observed"
    (as for a library no build here could load): the product has no switch for it."""
    from horon_bundle.build import observation  # noqa: PLC0415 - the tree under test

    read = observation.read_advertised
    observation.read_advertised = (
        lambda library, **_: (None, ["probe disabled for a doctor fixture"]))
    try:
        yield
    finally:
        observation.read_advertised = read


def build_fault(crate: str, out: Path, target_dir: Path) -> None:
    """The bundle of one abi-faults crate, through the real CLI in this process."""
    args = ("build", ABI_FAULTS, "--plugin", crate, "--out", out, "--target-dir", target_dir)
    if crate not in UNPROBED:
        built(cli(*args))
        return
    with probe_switched_off():
        built(cli(*args))
