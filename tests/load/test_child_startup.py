"""The child starts lean: `python -I -S -B`, the standard library and its own four modules only,
its bytecode compiled by the parent (the child never writes into the toolchain's install)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from horon_bundle.load import bytecode
from horon_bundle.load.bytecode import CHILD_PACKAGE, compile_child
from horon_bundle.load.runner import child_argv, child_environment
from tests.helpers import REPO

# What the child may have imported before it loads the library: these and the interpreter's
# own start-up, nothing of the toolchain beyond them, nothing that only annotates.
CHILD_MODULES = {"horon_bundle", "horon_bundle.abi", "horon_bundle.abi.types",
                 "horon_bundle.load", "horon_bundle.load.child",
                 "horon_bundle.load.child.doctor", "horon_bundle.load.child.entry",
                 "horon_bundle.load.child.keeper", "horon_bundle.load.child.loading"}
NOT_IN_THE_CHILD = {"typing", "pathlib", "base64", "site", "dataclasses", "urllib.parse"}


def test_the_child_runs_without_site_unless_coverage_needs_it(tmp_path: Path) -> None:
    argv = child_argv("doctor", tmp_path / "lib.so", {})
    assert argv[:4] == [sys.executable, "-I", "-S", "-B"]
    covered = child_argv("doctor", tmp_path / "lib.so", {}, site=True)
    assert covered[1:4] == ["-I", "-B", "-c"]
    env = child_environment(tmp_path, traced=True)
    assert not any(name.startswith("COVERAGE_") for name in env)  # so: -S under a tracer


@pytest.mark.process
def test_the_child_imports_only_what_it_needs_before_the_load(tmp_path: Path) -> None:
    argv = child_argv("doctor", tmp_path / "lib.so", {})
    bootstrap = argv[argv.index("-c") + 1]
    probe = bootstrap.replace("from horon_bundle.load.child.entry import main; "
                              "sys.exit(main(sys.argv[1:]))",
                              "import horon_bundle.load.child.entry; print(sorted(sys.modules))")
    assert probe != bootstrap
    done = subprocess.run([*argv[:argv.index("-c")], "-c", probe, str(REPO / "tooling")],
                          capture_output=True, text=True, check=True, cwd=tmp_path,
                          env={"PATH": os.environ.get("PATH", "")})
    assert done.stdout.startswith(".")  # the start byte, first
    modules = set(eval(done.stdout[1:]))  # noqa: S307 - our own probe's repr of a list of names
    ours = {name for name in modules if name.startswith("horon_bundle")}
    assert ours == CHILD_MODULES
    assert not modules & NOT_IN_THE_CHILD, sorted(modules & NOT_IN_THE_CHILD)


def _copy(tmp_path: Path) -> Path:
    package = tmp_path / "child"
    package.mkdir()
    for source in CHILD_PACKAGE.glob("*.py"):
        shutil.copy2(source, package / source.name)
    return package


def test_the_parent_compiles_missing_and_stale_child_bytecode(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    package = _copy(tmp_path)
    sources = sorted(package.glob("*.py"))
    assert compile_child(package) == sources
    cached = package / "__pycache__"
    assert len(list(cached.glob("*.pyc"))) == len(sources)
    assert compile_child(package) == []  # fresh: nothing again
    entry = package / "entry.py"
    entry.write_text(entry.read_text() + "\n# changed\n")
    os.utime(entry, (1, 1))
    assert compile_child(package) == [entry]
    assert bytecode._fresh(entry, next(cached.glob("entry.*.pyc")))


def test_no_bytecode_is_written_where_python_writes_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = _copy(tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert compile_child(package) == []
    assert not (package / "__pycache__").exists()


def test_an_install_bytecode_cannot_be_written_to_is_left_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    package = _copy(tmp_path)
    (package / "__pycache__").write_bytes(b"")  # a file: no directory can be made there
    assert compile_child(package) == []
