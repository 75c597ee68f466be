"""The staged bundle's self-check (`verify.reading.staged`): every verify rule, the full-file
hashes taken from the digests build took while writing the files instead of read again."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from horon_bundle.core import hashing
from horon_bundle.core.hashing import Digest, hash_bytes
from horon_bundle.model.manifest import parse_manifest
from horon_bundle.verify import bundle_files
from horon_bundle.verify.judge import verify_opened, verify_path
from horon_bundle.verify.reading.staged import StagedSource
from horon_bundle.verify.report import VerifyReport
from tests.conftest import BuiltExample


def _written(bundle: Path) -> dict[str, Digest]:
    return {str(p.relative_to(bundle)): hash_bytes(p.read_bytes(), crc=True)
            for p in bundle.rglob("*") if p.is_file()}


def _staged(bundle: Path, written: dict[str, Digest]) -> VerifyReport:
    with StagedSource(bundle, written) as source:
        return verify_opened(source, VerifyReport(path=str(bundle)))


def _library(bundle: Path) -> str:
    return parse_manifest((bundle / "plugin.json").read_bytes()).library.path


def test_the_same_verdict_without_hashing_the_library_again(
        example_release: BuiltExample, monkeypatch: pytest.MonkeyPatch) -> None:
    bundle = example_release.bundle
    written = _written(bundle)
    streamed: list[str] = []
    real = hashing.hash_stream

    def counting(stream, observe=None):  # type: ignore[no-untyped-def]
        streamed.append(getattr(stream, "_label", "?"))
        return real(stream, observe)

    monkeypatch.setattr(bundle_files, "hash_stream", counting)
    staged = _staged(bundle, written)
    assert streamed == []  # no file of the bundle streamed through a hash
    full = verify_path(bundle)
    assert staged.ok and full.ok
    assert staged.to_json()["checks"] == full.to_json()["checks"]
    assert staged.digests == full.digests
    assert staged.advertised_source == full.advertised_source == "section"  # from its headers


def test_a_written_digest_unlike_plugin_json_is_a_mismatch(
        example_release: BuiltExample) -> None:
    """The integrity rows judge the written digests as they judge streamed ones."""
    bundle = example_release.bundle
    written = _written(bundle)
    library = _library(bundle)
    written[library] = dataclasses.replace(written[library], sha256="0" * 64)
    report = _staged(bundle, written)
    assert not report.ok
    assert "checksum.mismatch" in [f.code.name for f in report.findings]


def test_a_file_whose_size_is_not_the_written_size_is_hashed_and_refused(
        example_release: BuiltExample, tmp_path: Path) -> None:
    bundle = Path(shutil.copytree(example_release.bundle, tmp_path / "bundle"))
    written = _written(bundle)
    library = bundle / _library(bundle)
    with library.open("ab") as grown:
        grown.write(b"\0")
    report = _staged(bundle, written)
    assert not report.ok
    assert "checksum.size" in [f.code.name for f in report.findings]
    assert report.digests[_library(bundle)] == hash_bytes(library.read_bytes())

