"""Large real plugins install and fetch: a zip of 12,000 files (read with a harness zip's
limits, the fetched directory with an unpacked harness bundle's), a plugin with a file 40
levels deep (its tree may be 64).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import ManyFiles
from tests.harness_support import built_zip
from tests.helpers import cli
from tests.install_support import hb
from tests.session_builds import MANY_FILES


@pytest.mark.slow  # an install, then a fetch of 12,013 files (one fsync each): ~30 s here
def test_a_zip_of_12000_files_installs_and_fetches(many_files_harness: ManyFiles,
                                                  tmp_path: Path) -> None:
    home = tmp_path / "home"
    installed = hb("install", many_files_harness.zip, home=home)
    assert installed.status == 0, installed.stderr
    assert hb("check", "guard-kit", home=home).status == 0
    ref = tmp_path / "handed" / "guard.ref.json"
    ref.parent.mkdir()
    shutil.copy(f"{many_files_harness.zip}.ref.json", ref)
    into = tmp_path / "sandbox" / "guard-kit"
    into.parent.mkdir()
    fetched = cli("fetch", ref, "--into", into, "--home", home, "--json")
    assert fetched.status == 0, fetched.stderr
    assert fetched.json()["files"] == MANY_FILES + 13
    assert sum(1 for path in into.rglob("*") if path.is_file()) == MANY_FILES + 13
    verified = cli("verify", into)  # the fetched directory, an unpacked harness bundle
    assert verified.status == 0, verified.stderr


@pytest.mark.slow  # a build and a fetch: about 2 s here
def test_a_plugin_with_a_file_40_levels_deep_fetches(tmp_path: Path) -> None:
    """Before, it built and verified (the zip's depth was not judged), and fetch refused its
    unpacked copy, judged with a native bundle's 32 levels (`harness.provenance`: the file
    "is not a file of the bundle")."""
    deep = Path(*[f"d{level}" for level in range(40)], "x.txt")

    def nest(plugin: Path) -> None:
        (plugin / deep).parent.mkdir(parents=True)
        (plugin / deep).write_text("deep\n")
    archive = built_zip(tmp_path / "build", edit=nest)
    into = tmp_path / "sandbox"
    fetched = cli("fetch", f"{archive}.ref.json", "--into", into)
    assert fetched.status == 0, fetched.stderr
    assert (into / deep).read_text() == "deep\n"
    assert cli("verify", into).status == 0
