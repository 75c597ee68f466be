"""Build refusals from the environment, cargo and the output directory: code, exit, no bundle."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from horon_bundle.build.assemble import StagedFile, assemble_bundle
from horon_bundle.cargo.resolve import lock_checksums
from horon_bundle.core.errors import Refused
from horon_bundle.core.hashing import Digest
from horon_bundle.model.manifest import Asset, FileDigest, License, Manifest
from tests.helpers import HOST, TEMPLATE, assert_refused, cli, copy_workspace, tree_snapshot


def test_compile_error_is_cargo_failed(tmp_path: Path, cargo_target_dir: Path) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    source = workspace / "src" / "lib.rs"
    source.write_text(source.read_text() + '\ncompile_error!("deliberately broken");\n')
    out = tmp_path / "dist"
    result = cli("build", workspace, "--out", out, "--target-dir", tmp_path / "target")
    assert_refused(result, "cargo.failed")
    assert "deliberately broken" in result.stderr
    assert tree_snapshot(out) == {}


def test_package_not_in_the_workspace(tmp_path: Path) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    declaration = workspace / "horon-release.toml"
    declaration.write_text(declaration.read_text().replace('package = "horon-example"',
                                                           'package = "horon-missing"'))
    out = tmp_path / "dist"
    assert_refused(cli("build", workspace, "--out", out, "--target-dir", tmp_path / "t"),
                   "declaration.package")
    assert tree_snapshot(out) == {}


def test_malformed_source_date_epoch(tmp_path: Path) -> None:
    out = tmp_path / "dist"
    result = cli("build", TEMPLATE, "--out", out, env={"SOURCE_DATE_EPOCH": "yesterday"})
    assert_refused(result, "environment.value")
    assert "SOURCE_DATE_EPOCH" in result.stderr
    assert tree_snapshot(out) == {}


def test_bundle_name_taken_by_a_file(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "dist"
    out.mkdir()
    squatter = out / f"example-0.1.0-{HOST}"
    squatter.write_text("not a bundle")
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir)
    assert_refused(result, "output.exists")
    assert squatter.read_text() == "not a bundle"
    assert sorted(p.name for p in out.iterdir()) == [squatter.name]


def test_corrupt_git_index_is_an_environment_problem(tmp_path: Path) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(workspace), "-c", "user.name=t", "-c",
                        "user.email=t@example.com", *args], check=True, capture_output=True)
    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "initial")
    (workspace / ".git" / "index").write_bytes(b"DIRC garbage that is not an index")
    out = tmp_path / "dist"
    result = cli("build", workspace, "--out", out, "--target-dir", tmp_path / "t")
    assert_refused(result, "source.git", status=3)
    assert tree_snapshot(out) == {}


def test_verify_refuses_what_is_not_a_bundle(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello")
    assert_refused(cli("verify", path), "layout.not-a-bundle")
    assert_refused(cli("verify", tmp_path / "absent"), "input.unreadable")


def test_unreadable_lock_file_is_cargo_output(tmp_path: Path) -> None:
    lock = tmp_path / "Cargo.lock"
    lock.write_text("[[package]\nname = ")
    with pytest.raises(Refused) as caught:
        lock_checksums(lock)
    assert caught.value.codes() == ["cargo.output"]


def test_staged_bundle_that_does_not_verify_is_never_renamed(tmp_path: Path) -> None:
    """The assemble stage verifies what it staged; a wrong declaration never reaches `out`."""
    library = tmp_path / "libx.so"
    library.write_bytes(b"\x7fELF not really")
    licence = tmp_path / "LICENSE"
    licence.write_text("licence text")
    out = tmp_path / "dist"

    def manifest(digests: dict[str, Digest]) -> Manifest:
        def ref(path: str, size_error: int = 0) -> FileDigest:
            return FileDigest(path=path, sha256=digests[path].sha256,
                              size=digests[path].size + size_error)
        return Manifest(
            id="example", name="Example", version="0.1.0", target=HOST, profile="release",
            channel="qa", abi_major=1, abi_minor=0, wire_schema="horon.wire.v1", features=(),
            library=ref("lib/libx.so", size_error=1), license=License(spdx="MIT",
                                                                       file=ref("LICENSE")),
            assets=(Asset(role="provenance", file=ref("provenance.json")),), sidecars=())

    with pytest.raises(Refused) as caught:
        assemble_bundle(out=out, name="example-0.1.0", generated={},
                        copies=[StagedFile(source=library, path="lib/libx.so"),
                                StagedFile(source=licence, path="LICENSE")],
                        provenance=lambda digests: b"{}\n", manifest=manifest)
    assert caught.value.codes() == ["build.nondeterministic"]
    assert [p.name for p in out.iterdir()] == []


def test_an_output_that_cannot_be_written_is_an_environment_problem(
        tmp_path: Path, cargo_target_dir: Path) -> None:
    """A failed write is `output.write-failed`, exit 3 (never exit 4), and nothing is left."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    before = tree_snapshot(tmp_path)
    result = cli("build", TEMPLATE, "--out", blocker / "dist", "--target-dir", cargo_target_dir)
    assert_refused(result, "output.write-failed", status=3)
    assert str(blocker / "dist") in result.stderr
    assert tree_snapshot(tmp_path) == before
