"""Work done on a thread while the build waits (`build.ahead`): the containment probed while
rustc and cargo run, the SBOM renderer imported while the probe child runs."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from horon_bundle.assets import sbom
from horon_bundle.build import ahead
from horon_bundle.build.ahead import (
    IMPORTS,
    PROBES,
    SBOM_RENDERER,
    start_ahead,
    work_ahead,
)
from horon_bundle.load import containment


def test_a_module_imported_ahead_is_the_one_imported_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "horon_ahead_ok.py").write_text("import time\ntime.sleep(0.2)\nVALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    work_ahead([lambda: importlib.import_module("horon_ahead_ok")])
    module = importlib.import_module("horon_ahead_ok")  # waits for the thread's import
    assert module.VALUE == 1
    del sys.modules["horon_ahead_ok"]


def test_a_failing_import_ahead_is_raised_where_the_module_is_needed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "horon_ahead_broken.py").write_text("raise RuntimeError('broken module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    work_ahead([lambda: importlib.import_module("horon_ahead_broken")]).join(30)  # quietly
    with pytest.raises(RuntimeError, match="broken module"):
        importlib.import_module("horon_ahead_broken")


def test_the_module_imported_ahead_is_the_sbom_renderer() -> None:
    """A renamed renderer would leave the build importing ahead nothing it needs."""
    renderer = importlib.import_module(SBOM_RENDERER)
    assert sbom.build_sbom.__module__ == "horon_bundle.assets.sbom"
    assert hasattr(renderer, "render_sbom")
    assert f"from {SBOM_RENDERER} import render_sbom" in Path(sbom.__file__).read_text()


def test_the_containment_probe_ahead_is_the_one_the_child_uses() -> None:
    containment._probe.cache_clear()
    work_ahead(PROBES).join(60)
    assert containment._probe.cache_info().currsize == 1
    assert containment._probe.cache_info().hits == 0
    containment.probe_containment()
    assert containment._probe.cache_info().hits == 1


def test_started_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead, "_STARTED", {})
    first = start_ahead("imports", IMPORTS)
    assert first is not None
    assert start_ahead("imports", IMPORTS) is None
    first.join(60)
    assert SBOM_RENDERER in sys.modules
