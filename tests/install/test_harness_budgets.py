"""Issue 20's small hostile zips through `install` and `fetch`: refused within seconds with a
code and nothing written, or (frontmatter over its budget) admitted with the warnings that
name the files — the judge's budgets hold wherever it runs, twice for each (the zip, then the
stored or staged copy)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.harness_support import nested_brackets_zip, repeated_path_zip
from tests.helpers import HANG_GUARD, assert_refused, cli, tree_snapshot
from tests.install_support import hb, home_state

SECONDS = HANG_GUARD


@pytest.mark.slow
def test_install_and_fetch_refuse_the_repeated_path_zip_in_seconds(tmp_path: Path) -> None:
    archive = repeated_path_zip(tmp_path / "zips")
    home, into = tmp_path / "home", tmp_path / "sandbox" / "amp"
    into.parent.mkdir()
    assert hb("list", home=home).status == 0  # the home exists before
    before, around = home_state(home), tree_snapshot(tmp_path)
    for args in (("install", archive, "--home", home),
                 ("fetch", f"{archive}.ref.json", "--into", into, "--zip", archive)):
        start = time.monotonic()
        result = cli(*args)
        assert time.monotonic() - start < SECONDS
        assert_refused(result, "harness.limit")
        assert result.codes == ["harness.limit"], result.codes
    assert home_state(home) == before
    assert tree_snapshot(tmp_path) == around
    assert not into.exists()


@pytest.mark.slow
def test_the_nested_brackets_zip_installs_and_fetches_with_its_warnings(
        tmp_path: Path) -> None:
    archive = nested_brackets_zip(tmp_path / "zips")
    home, into = tmp_path / "home", tmp_path / "sandbox" / "amp"
    into.parent.mkdir()
    for args in (("fetch", f"{archive}.ref.json", "--into", into, "--zip", archive),
                 ("install", archive, "--home", home)):
        start = time.monotonic()
        result = cli(*args)
        assert time.monotonic() - start < SECONDS
        assert result.status == 0, result.stderr[-2000:]
    assert "WARNING harness.frontmatter: commands/c00.md:" in result.stderr  # install's
    assert sorted(p.name for p in (into / "commands").iterdir())[0] == "c00.md"
    strict = cli("install", archive, "--home", tmp_path / "strict-home", "--strict")
    assert_refused(strict, "harness.frontmatter")
    assert not (tmp_path / "strict-home" / "harness-bundles" / "sha256").exists() or not any(
        (tmp_path / "strict-home" / "harness-bundles" / "sha256").iterdir())
