"""The toolchain probe: `rustc -vV`, then `cargo --version` beside `rustc --print target-libdir`,
whose answer spares `require_targets` a process for the host target and is judged the same."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest

from horon_bundle.cargo import toolchain as toolchain_module
from horon_bundle.cargo.toolchain import probe_toolchain, require_targets
from horon_bundle.core.errors import Refused
from tests.helpers import TEMPLATE


def test_the_host_libdir_is_rustcs_and_asks_nothing_more(monkeypatch: pytest.MonkeyPatch) -> None:
    found = probe_toolchain(TEMPLATE)
    asked = subprocess.run(["rustc", "--print", "target-libdir", "--target", found.host],
                           capture_output=True, text=True, check=True, cwd=TEMPLATE)
    assert found.host_libdir == Path(asked.stdout.strip())
    assert "host_libdir" not in found.to_json()  # not a recorded fact
    ran: list[list[str]] = []

    def recording(argv: list[str], **_: object) -> str:
        ran.append(list(argv))
        return ""

    monkeypatch.setattr(toolchain_module, "run_text", recording)
    require_targets(TEMPLATE, [found.host], toolchain=found)
    assert ran == []


def test_a_host_libdir_without_a_standard_library_is_refused(tmp_path: Path) -> None:
    found = dataclasses.replace(probe_toolchain(TEMPLATE), host_libdir=tmp_path)
    with pytest.raises(Refused) as caught:
        require_targets(TEMPLATE, [found.host], toolchain=found)
    assert caught.value.codes() == ["toolchain.target-missing"]


def test_without_a_host_libdir_rustc_is_asked() -> None:
    found = dataclasses.replace(probe_toolchain(TEMPLATE), host_libdir=None)
    require_targets(TEMPLATE, [found.host], toolchain=found)  # the real one has libcore
