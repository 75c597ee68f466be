"""Importing the SBOM renderer on a thread while cargo runs (`build.import_ahead`)."""

from __future__ import annotations

import importlib
import sys
import time
from pathlib import Path

import pytest

from horon_bundle.assets import sbom
from horon_bundle.build.import_ahead import import_ahead
from horon_bundle.build.library import SBOM_RENDERER


def test_a_module_imported_ahead_is_the_one_imported_later(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "horon_ahead_ok.py").write_text("import time\ntime.sleep(0.2)\nVALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import_ahead("horon_ahead_ok")
    module = importlib.import_module("horon_ahead_ok")  # waits for the thread's import
    assert module.VALUE == 1
    del sys.modules["horon_ahead_ok"]


def test_a_failing_import_ahead_is_raised_where_the_module_is_needed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "horon_ahead_broken.py").write_text("raise RuntimeError('broken module')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import_ahead("horon_ahead_broken")  # nothing raised on the caller's thread
    time.sleep(0.2)
    with pytest.raises(RuntimeError, match="broken module"):
        importlib.import_module("horon_ahead_broken")


def test_the_module_imported_ahead_is_the_sbom_renderer() -> None:
    """A renamed renderer would leave the build importing ahead nothing it needs."""
    renderer = importlib.import_module(SBOM_RENDERER)
    assert sbom.build_sbom.__module__ == "horon_bundle.assets.sbom"
    assert hasattr(renderer, "render_sbom")
    assert f"from {SBOM_RENDERER} import render_sbom" in Path(sbom.__file__).read_text()
