"""The library copy the probe child ran is judged by its digest only while it is unchanged
(`build.assemble`): a copy written since is hashed again by the self-check and refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from horon_bundle.build import observation
from tests.helpers import TEMPLATE, assert_refused, cli, tree_snapshot


def test_a_library_written_after_its_copy_was_hashed_is_hashed_again_and_refused(
        tmp_path: Path, cargo_target_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe child runs the copy whose digest build took: a library that rewrites its own
    file then (same size, other bytes) changes the copy's identity, so the self-check hashes
    it again and refuses it; nothing is left under the output, no bundle directory either."""
    real = observation.read_advertised

    def rewriting(library: Path, **options: Any) -> Any:
        found = real(library, **options)
        data = bytearray(library.read_bytes())
        data[len(data) // 2] ^= 0xFF
        with library.open("r+b") as same_file:  # the same inode, as a write by the child
            same_file.write(bytes(data))
        return found

    monkeypatch.setattr(observation, "read_advertised", rewriting)
    out = tmp_path / "dist"
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir)
    assert_refused(result, "build.nondeterministic")
    assert tree_snapshot(out) == {}
