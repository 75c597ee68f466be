"""The fixtures every test file shares, each built once per run with the real cargo.

Every shared build lives here (never imported into a test module, which would set it up once
per importing module) and is made once per run, however many xdist workers ask for it
(`tests/session_builds.py`); a real OCI registry runs once per worker, each test getting a
repository of its own (`tests/publish_support.py`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests import helpers
from tests.claude_host import ClaudeHost, pinned_claude
from tests.harness_support import add_small_files, write_plugin
from tests.helpers import FIXTURES, HOST, TEMPLATE, cli
from tests.install_support import Bundles
from tests.publish_support import REGISTRY_BINARY, Registry, Releases
from tests.session_builds import (
    MANY_FILES,
    BuiltExample,
    Compiled,
    ManyFiles,
    build_fault,
    built,
    bumped_workspace,
    cargo_target,
    compile_example,
    compiled_in,
    example_in,
    narrow_workspace,
    shared_build,
    the_one,
)
from tests.tlog_support import GoChecker, build_checker

__all__ = ["BuiltExample", "Compiled", "ManyFiles"]

# Property tests (tests/core/test_properties.py): a small, reproducible budget in the normal run;
# `nox -s fuzz` selects the large one (docs/threat-model.md, "Fuzz budget").
settings.register_profile("default", max_examples=60, derandomize=True, database=None,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HORON_HYPOTHESIS_PROFILE", "default"))


REGISTRY_FIXTURES = frozenset({"registry", "fresh_registry", "auth_registry"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`registry` on every test that talks to a real registry (it takes one of its fixtures),
    so `-m "not registry"` runs where docker-registry is not installed."""
    for item in items:
        if REGISTRY_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.registry)


@pytest.fixture(autouse=True)
def _no_ambient_publish_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide publish settings and epochs themselves."""
    for name in ("HORON_PUBLISH_ENABLED", "HORON_PUBLISH_DESTINATION",
                 "HORON_PUBLISH_PUBLIC_URL", "SOURCE_DATE_EPOCH", "HORON_BUILDER_ID"):
        monkeypatch.delenv(name, raising=False)
    os.environ.setdefault("CARGO_NET_OFFLINE", "true")


@pytest.fixture(autouse=True)
def _process_only_when_marked(request: pytest.FixtureRequest) -> Iterator[None]:
    """`tests.helpers.cli_process` (a CLI child) only in tests marked `process`."""
    helpers.PROCESS_ALLOWED["now"] = request.node.get_closest_marker("process") is not None
    yield
    helpers.PROCESS_ALLOWED["now"] = True


# --- the example plugin, built once ------------------------------------------------------------

@pytest.fixture(scope="session")
def many_files_harness(tmp_path_factory: pytest.TempPathFactory) -> ManyFiles:
    """A real harness plugin of 12,000 small files (a vendored node_modules: 12 packages of
    1,000) and its zip, built once per run (about 20 s here: the files, then the build)."""
    def build(out: Path) -> None:
        plugin = write_plugin(out / "plugin")
        add_small_files(plugin, MANY_FILES)
        built(cli("build", plugin, "--out", out / "dist"))
    directory = shared_build(tmp_path_factory, "many-files-harness", build)
    return ManyFiles(plugin=directory / "plugin",
                     zip=the_one(directory / "dist", "*.zip"))


@pytest.fixture(scope="session")
def cargo_target_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cargo target dir for the whole run, so each crate compiles once (`nox -s mutants`
    gives one for the whole run: each mutant's tests are a pytest session)."""
    return cargo_target(tmp_path_factory)


@pytest.fixture(scope="session")
def example_release(tmp_path_factory: pytest.TempPathFactory,
                    cargo_target_dir: Path) -> BuiltExample:
    """`build` of the example plugin: its bundle directory and archive."""
    prebuilt = os.environ.get("HORON_TEST_PREBUILT_EXAMPLE")
    if prebuilt:  # `nox -s mutants` builds it once, not once per mutant's pytest session
        out = tmp_path_factory.mktemp("example-release")
        shutil.copytree(prebuilt, out, dirs_exist_ok=True, symlinks=True)
        example = example_in(out)
        assert example.bundle.is_dir(), f"HORON_TEST_PREBUILT_EXAMPLE={prebuilt} holds no bundle"
        return example
    return example_in(shared_build(tmp_path_factory, "example-release", lambda out: built(
        cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir))))


@pytest.fixture(scope="session")
def example_qa(tmp_path_factory: pytest.TempPathFactory,
               cargo_target_dir: Path) -> BuiltExample:
    """`build --channel qa` of the example plugin (its QA provider compiled in)."""
    out = shared_build(tmp_path_factory, "example-qa", lambda out: built(
        cli("build", TEMPLATE, "--channel", "qa", "--out", out, "--target-dir",
            cargo_target_dir)))
    return example_in(out, f"example-0.1.0-{HOST}-qa")


@pytest.fixture(scope="session")
def compiled_example(tmp_path_factory: pytest.TempPathFactory,
                     cargo_target_dir: Path) -> Compiled:
    """`compile` of the example: a library and its artifact record (evidence kind 2)."""
    return compiled_in(shared_build(tmp_path_factory, "compiled", lambda out: compile_example(
        out, cargo_target_dir)))


@pytest.fixture(scope="session")
def compiled_example_qa(tmp_path_factory: pytest.TempPathFactory,
                        cargo_target_dir: Path) -> Compiled:
    return compiled_in(shared_build(tmp_path_factory, "compiled-qa", lambda out: compile_example(
        out, cargo_target_dir, "--channel", "qa")))


@pytest.fixture(scope="session")
def record_example(tmp_path_factory: pytest.TempPathFactory,
                   compiled_example: Compiled) -> BuiltExample:
    """The example bound through its artifact record: `build --prebuilt LIB --record REC`."""
    return example_in(shared_build(tmp_path_factory, "record-built", lambda out: built(
        cli("build", TEMPLATE, "--out", out, "--prebuilt", compiled_example.library,
            "--record", compiled_example.record))))


@pytest.fixture(scope="session")
def releases(tmp_path_factory: pytest.TempPathFactory, cargo_target_dir: Path,
             example_release: BuiltExample, example_qa: BuiltExample) -> Releases:
    """Archives of real builds for publishing: two plugins, a qa variant, and the example's
    id/version/target with other bytes (another SOURCE_DATE_EPOCH: other zip timestamps)."""
    clean = shared_build(tmp_path_factory, "clean", lambda out: built(
        cli("build", FIXTURES / "qa-member-only", "--out", out, "--target-dir",
            cargo_target_dir)))
    other = shared_build(tmp_path_factory, "example-other-bytes", lambda out: built(
        cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir,
            env={"SOURCE_DATE_EPOCH": "1700000000"})))
    found = Releases(example=example_release.archive, example_qa=example_qa.archive,
                     clean=the_one(clean, f"clean-*-{HOST}.zip"),
                     example_other_bytes=example_in(other).archive)
    assert found.example.read_bytes() != found.example_other_bytes.read_bytes()
    return found


@pytest.fixture(scope="session")
def bundles(tmp_path_factory: pytest.TempPathFactory, example_release: BuiltExample) -> Bundles:
    """Versions for the install tests: 0.1.0, 0.2.0, and 0.1.0 with a narrower feature claim.
    Each variant gets its own cargo target dir, as a plugin's checkouts would."""
    def v2(out: Path) -> None:
        built(cli("build", bumped_workspace(out, "0.2.0"), "--out", out / "dist",
                  "--target-dir", out / "target"))

    def narrow(out: Path) -> None:
        built(cli("build", narrow_workspace(out), "--out", out / "dist", "--target-dir",
                  out / "target"))

    second = example_in(shared_build(tmp_path_factory, "example-0.2.0", v2) / "dist",
                        f"example-0.2.0-{HOST}")
    other = example_in(shared_build(tmp_path_factory, "example-narrow", narrow) / "dist")
    return Bundles(v1=example_release.archive, v1_dir=example_release.bundle,
                   v2=second.archive, v2_dir=second.bundle, v1_other=other.archive)


@pytest.fixture(scope="session")
def go_checker(tmp_path_factory: pytest.TempPathFactory) -> GoChecker:
    """Go's sumdb/note and sumdb/tlog as a program checking a log (tests/tlog_support.py)."""
    return GoChecker(shared_build(tmp_path_factory, "go-checker", build_checker) / "checker")


@pytest.fixture(scope="session")
def fault_bundle(tmp_path_factory: pytest.TempPathFactory,
                 cargo_target_dir: Path) -> Callable[[str], Path]:
    """The bundle directory of one tests/fixtures/abi-faults crate, built on first use."""
    def get(crate: str) -> Path:
        out = shared_build(tmp_path_factory, f"fault-{crate}",
                           lambda out: build_fault(crate, out, cargo_target_dir))
        return out / f"{crate}-0.1.0-{HOST}"

    return get


# --- a real OCI registry: one per worker, a repository per test --------------------------------

@pytest.fixture(scope="session")
def _registry_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    if shutil.which(REGISTRY_BINARY) is None:
        pytest.fail("docker-registry is not installed (apt-get install docker-registry)")
    server = Registry(tmp_path_factory.mktemp("registry"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def registry(_registry_server: Registry, request: pytest.FixtureRequest) -> Registry:
    """The worker's registry, seen through a repository of this test's own (and its access
    log from now on)."""
    return _registry_server.for_test(request.node.nodeid)


@pytest.fixture
def fresh_registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Registry]:
    """A registry of this test's own, for tests that stop and restart it."""
    if shutil.which(REGISTRY_BINARY) is None:
        pytest.fail("docker-registry is not installed (apt-get install docker-registry)")
    server = Registry(tmp_path_factory.mktemp("registry"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --- the real Claude Code CLI, pinned (tests/claude_host.py) -----------------------------------

@pytest.fixture(scope="session")
def claude_host() -> ClaudeHost:
    """The pinned Claude Code CLI, fetched from npm into a cache outside the repository once
    and checked against its pinned integrity; a test taking it fails when it cannot be had."""
    return pinned_claude()
