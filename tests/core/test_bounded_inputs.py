"""Every input the CLI reads is bounded: opened once, judged on its descriptor, capped.

`/dev/zero` as `--policy` reached 11 GiB and a FIFO blocked forever; now each file option
(policy, trust root, record, signature, bundle, side files, the declaration) refuses a FIFO,
device or directory at once (`input.not-a-file`), and a regular file past its cap before
reading it (`input.too-large`). Each CLI run has a short timeout: a hang fails the test.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.core.inputs import read_input
from tests.conftest import BuiltExample
from tests.helpers import HOST, TEMPLATE, assert_refused, cli, copy_workspace, tree_snapshot
from tests.publish_support import make_dist, publish_env

QUICK = 60  # seconds: a blocked read would hang far longer


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


def test_the_helper_refuses_without_reading(tmp_path: Path, fifo: Path) -> None:
    for special in (Path("/dev/zero"), fifo, tmp_path):
        with pytest.raises(Refused) as caught:
            read_input(special, limit=10, what="--x")
        assert caught.value.codes() == ["input.not-a-file"]
    big = tmp_path / "big"
    big.write_bytes(b"x" * 11)
    with pytest.raises(Refused) as caught:
        read_input(big, limit=10, what="--x")
    assert caught.value.codes() == ["input.too-large"]
    assert read_input(tmp_path / "absent", limit=10, what="--x", missing_ok=True) is None


@pytest.mark.parametrize("special", ["/dev/zero", "fifo", "directory"])
def test_policy_that_is_not_a_file(example_release: BuiltExample, tmp_path: Path,
                                   fifo: Path, special: str) -> None:
    path = {"/dev/zero": Path("/dev/zero"), "fifo": fifo, "directory": tmp_path}[special]
    before = tree_snapshot(tmp_path)
    result = cli("verify", example_release.archive, "--policy", path, timeout=QUICK)
    assert_refused(result, "input.not-a-file")
    assert tree_snapshot(tmp_path) == before


def test_policy_over_its_cap(example_release: BuiltExample, tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_bytes(b"schema = 1\n" + b"#" * (2 << 20) + b"\n")
    result = cli("verify", example_release.archive, "--policy", policy)
    assert_refused(result, "input.too-large")
    assert f"{policy}: 2097164 bytes, limit 1048576" in result.stderr  # judged before reading


@pytest.mark.parametrize("special", ["/dev/zero", "fifo"])
def test_trust_root_that_is_not_a_file(example_release: BuiltExample, tmp_path: Path,
                                       fifo: Path, special: str) -> None:
    path = Path("/dev/zero") if special == "/dev/zero" else fifo
    result = cli("verify", example_release.archive, "--trust-root", path, "--identity",
                 "someone@example.com", "--issuer", "https://accounts.example.com",
                 timeout=QUICK)
    assert_refused(result, "input.not-a-file")


def test_signature_that_is_a_fifo(example_release: BuiltExample, tmp_path: Path) -> None:
    archive = tmp_path / example_release.archive.name
    shutil.copy2(example_release.archive, archive)
    os.mkfifo(tmp_path / f"{archive.name}.sigstore.json")
    before = tree_snapshot(tmp_path)
    result = cli("verify", archive, "--require-signature", "--identity", "someone@example.com",
                 "--issuer", "https://accounts.example.com", "--staging", timeout=QUICK)
    assert_refused(result, "input.not-a-file")
    assert tree_snapshot(tmp_path) == before


def test_provenance_signature_that_is_a_fifo(example_release: BuiltExample,
                                             tmp_path: Path) -> None:
    archive = tmp_path / example_release.archive.name
    shutil.copy2(example_release.archive, archive)
    os.mkfifo(tmp_path / f"{archive.name}.provenance.sigstore.json")
    result = cli("verify", archive, "--identity", "someone@example.com", "--issuer",
                 "https://accounts.example.com", "--staging", timeout=QUICK)
    assert_refused(result, "input.not-a-file")


def test_bundle_path_that_is_a_fifo(tmp_path: Path) -> None:
    path = tmp_path / "bundle.zip"
    os.mkfifo(path)
    assert_refused(cli("verify", path, timeout=QUICK), "layout.not-a-bundle")


def test_record_that_is_a_fifo(example_release: BuiltExample, tmp_path: Path,
                               fifo: Path) -> None:
    library = example_release.bundle / "lib" / "libhoron_example.so"
    out = tmp_path / "out"
    result = cli("build", TEMPLATE, "--out", out, "--prebuilt", library, "--record", fifo,
                 timeout=QUICK)
    assert_refused(result, "input.not-a-file")
    assert not out.exists() or list(out.iterdir()) == []


@pytest.mark.slow
def test_prebuilt_library_that_is_a_fifo(tmp_path: Path, fifo: Path,
                                        cargo_target_dir: Path) -> None:
    compiled = tmp_path / "compiled"
    assert cli("compile", TEMPLATE, "--out", compiled, "--target-dir",
               cargo_target_dir).status == 0
    [record] = compiled.glob("*.compiled/record.json")
    result = cli("build", TEMPLATE, "--out", tmp_path / "out", "--prebuilt", fifo,
                 "--record", record, timeout=QUICK)
    assert_refused(result, "input.not-a-file")
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_declaration_that_is_a_fifo(tmp_path: Path) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "ws")
    (workspace / "horon-release.toml").unlink()
    os.mkfifo(workspace / "horon-release.toml")
    result = cli("build", workspace, "--out", tmp_path / "out", timeout=QUICK)
    assert_refused(result, "input.not-a-file")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("suffix", [".sha256", ".build.json", ".sigstore.json"])
def test_side_file_that_is_a_fifo(example_release: BuiltExample, tmp_path: Path,
                                  suffix: str) -> None:
    dist = make_dist(tmp_path / "dist", example_release.archive)
    side = dist / f"{example_release.archive.name}{suffix}"
    side.unlink(missing_ok=True)
    os.mkfifo(side)
    store = tmp_path / "store"
    store.mkdir()
    before = tree_snapshot(tmp_path)
    result = cli("publish", dist, env=publish_env(f"file://{store}"), timeout=QUICK)
    assert_refused(result, "publish.side-file")
    assert tree_snapshot(tmp_path) == before


def test_archive_in_a_release_that_is_a_fifo(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    os.mkfifo(dist / f"example-0.1.0-{HOST}.zip")
    store = tmp_path / "store"
    store.mkdir()
    result = cli("publish", dist, env=publish_env(f"file://{store}"), timeout=QUICK)
    assert_refused(result, "input.not-a-file")
    assert list(store.iterdir()) == []
