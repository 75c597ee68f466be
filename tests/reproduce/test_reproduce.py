"""`reproduce`: the example rebuilt from a second checkout path is identical, byte for byte;
one changed source line is found and located; toolchain and revision are checked first."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import (
    HOST,
    TEMPLATE,
    CliResult,
    assert_refused,
    byproduct,
    cli,
    copy_bundle,
    copy_workspace,
    edit_provenance,
    tree_snapshot,
)
from tests.schema_registry import validate

pytestmark = pytest.mark.cargo

NAME = f"example-0.1.0-{HOST}"
LIBRARY = "lib/libhoron_example.so"


@dataclass(frozen=True)
class Original:
    checkout: Path
    second: Path
    bundle: Path
    archive: Path


@pytest.fixture(scope="module")
def original(tmp_path_factory: pytest.TempPathFactory) -> Original:
    """The example built from one checkout; a second, identical checkout elsewhere."""
    checkout = copy_workspace(TEMPLATE, tmp_path_factory.mktemp("checkout-a") / "plugin")
    second = copy_workspace(TEMPLATE, tmp_path_factory.mktemp("checkout-b") / "elsewhere")
    out = tmp_path_factory.mktemp("original")
    result = cli("build", checkout, "--out", out, "--target-dir",
                 tmp_path_factory.mktemp("original-target"))
    assert result.status == 0, result.stderr
    return Original(checkout=checkout, second=second, bundle=out / NAME,
                    archive=out / f"{NAME}.zip")


def _reproduce(path: Path, source: Path, *args: str | Path) -> CliResult:
    """`reproduce --json`, its report (or refusal) checked against its schema."""
    result = cli("reproduce", path, "--source", source, "--json", *args)
    validate(result.json())
    return result


@pytest.mark.slow
def test_identical_from_a_second_checkout_path(original: Original) -> None:
    result = _reproduce(original.archive, original.second)
    assert result.status == 0, result.stderr
    report = result.json()
    assert report["format"] == "horon.reproduce-report.v1"
    assert report["identical"] is True and report["built"] is True
    assert report["findings"] == [] and report["fields"] == []
    assert {f["path"]: f["result"] for f in report["files"]}[LIBRARY] == "identical"
    assert all(f["result"] == "identical" for f in report["files"])
    assert report["archive"]["identical"] is True
    assert report["archive"]["recorded"]["sha256"] == report["archive"]["rebuilt"]["sha256"]
    assert report["toolchain"]["recorded"] == report["toolchain"]["here"]


@pytest.mark.slow
def test_identical_for_the_bundle_directory_and_kept_with_out(original: Original,
                                                              tmp_path: Path) -> None:
    kept = tmp_path / "rebuilt"
    result = _reproduce(original.bundle, original.second, "--out", kept)
    assert result.status == 0, result.stderr
    assert result.json()["archive"] is None
    assert tree_snapshot(kept / NAME) == tree_snapshot(original.bundle)


@pytest.mark.slow
def test_one_changed_source_line_is_located(original: Original, tmp_path: Path) -> None:
    changed = copy_workspace(original.second, tmp_path / "changed")
    source = changed / "src" / "plugin.rs"
    text = source.read_text()
    assert "hello from {PLUGIN_ID}" in text
    source.write_text(text.replace("hello from {PLUGIN_ID}", "hi from {PLUGIN_ID}"))
    result = _reproduce(original.archive, changed)
    assert_refused(result, "reproduce.library")
    assert result.codes[0] == "reproduce.library"
    assert f"{LIBRARY}: recorded sha256" in result.stderr
    report = result.json()
    assert report["identical"] is False and report["built"] is True
    library = next(f for f in report["files"] if f["path"] == LIBRARY)
    assert library["result"] == "different" and library["role"] == "library"
    assert library["recorded"]["sha256"] != library["rebuilt"]["sha256"]
    assert isinstance(library["first_difference"], int)
    recorded = (original.bundle / LIBRARY).read_bytes()
    assert library["recorded"]["size"] == len(recorded)
    assert report["archive"]["identical"] is False
    assert any(f["field"] == f"subject[name={LIBRARY}].digest.sha256"
               for f in report["fields"] if f["file"] == "provenance.json")
    assert "reproduce.provenance" in result.codes


def _edited_bundle(original: Original, directory: Path, change: Any) -> Path:
    bundle = copy_bundle(original.bundle, directory)
    edit_provenance(bundle, change)
    return bundle


def test_another_recorded_toolchain_is_reported_before_building(original: Original,
                                                                tmp_path: Path) -> None:
    def older_rustc(statement: dict[str, Any]) -> None:
        invocation = byproduct(statement, "horon:invocation")["annotations"]
        invocation["toolchain"]["rustc"] = "rustc 1.80.0 (051478957 2024-07-21)"
    bundle = _edited_bundle(original, tmp_path, older_rustc)
    out = tmp_path / "rebuilt"
    result = _reproduce(bundle, original.second, "--out", out)
    assert_refused(result, "reproduce.toolchain")
    assert "toolchain rustc: recorded 'rustc 1.80.0" in result.stderr
    assert "building horon-example" not in result.stderr
    assert result.json()["built"] is False
    assert not out.exists()


def test_another_git_revision_is_reported_before_building(original: Original,
                                                          tmp_path: Path) -> None:
    checkout = copy_workspace(original.second, tmp_path / "git-checkout")
    git = ["git", "-C", str(checkout), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "x"]):
        subprocess.run([*git, *args], check=True, capture_output=True)

    def recorded_elsewhere(statement: dict[str, Any]) -> None:
        source = statement["predicate"]["buildDefinition"]["externalParameters"]["source"]
        source["revision"], source["dirty"] = "0" * 40, False
    bundle = _edited_bundle(original, tmp_path / "edited", recorded_elsewhere)
    result = _reproduce(bundle, checkout)
    assert_refused(result, "reproduce.source")
    assert f"was built from {'0' * 40}" in result.stderr
    assert result.json()["built"] is False


def test_a_bundle_that_does_not_verify_is_not_rebuilt(original: Original,
                                                      tmp_path: Path) -> None:
    bundle = copy_bundle(original.bundle, tmp_path)
    library = bundle / LIBRARY
    library.write_bytes(library.read_bytes() + b"\0")
    out = tmp_path / "rebuilt"
    result = cli("reproduce", bundle, "--source", original.second, "--out", out)
    assert_refused(result, "checksum.mismatch")
    assert not out.exists()


@pytest.mark.slow
def test_a_record_bundle_has_no_invocation_to_rerun(original: Original, tmp_path: Path,
                                                    cargo_target_dir: Path) -> None:
    compiled = tmp_path / "compiled"
    assert cli("compile", original.checkout, "--out", compiled, "--target-dir",
               cargo_target_dir).status == 0
    [directory] = list(compiled.glob("*.compiled"))
    out = tmp_path / "out"
    built = cli("build", original.checkout, "--out", out, "--prebuilt",
                directory / "libhoron_example.so", "--record", directory / "record.json")
    assert built.status == 0, built.stderr
    result = cli("reproduce", out / NAME, "--source", original.second)
    assert_refused(result, "reproduce.evidence")


def test_source_option_is_required_and_must_be_a_directory(original: Original,
                                                            tmp_path: Path) -> None:
    result = cli("reproduce", original.archive)
    assert result.status == 2
    assert "--source" in result.stderr
    assert_refused(cli("reproduce", original.archive, "--source", tmp_path / "absent"),
                   "input.unreadable")


@pytest.mark.slow
def test_a_changed_licence_text_is_a_file_difference(original: Original,
                                                     tmp_path: Path) -> None:
    """Same code, another licence text: the library is identical, the licence (and the files
    that list its digest) are not, and each is named with both digests."""
    changed = copy_workspace(original.second, tmp_path / "relicensed")
    licence = changed / "LICENSE"
    text = licence.read_text()
    assert text.count("Apache License") >= 1
    licence.write_text(text.replace("Apache License", "Apache Licence", 1))
    recorded_before = tree_snapshot(original.bundle)
    archive_before = original.archive.read_bytes()
    source_before = tree_snapshot(changed)
    result = _reproduce(original.archive, changed)
    assert_refused(result, "reproduce.file")
    assert set(result.codes) == {"reproduce.file"}, result.stderr
    assert "LICENSE: recorded sha256 " in result.stderr
    report = result.json()
    assert report["identical"] is False and report["built"] is True
    results = {f["path"]: f["result"] for f in report["files"]}
    assert results[LIBRARY] == "identical"
    assert {path for path, outcome in results.items() if outcome != "identical"} == {
        "LICENSE", "SHA256SUMS", "plugin.json"}
    licence_entry = next(f for f in report["files"] if f["path"] == "LICENSE")
    assert licence_entry["first_difference"] == text.index("Apache License") + len("Apache Licen")
    assert [d["field"] for d in report["fields"]] == ["license.sha256"]
    assert tree_snapshot(original.bundle) == recorded_before
    assert original.archive.read_bytes() == archive_before
    assert tree_snapshot(changed) == source_before
