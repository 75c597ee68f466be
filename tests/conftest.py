"""Session fixtures: the example plugin is built once, with the real cargo, and reused."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.helpers import HOST, TEMPLATE, cli

# Property tests (tests/test_properties.py): a small, reproducible budget in the normal run;
# `nox -s fuzz` selects the large one (docs/threat-model.md, "Fuzz budget").
settings.register_profile("default", max_examples=60, derandomize=True, database=None,
                          deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=20_000, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HORON_HYPOTHESIS_PROFILE", "default"))


@dataclass(frozen=True)
class BuiltExample:
    out: Path
    bundle: Path
    archive: Path


@pytest.fixture(scope="session")
def cargo_target_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cargo target dir for the whole session, so each crate compiles once (`nox -s
    mutants` gives one for the whole run: each mutant's tests are a pytest session)."""
    shared = os.environ.get("HORON_TEST_CARGO_TARGET_DIR")
    return Path(shared) if shared else tmp_path_factory.mktemp("cargo-target")


@pytest.fixture(scope="session")
def example_release(tmp_path_factory: pytest.TempPathFactory,
                    cargo_target_dir: Path) -> BuiltExample:
    out = tmp_path_factory.mktemp("example-release")
    name = f"example-0.1.0-{HOST}"
    prebuilt = os.environ.get("HORON_TEST_PREBUILT_EXAMPLE")
    if prebuilt:  # `nox -s mutants` builds it once, not once per mutant's pytest session
        shutil.copytree(prebuilt, out, dirs_exist_ok=True, symlinks=True)
        assert (out / name).is_dir(), f"HORON_TEST_PREBUILT_EXAMPLE={prebuilt} holds no {name}"
        return BuiltExample(out=out, bundle=out / name, archive=out / f"{name}.zip")
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir)
    assert result.status == 0, result.stderr
    return BuiltExample(out=out, bundle=out / name, archive=out / f"{name}.zip")


@pytest.fixture(autouse=True)
def _no_ambient_publish_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests decide publish settings and epochs themselves."""
    for name in ("HORON_PUBLISH_ENABLED", "HORON_PUBLISH_DESTINATION", "SOURCE_DATE_EPOCH",
                 "HORON_BUILDER_ID"):
        monkeypatch.delenv(name, raising=False)
    os.environ.setdefault("CARGO_NET_OFFLINE", "true")


from tests.install_support import bundles_fixture  # noqa: E402, F401 - the install tests' bundles
