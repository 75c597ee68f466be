"""The example plugin, built with the real cargo: a verified, deterministic bundle."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.build.toolchain_shims import asked_by_us, toolchain_shims
from tests.conftest import BuiltExample
from tests.helpers import HOST, TEMPLATE, assert_refused, cli, copy_workspace, tree_snapshot


def test_clean_bundle_verifies_as_directory_and_archive(example_release: BuiltExample) -> None:
    for path in (example_release.bundle, example_release.archive):
        result = cli("verify", path)
        assert result.status == 0, result.stderr
        assert "verified" in result.stdout


def test_sha256sum_accepts_the_listing(example_release: BuiltExample) -> None:
    done = subprocess.run(["sha256sum", "--strict", "-c", "SHA256SUMS"],
                          cwd=example_release.bundle, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    checked = dict(line.rsplit(": ", 1) for line in done.stdout.splitlines())
    assert set(checked.values()) == {"OK"}
    assert {"LICENSE", "lib/libhoron_example.so", "plugin.json", "provenance.json"} <= set(checked)


def test_archive_sha256_file_matches(example_release: BuiltExample) -> None:
    done = subprocess.run(["sha256sum", "--strict", "-c", example_release.archive.name + ".sha256"],
                          cwd=example_release.out, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr


def test_plugin_json_describes_the_build(example_release: BuiltExample) -> None:
    manifest = json.loads((example_release.bundle / "plugin.json").read_text())
    assert manifest["format"] == "horon.plugin.v1"
    assert manifest["id"] == "example"
    assert manifest["target"] == HOST
    assert manifest["channel"] == "release"
    assert manifest["features"] == ["clock", "greeting"]
    assert manifest["library"]["path"] == "lib/libhoron_example.so"
    assert manifest["license"]["spdx"] == "Apache-2.0"
    roles = [asset["role"] for asset in manifest["assets"]]
    assert roles[0] == "provenance"


def test_provenance_records_invocation_graph_and_advertised(example_release: BuiltExample) -> None:
    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    assert statement["predicateType"] == "https://slsa.dev/provenance/v1"
    subjects = {s["name"] for s in statement["subject"]}
    assert subjects == {"lib/libhoron_example.so"}
    byproducts = {b["name"]: b["annotations"] for b in
                  statement["predicate"]["runDetails"]["byproducts"]}
    invocation = byproducts["horon:invocation"]
    assert invocation["argv"][:3] == ["cargo", "build", "--locked"]
    assert "--no-default-features" in invocation["argv"]
    assert "$TARGET_DIR" in invocation["argv"]
    assert str(TEMPLATE) not in json.dumps(statement), "machine paths must be normalised"
    assert byproducts["horon:graph"]["root"] == "horon-example@0.1.0"
    assert byproducts["horon:advertised"]["features"] == ["clock", "greeting"]


def test_run_facts_live_outside_the_content_address(example_release: BuiltExample) -> None:
    run = json.loads((example_release.archive.with_name(
        example_release.archive.name + ".build.json")).read_text())
    assert run["format"] == "horon.build-run.v1"
    assert run["started"] and run["finished"]
    # published beside the archive: no host or runner name in it
    assert set(run["runner"]) == {"os", "machine"}
    assert socket.gethostname() not in json.dumps(run)
    with zipfile.ZipFile(example_release.archive) as archive:
        names = archive.namelist()
    assert not any(name.endswith(".build.json") for name in names)


def test_archive_is_canonical(example_release: BuiltExample) -> None:
    with zipfile.ZipFile(example_release.archive) as archive:
        infos = archive.infolist()
    names = [info.filename for info in infos]
    assert names == sorted(names, key=lambda n: n.encode())
    for info in infos:
        assert not info.filename.endswith("/")
        assert info.create_system == 3
        assert info.extra == b""
        assert (info.external_attr >> 16) in (0o100644, 0o100755)
        assert info.date_time == infos[0].date_time


def _build_copy(tmp_path: Path, name: str) -> bytes:
    workspace = copy_workspace(TEMPLATE, tmp_path / name / "plugin")
    out = tmp_path / name / "dist"
    result = cli("build", workspace, "--out", out, "--target-dir", tmp_path / name / "target")
    assert result.status == 0, result.stderr
    return (out / f"example-0.1.0-{HOST}.zip").read_bytes()


@pytest.mark.slow
def test_two_checkout_paths_give_identical_archives(tmp_path: Path) -> None:
    first = _build_copy(tmp_path, "first-checkout")
    second = _build_copy(tmp_path, "a-second-longer-checkout-path")
    assert first == second


@pytest.mark.slow
def test_rebuild_in_place_gives_identical_bundle(example_release: BuiltExample,
                                                 cargo_target_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "again"
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir)
    assert result.status == 0, result.stderr
    assert (out / example_release.archive.name).read_bytes() == example_release.archive.read_bytes()
    assert tree_snapshot(out / example_release.bundle.name) == tree_snapshot(example_release.bundle)


def test_source_date_epoch_fixes_timestamps(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "epoch"
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir,
                 env={"SOURCE_DATE_EPOCH": "1700000000"})
    assert result.status == 0, result.stderr
    with zipfile.ZipFile(out / f"example-0.1.0-{HOST}.zip") as archive:
        assert archive.infolist()[0].date_time == (2023, 11, 14, 22, 13, 20)


@pytest.mark.slow
def test_qa_channel_bundle_is_marked(tmp_path: Path, cargo_target_dir: Path) -> None:
    out = tmp_path / "qa"
    result = cli("build", TEMPLATE, "--out", out, "--target-dir", cargo_target_dir,
                 "--channel", "qa")
    assert result.status == 0, result.stderr
    bundle = out / f"example-0.1.0-{HOST}-qa"
    manifest = json.loads((bundle / "plugin.json").read_text())
    assert manifest["channel"] == "qa"
    assert manifest["features"] == ["clock", "greeting", "qa-provider"]
    assert cli("verify", bundle).status == 0


def test_prebuilt_without_record_is_refused(example_release: BuiltExample, tmp_path: Path) -> None:
    out = tmp_path / "out"
    library = example_release.bundle / "lib" / "libhoron_example.so"
    result = cli("build", TEMPLATE, "--out", out, "--prebuilt", library)
    assert_refused(result, "evidence.missing")
    assert tree_snapshot(out) == {}


def test_target_without_standard_library_is_an_environment_problem(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("build", TEMPLATE, "--out", out, "--target", "aarch64-apple-darwin")
    assert_refused(result, "toolchain.target-missing", status=3)
    assert "rustup target add aarch64-apple-darwin" in result.stderr
    assert tree_snapshot(out) == {}


def test_all_targets_checks_every_standard_library_first(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = cli("build", TEMPLATE, "--out", out, "--all-targets")
    assert_refused(result, "toolchain.target-missing", status=3)
    assert tree_snapshot(out) == {}


def test_undeclared_target_is_refused(tmp_path: Path) -> None:
    result = cli("build", TEMPLATE, "--out", tmp_path / "out", "--target", "x86_64-unknown-netbsd")
    assert_refused(result, "declaration.target")


@pytest.mark.slow
def test_build_never_writes_into_the_source_tree(tmp_path: Path, cargo_target_dir: Path) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    before = tree_snapshot(workspace)
    result = cli("build", workspace, "--out", tmp_path / "dist", "--target-dir", cargo_target_dir)
    assert result.status == 0, result.stderr
    assert tree_snapshot(workspace) == before


def test_missing_cargo_is_an_environment_problem(tmp_path: Path) -> None:
    python_dir = Path(shutil.which("python3") or "/usr/bin/python3").parent
    result = cli("build", TEMPLATE, "--out", tmp_path / "out",
                 env={"PATH": str(python_dir), "RUSTUP_HOME": "/nonexistent"})
    assert result.status == 3, result.stderr
    assert "toolchain.missing" in result.codes


@pytest.mark.skipif(Path(shutil.which("cargo") or "cargo").resolve().name != "rustup",
                    reason="cargo here is not rustup's proxy")
def test_a_toolchain_that_cannot_run_is_an_environment_problem(tmp_path: Path) -> None:
    """rustup with no default toolchain (a fresh RUSTUP_HOME): `cargo --version` fails. That is
    this machine's problem, not the plugin's: exit 3, rustup's own words shown, nothing
    written."""
    empty = tmp_path / "rustup-home"
    empty.mkdir()
    out = tmp_path / "out"
    result = cli("build", TEMPLATE, "--out", out, env={"RUSTUP_HOME": str(empty)})
    assert_refused(result, "toolchain.missing", status=3)
    assert "no default is configured" in result.stderr
    assert not out.exists()


@pytest.mark.slow
def test_declared_sidecar_is_bundled_and_bound(tmp_path: Path, cargo_target_dir: Path) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    (workspace / "helpers").mkdir()
    (workspace / "helpers" / "example-helper").write_text("#!/bin/sh\necho hi\n")
    declaration = workspace / "horon-release.toml"
    declaration.write_text(declaration.read_text() + (
        '\n[[plugin.sidecar]]\nname = "example-helper"\nsource = "helpers/example-helper"\n'
        "executable = true\n"))
    out = tmp_path / "dist"
    result = cli("build", workspace, "--out", out, "--target-dir", cargo_target_dir)
    assert result.status == 0, result.stderr
    bundle = out / f"example-0.1.0-{HOST}"
    sidecar = bundle / "sidecars" / "example-helper"
    assert sidecar.stat().st_mode & 0o777 == 0o755
    manifest = json.loads((bundle / "plugin.json").read_text())
    assert manifest["sidecars"][0]["name"] == "example-helper"
    statement = json.loads((bundle / "provenance.json").read_text())
    assert "sidecars/example-helper" in {s["name"] for s in statement["subject"]}
    assert cli("verify", out / f"example-0.1.0-{HOST}.zip").status == 0
    sidecar.chmod(0o644)
    assert "layout.mode" in cli("verify", bundle).codes


@pytest.mark.parametrize(("declared", "code"), [
    ('\n[[plugin.sidecar]]\nname = "ghost"\nsource = "helpers/ghost"\n', "sidecar.invalid"),
    ("", "declaration.value"),
])
def test_missing_declared_file_refused_before_building(tmp_path: Path, declared: str,
                                                       code: str) -> None:
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    declaration = workspace / "horon-release.toml"
    declaration.write_text(declaration.read_text() + declared)
    if not declared:
        (workspace / "LICENSE").unlink()
    out = tmp_path / "dist"
    assert_refused(cli("build", workspace, "--out", out), code)
    assert tree_snapshot(out) == {}


@pytest.mark.slow
def test_one_cargo_metadata_call_per_build(tmp_path: Path, cargo_target_dir: Path) -> None:
    """The build asks cargo for metadata once (the resolved graph, which also names the
    workspace members), in the build's target dir so cargo reuses its cached rustc facts; the
    `--no-deps` call is made only to explain a failure (test_build_refusals)."""
    real = shutil.which("cargo")
    assert real is not None
    wrappers = tmp_path / "bin"
    wrappers.mkdir()
    log = tmp_path / "cargo.log"
    wrapper = wrappers / "cargo"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s %s\\n" "$CARGO_TARGET_DIR" "$*" >> "{log}"\n'
                       f'exec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    result = cli("build", TEMPLATE, "--out", tmp_path / "out", "--target-dir", cargo_target_dir,
                 env={"PATH": f"{wrappers}{os.pathsep}{os.environ['PATH']}"})
    assert result.status == 0, result.stderr
    calls = [line.split(" ", 1) for line in log.read_text().splitlines()]
    metadata = [args for _, args in calls if args.startswith("metadata")]
    assert len(metadata) == 1, calls
    assert "--no-deps" not in metadata[0]
    assert [where for where, args in calls if args.startswith("metadata")] == [
        str(cargo_target_dir)]


@pytest.mark.slow
def test_all_plugins_builds_every_declared_plugin_in_one_run(tmp_path: Path,
                                                              cargo_target_dir: Path) -> None:
    """`--all-plugins`: one bundle per [[plugin]], each byte-equal to what `--plugin ID`
    builds; without it, several plugins still need --plugin; not with --prebuilt."""
    from benchmarks.fixtures import many_plugins_workspace  # noqa: PLC0415 - the bench's maker

    workspace, ids = many_plugins_workspace(tmp_path, 3)
    target = cargo_target_dir / "three"
    shims, log = toolchain_shims(tmp_path)
    together = cli("build", workspace, "--all-plugins", "--out", tmp_path / "all",
                   "--target-dir", target, "--json",
                   env={"PATH": f"{shims}{os.pathsep}{os.environ['PATH']}"})
    assert together.status == 0, together.stderr
    # the toolchain is asked once per run, the workspace's resolve once per target
    # (no optional dependency: it is every plugin's own), then one cargo command per plugin
    asked = sorted(asked_by_us(log))
    assert asked == sorted([
        "cargo --version", "rustc -vV", "rustc --print target-libdir",  # the host's
        "cargo metadata --format-version 1 --locked --filter-platform "
        f"{HOST} --no-default-features",
        *(line for line in asked if line.startswith("cargo build --locked --lib -p"))]), asked
    assert len([line for line in asked if line.startswith("cargo build")]) == len(ids)
    document = json.loads(together.stdout)
    built = {b["id"]: b["sha256"] for b in document["bundles"]}
    assert sorted(built) == ids
    # one release statement naming exactly the archives of the run
    statement = json.loads(Path(document["statement"]).read_text())
    assert {s["name"]: s["digest"]["sha256"] for s in statement["subject"]} == {
        Path(b["archive"]).name: b["sha256"] for b in document["bundles"]}
    assert sorted((tmp_path / "all").glob("*.intoto.jsonl")) == [Path(document["statement"])]
    for plugin_id in ids:
        alone = cli("build", workspace, "--plugin", plugin_id, "--out", tmp_path / plugin_id,
                    "--target-dir", target, "--json")
        assert alone.status == 0, alone.stderr
        [bundle] = json.loads(alone.stdout)["bundles"]
        assert bundle["sha256"] == built[plugin_id], plugin_id
    assert_refused(cli("build", workspace, "--out", tmp_path / "none", "--target-dir", target),
                   "declaration.plugin")
    prebuilt = cli("build", workspace, "--all-plugins", "--prebuilt", tmp_path / "x.so",
                   "--record", tmp_path / "x.json", "--out", tmp_path / "pre")
    assert_refused(prebuilt, "usage.invalid", status=2)
    assert not (tmp_path / "none").exists() or tree_snapshot(tmp_path / "none") == {}
    assert not (tmp_path / "pre").exists() or tree_snapshot(tmp_path / "pre") == {}
