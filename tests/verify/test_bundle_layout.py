"""Verifying files against plugin.json and SHA256SUMS: smuggled, missing, linked, tampered."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core import tree as bundle_tree
from horon_bundle.verify.judge import verify_path
from tests.conftest import BuiltExample
from tests.helpers import (
    assert_refused,
    byproduct,
    cli,
    copy_bundle,
    edit_provenance,
    rewrite_listing,
    tree_snapshot,
)

LIB = "lib/libhoron_example.so"


@pytest.fixture
def bundle(example_release: BuiltExample, tmp_path: Path) -> Path:
    return copy_bundle(example_release.bundle, tmp_path)


def _refused(bundle: Path, code: str) -> None:
    before = tree_snapshot(bundle)
    assert_refused(cli("verify", bundle), code)
    assert tree_snapshot(bundle) == before


def _append_listing(bundle: Path, path: str) -> None:
    sums = bundle / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    lines.append(f"{hashlib.sha256((bundle / path).read_bytes()).hexdigest()}  {path}")
    lines.sort(key=lambda line: line.split("  ", 1)[1].encode())
    sums.write_text("".join(line + "\n" for line in lines))


def test_extra_file_even_when_listed(bundle: Path) -> None:
    (bundle / "lib" / "libextra.so").write_bytes(b"smuggled")
    _append_listing(bundle, "lib/libextra.so")
    _refused(bundle, "layout.undeclared")


def test_extra_file_not_listed(bundle: Path) -> None:
    (bundle / "notes.txt").write_text("hello")
    result = cli("verify", bundle)
    assert {"layout.undeclared", "checksum.unlisted"} <= set(result.codes)


def test_missing_declared_file(bundle: Path) -> None:
    (bundle / "LICENSE").unlink()
    result = cli("verify", bundle)
    assert_refused(result, "layout.missing")
    assert "checksum.missing" in result.codes


def test_missing_checksum_file(bundle: Path) -> None:
    (bundle / "SHA256SUMS").unlink()
    _refused(bundle, "layout.missing")


def test_symlink_refused(bundle: Path) -> None:
    (bundle / "LICENSE").rename(bundle / "LICENSE.real")
    (bundle / "LICENSE").symlink_to("LICENSE.real")
    _refused(bundle, "layout.symlink")


def test_hard_link_refused(bundle: Path, tmp_path: Path) -> None:
    os.link(bundle / "LICENSE", tmp_path / "outside-link")
    _refused(bundle, "layout.file-type")


def test_fifo_refused(bundle: Path) -> None:
    os.mkfifo(bundle / "lib" / "pipe")
    _refused(bundle, "layout.file-type")


@pytest.mark.parametrize("bits", [stat.S_IWOTH, stat.S_ISUID, stat.S_ISGID])
def test_unsafe_modes_refused(bundle: Path, bits: int) -> None:
    path = bundle / "LICENSE"
    path.chmod(0o644 | bits)
    _refused(bundle, "layout.mode")


def test_tampered_library_byte(bundle: Path) -> None:
    library = bundle / LIB
    data = bytearray(library.read_bytes())
    data[len(data) // 2] ^= 0x01
    library.write_bytes(bytes(data))
    _refused(bundle, "checksum.mismatch")


def test_tampered_library_relisted_still_refused(bundle: Path) -> None:
    library = bundle / LIB
    library.write_bytes(library.read_bytes() + b"\0")
    rewrite_listing(bundle, LIB)
    result = cli("verify", bundle)
    assert {"checksum.mismatch", "checksum.size", "provenance.subject"} <= set(result.codes)


def test_tampered_provenance_byte(bundle: Path) -> None:
    path = bundle / "provenance.json"
    path.write_bytes(path.read_bytes().replace(b'"release"', b'"releasf"', 1))
    _refused(bundle, "checksum.mismatch")


def test_provenance_naming_another_version(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        statement["predicate"]["buildDefinition"]["externalParameters"]["version"] = "9.9.9"
    edit_provenance(bundle, change)
    _refused(bundle, "provenance.contradiction")


def test_provenance_subject_of_another_library(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        statement["subject"][0]["digest"]["sha256"] = "0" * 64
    edit_provenance(bundle, change)
    _refused(bundle, "provenance.subject")


def test_provenance_subject_by_md5_only(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        statement["subject"][0]["digest"] = {"md5": "0" * 32}
    edit_provenance(bundle, change)
    _refused(bundle, "provenance.subject")


def test_unexpected_build_type(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        statement["predicate"]["buildDefinition"]["buildType"] = "https://example.com/other"
    edit_provenance(bundle, change)
    _refused(bundle, "provenance.build-type")


def test_unknown_external_parameter(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        statement["predicate"]["buildDefinition"]["externalParameters"]["extra"] = True
    edit_provenance(bundle, change)
    _refused(bundle, "provenance.schema")


def test_release_bundle_without_graph(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        items = statement["predicate"]["runDetails"]["byproducts"]
        items.remove(byproduct(statement, "horon:graph"))
    edit_provenance(bundle, change)
    _refused(bundle, "graph.missing")


def test_evidence_without_invocation(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        items = statement["predicate"]["runDetails"]["byproducts"]
        items.remove(byproduct(statement, "horon:invocation"))
    edit_provenance(bundle, change)
    _refused(bundle, "evidence.missing")


def test_graph_with_a_cycle(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        graph = byproduct(statement, "horon:graph")["annotations"]
        root = graph["root"]
        graph["edges"].append({"from": root, "to": root, "kinds": ["normal"], "dep_key": "x",
                               "optional": False, "default_features": True, "features": []})
    edit_provenance(bundle, change)
    _refused(bundle, "graph.invalid")


def test_advertised_features_differ(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        byproduct(statement, "horon:advertised")["annotations"]["features"] = ["clock"]
    edit_provenance(bundle, change)
    _refused(bundle, "features.mismatch")


CHECKSUM_FAULTS: dict[str, tuple[str, str]] = {
    "uppercase hex": ("upper", "checksum.format"),
    "binary marker": ("star", "checksum.format"),
    "CRLF": ("crlf", "checksum.format"),
    "escaped name": ("escape", "checksum.format"),
    "duplicate path": ("dup", "checksum.duplicate"),
    "md5 digest": ("md5", "checksum.algorithm"),
    "lists itself": ("self", "checksum.self"),
    "unsorted": ("unsorted", "checksum.format"),
    "dot-dot path": ("dotdot", "checksum.format"),
    "no final newline": ("nonl", "checksum.format"),
}


@pytest.mark.parametrize("case", sorted(CHECKSUM_FAULTS))
def test_checksum_file_faults(bundle: Path, case: str) -> None:
    how, code = CHECKSUM_FAULTS[case]
    sums = bundle / "SHA256SUMS"
    lines = sums.read_text().splitlines()
    digest, name = lines[0].split("  ", 1)
    edits = {
        "upper": lambda: [f"{digest.upper()}  {name}", *lines[1:]],
        "star": lambda: [f"{digest} *{name}", *lines[1:]],
        "crlf": lambda: [line + "\r" for line in lines],
        "escape": lambda: ["\\" + lines[0], *lines[1:]],
        "dup": lambda: [lines[0], *lines],
        "md5": lambda: [f"{'0' * 32}  {name}", *lines[1:]],
        "self": lambda: [*lines, f"{'0' * 64}  SHA256SUMS"],
        "unsorted": lambda: list(reversed(lines)),
        "dotdot": lambda: [*lines, f"{'0' * 64}  ../escape"],
    }
    if how == "nonl":
        sums.write_text("\n".join(lines))
    else:
        sums.write_text("".join(line + "\n" for line in edits[how]()))
    _refused(bundle, code)


def test_mode_rules_are_posix_only(bundle: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows reports synthetic modes; there a directory bundle's mode bits are not judged."""
    (bundle / "LICENSE").chmod(0o666)
    assert "layout.mode" in [f.code.name for f in verify_path(bundle).findings]
    monkeypatch.setattr(bundle_tree, "POSIX_MODES", False)
    assert verify_path(bundle).ok


def test_world_writable_directories_refused(bundle: Path) -> None:
    """The bundle directory itself and a directory in it are judged like files, each named."""
    bundle.chmod(0o777)
    (bundle / "lib").chmod(0o777)
    (bundle / "LICENSE").chmod(0o666)
    before = tree_snapshot(bundle)
    result = cli("verify", bundle)
    assert_refused(result, "layout.mode")
    assert f"{bundle.name}: directory '.' has mode 777" in result.stderr
    assert f"{bundle.name}: directory 'lib' has mode 777" in result.stderr
    assert f"{bundle.name}: file 'LICENSE' has mode 666" in result.stderr
    assert tree_snapshot(bundle) == before


def test_empty_directory_refused(bundle: Path) -> None:
    (bundle / "lib" / "empty").mkdir()
    before = tree_snapshot(bundle)
    result = cli("verify", bundle)
    assert_refused(result, "layout.undeclared")
    assert f"{bundle.name}: empty directory 'lib/empty'" in result.stderr
    assert tree_snapshot(bundle) == before


def _check(report: Any, name: str) -> list[tuple[str, str]]:
    [check] = [c for c in report.checks if c.name == name]
    return [(f.code.name, f.message) for f in check.findings]


def test_what_is_not_a_native_bundle_is_named_by_the_archive_check(tmp_path: Path) -> None:
    """verify_path on a harness ref, or on a file that is no zip, fails its `archive` check
    with the reason, and judges nothing else."""
    ref = tmp_path / "guard-kit-1.2.0.zip.ref.json"
    ref.write_text('{"name": "guard-kit", "sha256": "00"}\n')
    report = verify_path(ref)
    assert not report.ok and [c.name for c in report.checks] == ["archive"]
    assert _check(report, "archive") == [(
        "layout.harness-bundle", f"{ref}: the ref of a harness bundle, not a native bundle")]
    garbage = tmp_path / "garbage.zip"
    garbage.write_bytes(b"not a zip at all")
    report = verify_path(garbage)
    assert not report.ok and [c.name for c in report.checks] == ["archive"]
    assert [code for code, _ in _check(report, "archive")] == ["archive.format"]


def test_an_unpacked_harness_bundle_is_named_and_its_missing_sums_still_reported(
        tmp_path: Path) -> None:
    """A directory holding a harness manifest and no plugin.json is a harness bundle, not a
    native one missing its plugin.json; every other metadata file is still judged."""
    root = tmp_path / "guard-kit"
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text('{"name": "guard-kit"}\n')
    report = verify_path(root)
    assert not report.ok
    assert _check(report, "layout.metadata-files") == [
        ("layout.harness-bundle",
         f"{root.name}: a harness bundle, not a native one: no plugin.json at its root"),
        ("layout.missing", f"{root.name}: SHA256SUMS is missing")]
    native = tmp_path / "native"
    native.mkdir()
    (native / "SHA256SUMS").write_text("")
    assert _check(verify_path(native), "layout.metadata-files") == [
        ("layout.missing", f"{native.name}: plugin.json is missing")]
