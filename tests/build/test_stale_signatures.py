"""A rebuild under the same name removes the signatures an earlier build left beside the
archive when they sign other bytes, says so, and keeps those that still sign what is there
(a deterministic rebuild). Before, the stale `.sigstore.json` stayed beside the new archive:
publish refuses it (tests/publish/test_publish_file.py), but the author learnt of it only then."""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path

import pytest

from tests.harness_support import write_plugin
from tests.helpers import REPO, TEMPLATE, cli, copy_workspace

SIGSTORE = REPO / "tests" / "data" / "sigstore"
MESSAGE = SIGSTORE / "bundle_v3.txt.sigstore"
DSSE = SIGSTORE / "conformance-beacon-dsse.staging.sigstore.json"


def _sign(archive: Path, provenance: bytes) -> tuple[Path, Path]:
    """Real Sigstore bundles beside `archive`, naming its digest and `provenance` as what
    they sign (all that build reads of them; their certificates are those of other files)."""
    message = json.loads(MESSAGE.read_bytes())
    message["messageSignature"]["messageDigest"]["digest"] = base64.b64encode(
        hashlib.sha256(archive.read_bytes()).digest()).decode()
    envelope = json.loads(DSSE.read_bytes())
    envelope["dsseEnvelope"]["payload"] = base64.b64encode(provenance).decode()
    signature = archive.with_name(archive.name + ".sigstore.json")
    provenance_signature = archive.with_name(archive.name + ".provenance.sigstore.json")
    signature.write_text(json.dumps(message))
    provenance_signature.write_text(json.dumps(envelope))
    return signature, provenance_signature


def _provenance(archive: Path) -> bytes:
    with zipfile.ZipFile(archive) as opened:
        return opened.read("provenance.json")


def test_a_rebuilt_harness_zip_loses_the_signatures_of_its_earlier_bytes(tmp_path: Path) -> None:
    workspace = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    assert cli("build", workspace, "--out", out).status == 0
    [archive] = out.glob("*.zip")
    signature, provenance_signature = _sign(archive, _provenance(archive))
    same = cli("build", workspace, "--out", out)
    assert same.status == 0 and "removed" not in same.stderr, same.stderr
    assert signature.is_file() and provenance_signature.is_file()  # they still sign it
    (workspace / "commands" / "review.md").write_text("Review it twice.\n")
    changed = cli("build", workspace, "--out", out)
    assert changed.status == 0, changed.stderr
    assert f"removed {signature.name}: it signed an earlier build's archive" in changed.stderr
    assert f"removed {provenance_signature.name}: it signed an earlier build's provenance" \
        in changed.stderr
    assert not signature.exists() and not provenance_signature.exists()


def test_a_side_file_build_cannot_read_as_a_signature_is_left_alone(tmp_path: Path) -> None:
    """Only a signature that names other bytes is removed: anything else under those names
    is the author's, and publish names it when it refuses it."""
    workspace = write_plugin(tmp_path / "plugin")
    out = tmp_path / "out"
    assert cli("build", workspace, "--out", out).status == 0
    [archive] = out.glob("*.zip")
    signature = archive.with_name(archive.name + ".sigstore.json")
    provenance_signature = archive.with_name(archive.name + ".provenance.sigstore.json")
    unreadable = {signature: b"not json\n", provenance_signature: b'{"dsseEnvelope": 1}'}
    for path, data in unreadable.items():
        path.write_bytes(data)
    message = json.loads(MESSAGE.read_bytes())
    message["messageSignature"]["messageDigest"]["digest"] = "not base64!"
    (workspace / "commands" / "review.md").write_text("Review it twice.\n")
    assert cli("build", workspace, "--out", out).status == 0
    assert {path: path.read_bytes() for path in unreadable} == unreadable
    signature.write_text(json.dumps(message))  # names no digest: not known to be stale
    (workspace / "commands" / "review.md").write_text("Review it three times.\n")
    result = cli("build", workspace, "--out", out)
    assert result.status == 0 and ".sigstore.json: it signed" not in result.stderr
    assert json.loads(signature.read_bytes()) == message


@pytest.mark.slow
def test_a_rebuilt_native_archive_loses_only_the_signature_of_other_bytes(
        tmp_path: Path, cargo_target_dir: Path) -> None:
    """A licence edit changes the archive but not the provenance statement (its subjects are
    the library and the sidecars): the archive's signature goes, the statement's stays."""
    workspace = copy_workspace(TEMPLATE, tmp_path / "plugin")
    out = tmp_path / "out"
    build = ("build", workspace, "--out", out, "--target-dir", cargo_target_dir)
    assert cli(*build).status == 0
    [archive] = out.glob("*.zip")
    before = _provenance(archive)
    signature, provenance_signature = _sign(archive, before)
    same = cli(*build)
    assert same.status == 0 and "removed" not in same.stderr, same.stderr
    assert signature.is_file() and provenance_signature.is_file()
    licence = workspace / "LICENSE"
    licence.write_text(licence.read_text() + "\n")
    changed = cli(*build)
    assert changed.status == 0, changed.stderr
    assert f"removed {signature.name}: it signed an earlier build's archive" in changed.stderr
    assert not signature.exists()
    assert _provenance(archive) == before
    assert provenance_signature.is_file() and "provenance" not in changed.stderr
