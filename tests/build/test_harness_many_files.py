"""A real harness plugin of 12,000 small files builds (a vendored node_modules of twelve
packages): its zip holds more entries than a native bundle may, and is read back with a
harness zip's own limits. Before, such a plugin was refused when it was judged ("more files
than a bundle archive holds", at 10,000 entries).
"""

from __future__ import annotations

import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from horon_bundle.verify import limits
from tests.conftest import ManyFiles
from tests.session_builds import MANY_FILES


@pytest.mark.slow  # the shared build: about 12 s here (the 12,000 files, then the build)
def test_a_plugin_of_12000_small_files_builds_into_one_verified_zip(
        many_files_harness: ManyFiles) -> None:
    archive = many_files_harness.zip
    with zipfile.ZipFile(archive) as opened:
        names = opened.namelist()
    assert len(names) == MANY_FILES + 10 + 3  # the files, write_plugin's ten, the root three
    assert len(names) > limits.MAX_ENTRIES
    assert {"SHA256SUMS", "catalogue.json", "provenance.json"} <= set(names)
    ref = json.loads(Path(f"{archive}.ref.json").read_text())
    assert ref["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
