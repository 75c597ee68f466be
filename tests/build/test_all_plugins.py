"""`build --all-plugins`: one resolve shared where it is each plugin's own, cargo for the next
plugin overlapped with the bundling of the previous, the outcome of a sequential run."""

from __future__ import annotations

import os
import subprocess
import threading
from pathlib import Path

import pytest

from horon_bundle.build.overlap import overlapped
from horon_bundle.build.shared_resolve import SharedResolve, resolve_is_feature_free
from horon_bundle.cargo.metadata import load_metadata, load_workspace_metadata
from tests.helpers import HOST, assert_refused, cli, tree_snapshot

CLAIM = ("clock", "greeting")


def _two_plugins(root: Path, *, optional: bool) -> tuple[Path, list[str]]:
    from benchmarks.fixtures import many_plugins_workspace  # noqa: PLC0415 - the bench's maker

    workspace, ids = many_plugins_workspace(root, 2)
    if optional:  # plugin-01's `clock` feature pulls in a helper crate of the workspace
        helper = workspace / "crates" / "helper"
        (helper / "src").mkdir(parents=True)
        (helper / "src" / "lib.rs").write_text("pub fn value() -> u32 {\n    1\n}\n")
        (helper / "Cargo.toml").write_text('[package]\nname = "helper"\nversion = "0.1.0"\n'
                                           'edition = "2021"\nlicense = "Apache-2.0"\n')
        manifest = workspace / "crates" / "plugin-01" / "Cargo.toml"
        text = manifest.read_text().replace("clock = []", 'clock = ["dep:helper"]')
        manifest.write_text(text.rstrip() + '\nhelper = { path = "../helper", optional = true }\n')
        subprocess.run(["cargo", "generate-lockfile", "--offline"], cwd=workspace, check=True,
                       capture_output=True)
    return workspace, ids


def test_one_resolve_serves_every_plugin_without_optional_dependencies(tmp_path: Path) -> None:
    """The shared call's resolve is each plugin's own (the same packages and edges), so the
    graph walked from it is the same."""
    workspace, _ = _two_plugins(tmp_path, optional=False)
    shared = load_workspace_metadata(workspace, target=HOST)
    assert resolve_is_feature_free(shared)
    for package in ("horon-plugin-01", "horon-plugin-02"):
        own = load_metadata(workspace, target=HOST, package=package, claim=CLAIM)
        assert own == shared, package
    assert SharedResolve(workspace, environ=os.environ, target_dir=None).for_target(HOST) == shared


def test_an_optional_dependency_keeps_each_plugins_own_resolve(tmp_path: Path) -> None:
    """A feature that activates an optional dependency adds an edge the shared call does not
    have: with one in the workspace, every plugin asks cargo for its own resolve."""
    workspace, _ = _two_plugins(tmp_path, optional=True)
    shared = load_workspace_metadata(workspace, target=HOST)
    own = load_metadata(workspace, target=HOST, package="horon-plugin-01", claim=CLAIM)
    plugin = own.member("horon-plugin-01")
    assert plugin is not None
    assert [e.dep_name for e in own.edges[plugin.id]] == ["helper"]
    assert shared.edges.get(plugin.id, ()) != own.edges[plugin.id]
    assert not resolve_is_feature_free(shared)
    assert SharedResolve(workspace, environ=os.environ, target_dir=None).for_target(HOST) is None


def test_overlapped_keeps_order_and_the_first_failure_in_order() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def first(item: int) -> int:
        with lock:
            seen.append(f"first {item}")
        if item == 3:
            raise ValueError("first 3")
        return item * 10

    def second(item: int, middle: int) -> int:
        with lock:
            seen.append(f"second {item}")
        if item == 1:
            raise KeyError("second 1")
        return middle + 1

    assert overlapped([0, 1, 2], first, lambda i, m: m + 1) == [1, 11, 21]
    # item 1's bundling failed: its error is the one raised (not the cargo step's of item 3,
    # which may have run meanwhile), and nothing after it is bundled
    with pytest.raises(KeyError, match="second 1"):
        overlapped([0, 1, 2, 3, 4], first, second)
    assert "first 4" not in seen
    assert "second 2" not in seen
    # a cargo step fails: every earlier item is finished first, as a sequential run leaves it
    seen.clear()
    with pytest.raises(ValueError, match="first 3"):
        overlapped([0, 2, 3, 4], first, second)
    assert {"second 0", "second 2"} <= set(seen)
    assert "first 4" not in seen

    # an interrupt in a cargo step: what is queued behind it is not bundled (item 0's
    # bundling is held until the interrupt has been taken in, item 1's waits behind it)
    seen.clear()
    release = threading.Event()

    def interrupted(item: int) -> int:
        if item == 2:
            threading.Timer(0.2, release.set).start()
            raise KeyboardInterrupt
        return item

    def held(item: int, middle: int) -> int:
        release.wait(timeout=10)
        with lock:
            seen.append(f"second {item}")
        return middle

    with pytest.raises(KeyboardInterrupt):
        overlapped([0, 1, 2], interrupted, held)
    assert seen == ["second 0"]


@pytest.mark.slow
def test_a_plugin_refused_by_its_probe_stops_the_run_in_order(tmp_path: Path,
                                                              cargo_target_dir: Path) -> None:
    """plugin-01's library aborts when loaded: its probe's refusal is the run's, nothing of it
    is written, and plugin-02 (whose cargo command and probe may have run meanwhile) is never
    bundled, as in a sequential run."""
    workspace, _ = _two_plugins(tmp_path, optional=False)
    library = workspace / "crates" / "plugin-01" / "src" / "lib.rs"
    library.write_text(library.read_text() + ABORT_AT_LOAD)
    out = tmp_path / "out"
    result = cli("build", workspace, "--all-plugins", "--out", out,
                 "--target-dir", cargo_target_dir / "two-plugins")
    assert_refused(result, "abi.crash")
    assert "libhoron_plugin_01.so" in result.stderr
    assert tree_snapshot(out) == {}


ABORT_AT_LOAD = """
/// Test fault: the library aborts as soon as it is loaded.
#[used]
#[unsafe(link_section = ".init_array")]
static ABORT_AT_LOAD: extern "C" fn() = {
    extern "C" fn abort_at_load() {
        std::process::abort()
    }
    abort_at_load
};
"""
