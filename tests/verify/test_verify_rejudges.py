"""`verify` re-judges a bundle from its own bytes: the recorded graph, and the library's
static section (read without loading it, from a directory or an archive)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.verify.judge import verify_path
from tests.conftest import BuiltExample
from tests.gate_helpers import resign_provenance
from tests.helpers import HOST, CliResult, cli, copy_bundle, edit_manifest, rewrite_listing

pytestmark = pytest.mark.cargo


@pytest.fixture
def bundle(example_release: BuiltExample, tmp_path: Path) -> Path:
    return copy_bundle(example_release.bundle, tmp_path)


def _graph(statement: dict[str, Any]) -> dict[str, Any]:
    for item in statement["predicate"]["runDetails"]["byproducts"]:
        if item["name"] == "horon:graph":
            return item["annotations"]  # type: ignore[no-any-return]
    raise KeyError("horon:graph")


def _verify(path: Path) -> tuple[CliResult, dict[str, dict[str, Any]]]:
    result = cli("verify", path, "--json")
    return result, {c["check"]: c for c in result.json()["checks"]}


def test_the_example_release_bundle_verifies(example_release: BuiltExample) -> None:
    for path in (example_release.bundle, example_release.archive):
        result, checks = _verify(path)
        assert result.status == 0, result.stderr
        assert checks["graph.qa-free"]["result"] == "pass"
        assert checks["features.advertised"]["note"] == (
            "source: section (read from the library's .horon_abi section); agrees with the "
            "metadata recorded at build time (probe, static-section)")
        assert result.json()["advertised_source"] == "section"
    names = {p.name for p in example_release.bundle.iterdir()}
    assert {"sbom.cdx.json", "THIRD-PARTY-NOTICES", "provenance.json"} <= names


def test_a_qa_crate_inserted_into_the_recorded_graph(bundle: Path) -> None:
    def insert(statement: dict[str, Any]) -> None:
        graph = _graph(statement)
        graph["packages"].append({
            "id": "qa-mock@0.1.0", "name": "qa-mock", "version": "0.1.0", "source": "path",
            "checksum": None, "license": "Apache-2.0", "qa_marker": False,
            "feature_table": {}, "compiled": {"target": []}})
        graph["edges"].append({
            "from": graph["root"], "to": "qa-mock@0.1.0", "kinds": ["normal"],
            "dep_key": "qa-mock", "optional": False, "default_features": True,
            "features": []})

    resign_provenance(bundle, insert)
    result, checks = _verify(bundle)
    assert result.status == 1
    # the provider is found, and so is the provenance's silence about it (it recorded none)
    assert [f["code"] for c in checks.values() for f in c["findings"]] == [
        "graph.qa-provider", "graph.qa-record"]
    assert checks["graph.qa-free"]["findings"][0]["message"] == (
        "crate 'qa-mock' matches QA pattern 'qa-*': horon-example → qa-mock")


def test_a_release_bundle_without_its_graph(bundle: Path) -> None:
    def remove(statement: dict[str, Any]) -> None:
        run = statement["predicate"]["runDetails"]
        run["byproducts"] = [b for b in run["byproducts"] if b["name"] != "horon:graph"]

    resign_provenance(bundle, remove)
    result, checks = _verify(bundle)
    assert result.status == 1
    assert [f["code"] for c in checks.values() for f in c["findings"]] == ["graph.missing"]


def test_recorded_advertised_metadata_disagreeing_with_the_section(bundle: Path) -> None:
    def change(statement: dict[str, Any]) -> None:
        for item in statement["predicate"]["runDetails"]["byproducts"]:
            if item["name"] == "horon:advertised":
                item["annotations"]["features"] = ["clock"]

    resign_provenance(bundle, change)
    result, checks = _verify(bundle)
    assert result.status == 1
    codes = sorted(f["code"] for f in checks["features.advertised"]["findings"])
    assert codes == ["abi.section-mismatch", "features.mismatch"]


def test_archive_and_directory_read_the_same_section(example_release: BuiltExample) -> None:
    directory = verify_path(example_release.bundle)
    archive = verify_path(example_release.archive)
    notes = [[c.note for c in r.checks if c.name == "features.advertised"]
             for r in (directory, archive)]
    assert notes[0] == notes[1]
    assert directory.ok and archive.ok
    manifest = json.loads((example_release.bundle / "plugin.json").read_text())
    assert manifest["target"] == HOST


def _replace_library(bundle: Path, data: bytes) -> None:
    """Swap the library's bytes and re-declare them, so the section check runs on them."""
    path = "lib/libhoron_example.so"
    (bundle / path).write_bytes(data)
    rewrite_listing(bundle, path)
    edit_manifest(bundle, lambda m: m["library"].update(
        sha256=hashlib.sha256(data).hexdigest(), size=len(data)))


@pytest.mark.parametrize(("change", "says"), [
    (lambda lib: lib.replace(b'"features":["clock","greeting"]',
                             b'"features":["greeting","clock"]'), "not sorted"),
    (lambda lib: lib[:1000], "past the end of the file"),
    (lambda lib: b"\x00" * 64 + lib[64:], "not an ELF, PE or Mach-O file"),
])
def test_a_hostile_library_is_an_abi_section_finding(
        bundle: Path, change: Callable[[bytes], bytes], says: str) -> None:
    original = (bundle / "lib" / "libhoron_example.so").read_bytes()
    _replace_library(bundle, change(original))
    result, checks = _verify(bundle)
    assert result.status == 1
    assert "Traceback" not in result.stderr
    [finding] = checks["features.advertised"]["findings"]
    assert finding["code"] == "abi.section"
    assert says in finding["message"]


def test_verify_path_reports_its_path_hashes_the_archive_only_when_asked(
        example_release: BuiltExample) -> None:
    archive = example_release.archive
    plain = verify_path(archive)
    assert plain.ok and plain.path == str(archive) and plain.archive_digest is None
    assert plain.manifest is not None and plain.manifest.id == "example"
    hashed = verify_path(archive, archive_digest=True)
    assert hashed.ok and hashed.archive_digest is not None
    assert hashed.archive_digest.sha256 == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert hashed.archive_digest.size == archive.stat().st_size
    directory = verify_path(example_release.bundle)
    assert directory.ok and directory.path == str(example_release.bundle)


def test_verify_path_applies_the_auditors_qa_patterns(example_release: BuiltExample) -> None:
    report = verify_path(example_release.archive, qa_patterns=["horon-*"])
    assert not report.ok
    [check] = [c for c in report.checks if c.name == "graph.qa-free"]
    assert [f.code.name for f in check.findings] == ["graph.qa-provider"]
    assert check.note == "5 patterns: 4 built-in, 1 added by the bundle and the policy"


# --- a large zipped library: its section re-read from a resume point, not from its start ---
import random  # noqa: E402
import struct  # noqa: E402
import zipfile  # noqa: E402

from horon_bundle.abi.section import StreamWindows  # noqa: E402
from horon_bundle.core.inputs import read_at  # noqa: E402
from horon_bundle.verify.reading import archive_stream  # noqa: E402

MIB = 1 << 20


def _section_deep_inside(elf: bytes, *, before: int) -> bytes:
    """The ELF library grown by `before` bytes of incompressible padding ahead of a copy of
    its .horon_abi section, and more after it, so that neither window kept while hashing it
    holds the section: verify must re-read it (the name table and the section header table
    are moved to the end, inside the tail window)."""
    rng = random.Random(17)  # noqa: S311 - test data, not secrets
    (shoff,) = struct.unpack_from("<Q", elf, 0x28)
    shnum, shstrndx = struct.unpack_from("<HH", elf, 0x3C)
    table = bytearray(elf[shoff:shoff + 64 * shnum])

    def extent(index: int) -> tuple[int, int]:
        return struct.unpack_from("<QQ", table, 64 * index + 24)

    names_at, names_size = extent(shstrndx)
    names = elf[names_at:names_at + names_size]
    [section] = [i for i in range(shnum) if names[
        (start := struct.unpack_from("<I", table, 64 * i)[0]):names.index(b"\0", start)]
        == b".horon_abi"]
    at, size = extent(section)
    out = bytearray(elf) + rng.randbytes(before)
    struct.pack_into("<Q", table, 64 * section + 24, len(out))
    out += elf[at:at + size] + rng.randbytes(StreamWindows.TAIL)
    struct.pack_into("<Q", table, 64 * shstrndx + 24, len(out))
    out += names + b"\0" * (-(len(out) + len(names)) % 8)
    struct.pack_into("<Q", out, 0x28, len(out))
    return bytes(out + table)


def test_the_sections_reread_starts_at_a_resume_point_of_the_hashing_pass(
        example_release: BuiltExample, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """verify hashes the library with resume points kept, so the one re-read its section
    needs inflates from the nearest point before it, never the 6 MiB ahead of it again."""
    bundle = copy_bundle(example_release.bundle, tmp_path)
    library = "lib/libhoron_example.so"
    _replace_library(bundle, _section_deep_inside((bundle / library).read_bytes(),
                                                  before=6 * MIB))
    archive = tmp_path / example_release.archive.name
    with zipfile.ZipFile(example_release.archive) as source, \
            zipfile.ZipFile(archive, "w") as target:
        for info in source.infolist():
            assert info.compress_type == zipfile.ZIP_DEFLATED
            target.writestr(info, (bundle / info.filename).read_bytes())
    with zipfile.ZipFile(archive) as written:
        compressed = sum(i.compress_size for i in written.infolist())
    reads: list[int] = []
    def counting(fd: int, length: int, offset: int) -> bytes:
        data = read_at(fd, length, offset)
        reads.append(len(data))
        return data

    monkeypatch.setattr(archive_stream, "read_at", counting)
    report = verify_path(archive)
    [check] = [c for c in report.checks if c.name == "features.advertised"]
    assert check.status == "pass" and not check.findings
    assert check.note.startswith("source: section (read from the library's .horon_abi section)")
    # every entry once, plus at most one spacing of resume points (1 MiB) and a read chunk
    assert compressed < sum(reads) < compressed + 3 * MIB // 2, (sum(reads), compressed)
