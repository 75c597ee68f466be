"""Evidence kind 2: `compile` writes a library and its artifact record; `build --prebuilt LIB
--record REC` bundles them elsewhere, re-judging everything the record claims.

Records are canonical JSON (`load_record` refuses anything else), so every hand-edit here is
re-serialised with `strictjson.canonical_bytes`, as an attacker would.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.gate_helpers import (
    QA_DEFAULT_CHAIN,
    assert_refused_cleanly,
    byproducts,
    error_lines,
    rewrite_record,
)
from tests.helpers import HOST, TEMPLATE, CliResult, cli
from tests.native_bins import SECTION_JSON, make_macho, make_pe
from tests.session_builds import Compiled

pytestmark = pytest.mark.cargo


def _compile(workspace: Path, out: Path, target_dir: Path, *args: str) -> Compiled:
    result = cli("compile", workspace, "--out", out, "--target-dir", target_dir, *args)
    assert result.status == 0, result.stderr
    [directory] = [p for p in out.iterdir() if p.name.endswith(".compiled")]
    [library] = [p for p in directory.iterdir() if p.name != "record.json"]
    return Compiled(library=library, record=directory / "record.json", document=out / "none")


@pytest.fixture
def release(compiled_example: Compiled) -> Compiled:
    """The example compiled once per run (conftest)."""
    return compiled_example


@pytest.fixture
def qa(compiled_example_qa: Compiled) -> Compiled:
    return compiled_example_qa


def _edited(compiled: Compiled, directory: Path,
            change: Callable[[dict[str, Any]], None]) -> Path:
    record = directory / "record.json"
    shutil.copyfile(compiled.record, record)
    rewrite_record(record, change)
    return record


def _prebuilt(out: Path, library: Path, record: Path, *args: str,
              workspace: Path = TEMPLATE) -> CliResult:
    return cli("build", workspace, "--out", out, "--prebuilt", library, "--record", record,
               *args)


def test_prebuilt_with_its_record_is_bundled(tmp_path: Path, release: Compiled) -> None:
    out = tmp_path / "out"
    result = _prebuilt(out, release.library, release.record)
    assert result.status == 0, result.stderr
    bundle = out / f"example-0.1.0-{HOST}"
    statement = json.loads((bundle / "provenance.json").read_text())
    internal = statement["predicate"]["buildDefinition"]["internalParameters"]
    assert internal["evidence"] == "artifact-record"
    produced = byproducts(bundle)
    assert produced["horon:artifact-record"]["library"]["sha256"] == \
        hashlib.sha256(release.library.read_bytes()).hexdigest()
    assert produced["horon:advertised"]["observed_by"] == ["probe", "static-section"]
    roles = {a["role"] for a in json.loads((bundle / "plugin.json").read_text())["assets"]}
    assert roles == {"provenance", "sbom", "notices"}
    assert "horon-example 0.1.0" in (bundle / "THIRD-PARTY-NOTICES").read_text()
    assert cli("verify", out / f"example-0.1.0-{HOST}.zip").status == 0


TAMPERED: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "sha256": (lambda r: r["library"].__setitem__("sha256", "0" * 64),
               "artifact record sha256 '" + "0" * 64 + "' != '"),
    "size": (lambda r: r["library"].__setitem__("size", r["library"]["size"] + 1),
             "artifact record size "),
    "target": (lambda r: r.__setitem__("target", "aarch64-unknown-linux-gnu"),
               f"artifact record target 'aarch64-unknown-linux-gnu' != '{HOST}'"),
    "profile": (lambda r: r.__setitem__("profile", "dev"),
                "artifact record profile 'dev' != 'release'"),
    "features": (lambda r: r.__setitem__("features", ["clock"]),
                 "artifact record features ['clock'] != ['clock', 'greeting']"),
}


@pytest.mark.parametrize("field", sorted(TAMPERED))
def test_each_bound_field_tampered(tmp_path: Path, release: Compiled, field: str) -> None:
    change, message = TAMPERED[field]
    record = _edited(release, tmp_path, change)
    out = tmp_path / "out"
    result = _prebuilt(out, release.library, record)
    assert_refused_cleanly(result, "evidence.mismatch", out)
    [line] = error_lines(result, "evidence.mismatch")
    assert message in line, line
    assert result.codes == ["evidence.mismatch"]


def test_record_for_another_library(tmp_path: Path, release: Compiled, qa: Compiled) -> None:
    out = tmp_path / "out"
    result = _prebuilt(out, qa.library, release.record)
    assert_refused_cleanly(result, "evidence.mismatch", out)
    assert any("artifact record sha256" in line
               for line in error_lines(result, "evidence.mismatch"))


def test_prebuilt_without_a_record(tmp_path: Path, release: Compiled) -> None:
    out = tmp_path / "out"
    result = cli("build", TEMPLATE, "--out", out, "--prebuilt", release.library)
    assert_refused_cleanly(result, "evidence.missing", out)


def test_hand_edited_record_that_is_not_canonical(tmp_path: Path, release: Compiled) -> None:
    record = tmp_path / "record.json"
    record.write_text(json.dumps(json.loads(release.record.read_text())))
    out = tmp_path / "out"
    assert_refused_cleanly(_prebuilt(out, release.library, record), "evidence.record", out)


def test_record_compiled_beyond_the_claim_drifts(tmp_path: Path, qa: Compiled) -> None:
    """A qa record re-labelled as release: its graph compiled qa-provider, outside the
    closure of the release claim."""
    def relabel(record: dict[str, Any]) -> None:
        record["channel"] = "release"
        record["claim"] = ["clock", "greeting"]

    record = _edited(qa, tmp_path, relabel)
    out = tmp_path / "out"
    result = _prebuilt(out, qa.library, record)
    assert_refused_cleanly(result, "features.drift", out)
    [line] = error_lines(result, "features.drift")
    assert "(extra: ['qa-provider'])" in line


@pytest.mark.slow
def test_record_whose_claim_hides_a_qa_crate(tmp_path: Path, cargo_target_dir: Path) -> None:
    """The default-features defect (docs/graph-and-qa.md) through evidence kind 2: the record
    claims only imap and says release, but its graph holds qa-mock; the bundle step re-judges
    the graph."""
    compiled = _compile(QA_DEFAULT_CHAIN, tmp_path / "compiled", cargo_target_dir,
                        "--channel", "qa")
    record = _edited(compiled, tmp_path, lambda r: r.__setitem__("channel", "release"))
    assert json.loads(record.read_text())["claim"] == ["imap"]
    out = tmp_path / "out"
    result = _prebuilt(out, compiled.library, record, workspace=QA_DEFAULT_CHAIN)
    assert_refused_cleanly(result, "graph.qa-provider", out)
    assert any(line.endswith("mail-plugin → mail-helper[default] → feature qa-provider → "
                             "dep qa-mock") for line in error_lines(result, "graph.qa-provider"))


# --- libraries for targets that cannot be loaded here: the static section decides ---------
def _cross_record(release: Compiled, directory: Path, library: Path, target: str) -> Path:
    data = library.read_bytes()

    def retarget(record: dict[str, Any]) -> None:
        record["target"] = target
        record["library"] = {"name": library.name, "sha256": hashlib.sha256(data).hexdigest(),
                             "size": len(data)}
        record["advertised"] = None  # a cross-compiling runner cannot probe either

    return _edited(release, directory, retarget)


@pytest.mark.parametrize(("target", "make", "name"), [
    ("x86_64-pc-windows-msvc", make_pe, "horon_example"),
    ("aarch64-apple-darwin", make_macho, "libhoron_example"),
])
def test_other_target_advertised_metadata_comes_from_the_section(
        tmp_path: Path, release: Compiled, target: str,
        make: Callable[..., Path], name: str) -> None:
    library = make(tmp_path, name)
    record = _cross_record(release, tmp_path, library, target)
    out = tmp_path / "out"
    result = _prebuilt(out, library, record, "--target", target)
    assert result.status == 0, result.stderr
    assert "advertised metadata read from the static .horon_abi section" in result.stderr
    bundle = out / f"example-0.1.0-{target}"
    manifest = json.loads((bundle / "plugin.json").read_text())
    assert manifest["library"]["path"] == f"lib/{library.name}"
    advertised = byproducts(bundle)["horon:advertised"]
    assert advertised["observed_by"] == ["static-section"]
    assert advertised["features"] == ["clock", "greeting"]
    report = cli("verify", out / f"example-0.1.0-{target}.zip", "--json")
    assert report.status == 0, report.stderr
    checks = {c["check"]: c for c in report.json()["checks"]}
    assert checks["features.advertised"]["result"] == "pass"
    assert checks["features.advertised"]["note"].startswith(
        "source: section (read from the library's .horon_abi section)")
    assert report.json()["advertised_source"] == "section"


@pytest.mark.parametrize(("target", "make", "name"), [
    ("x86_64-pc-windows-msvc", make_pe, "horon_example"),
    ("aarch64-apple-darwin", make_macho, "libhoron_example"),
])
def test_other_target_section_must_equal_the_compiled_features(
        tmp_path: Path, release: Compiled, target: str,
        make: Callable[..., Path], name: str) -> None:
    library = make(tmp_path, name, SECTION_JSON.replace(b'"clock",', b""))
    record = _cross_record(release, tmp_path, library, target)
    out = tmp_path / "out"
    result = _prebuilt(out, library, record, "--target", target)
    assert_refused_cleanly(result, "features.mismatch", out)
    assert error_lines(result, "features.mismatch") == [
        "ERROR features.mismatch: the library advertises ['greeting'], plugin.json would list "
        "['clock', 'greeting'] (compiled)"]


def test_library_without_a_section_falls_back_to_recorded_metadata(
        tmp_path: Path, release: Compiled) -> None:
    objcopy = shutil.which("objcopy")
    if objcopy is None:
        pytest.skip("objcopy (binutils) not installed")
    library = tmp_path / release.library.name
    subprocess.run([objcopy, "--remove-section", ".horon_abi", str(release.library),
                    str(library)], check=True)
    data = library.read_bytes()

    def rebind(record: dict[str, Any]) -> None:
        record["library"]["sha256"] = hashlib.sha256(data).hexdigest()
        record["library"]["size"] = len(data)
        record["advertised"]["observed_by"] = ["probe"]

    record = _edited(release, tmp_path, rebind)
    out = tmp_path / "out"
    result = _prebuilt(out, library, record)
    assert result.status == 0, result.stderr
    assert "has no .horon_abi section: advertised metadata from the probe alone" in result.stderr
    report = cli("verify", out / f"example-0.1.0-{HOST}", "--json")
    assert report.status == 0, report.stderr
    checks = {c["check"]: c for c in report.json()["checks"]}
    assert checks["features.advertised"]["note"] == (
        "source: recorded-only (no .horon_abi section: the advertised metadata recorded at "
        "build time (probe), not recomputed)")
    assert report.json()["advertised_source"] == "recorded-only"


# --- the record reader: its limits, its refusals, its round trip (model/record.py) --------
from horon_bundle.core.hashing import Digest  # noqa: E402
from horon_bundle.model.record import MAX_RECORD_BYTES, load_record, record_json  # noqa: E402


def _nested(depth: int) -> object:
    value: object = []
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize(("depth", "code", "says"), [
    (16, "evidence.record", "record.json: x: unknown field"),
    (17, "json.too-deep", "record.json: nesting deeper than 16"),
], ids=["depth-16", "depth-17"])
def test_a_record_nested_past_sixteen_levels_is_refused_by_its_reader(
        tmp_path: Path, release: Compiled, depth: int, code: str, says: str) -> None:
    """The record object is level 1: 15 nested arrays under a field still reach the decoder
    (which refuses the unknown field), 16 are refused as too deep, naming the file."""
    record = _edited(release, tmp_path, lambda r: r.__setitem__("x", _nested(depth - 1)))
    out = tmp_path / "out"
    result = _prebuilt(out, release.library, record)
    assert_refused_cleanly(result, code, out)
    assert result.codes == [code]
    [line] = error_lines(result, code)
    assert line == f"ERROR {code}: {says}", line


def test_a_record_past_the_default_json_limit_is_read_up_to_its_own(
        tmp_path: Path, release: Compiled) -> None:
    """A record may hold up to MAX_RECORD_BYTES (a large graph), far past read_json's 1 MiB
    default."""
    version = "0.1.0+" + "x" * (2 << 20)
    record = _edited(release, tmp_path, lambda r: r.__setitem__("version", version))
    size = record.stat().st_size
    assert 2 << 20 < size < MAX_RECORD_BYTES
    loaded, digest = load_record(record)
    assert loaded.version == version
    assert digest == Digest(hashlib.sha256(record.read_bytes()).hexdigest(), size)


def test_a_record_without_the_advertised_field_has_no_advertised_metadata(
        tmp_path: Path, release: Compiled) -> None:
    record = _edited(release, tmp_path, lambda r: r.pop("advertised"))
    loaded, _ = load_record(record)
    assert loaded.advertised is None
    assert "advertised" not in loaded.raw
    assert loaded.channel == "release"


def test_record_json_writes_what_load_record_reads(release: Compiled) -> None:
    loaded, digest = load_record(release.record)
    assert loaded.advertised is not None
    fields: dict[str, Any] = {
        "plugin_id": loaded.plugin_id, "package": loaded.package, "version": loaded.version,
        "library_name": loaded.library_name, "digest": Digest(loaded.sha256, loaded.size),
        "target": loaded.target, "profile": loaded.profile, "channel": loaded.channel,
        "claim": loaded.claim, "features": loaded.features, "invocation": loaded.invocation,
        "graph": loaded.graph}
    assert record_json(**fields, advertised=loaded.advertised) == loaded.raw
    advertised = loaded.raw["advertised"]
    assert isinstance(advertised, dict)
    assert advertised["observed_by"] == ["probe", "static-section"]
    assert record_json(**fields, advertised=None) == {**loaded.raw, "advertised": None}
    assert digest.size == release.record.stat().st_size


EMPTIED = ("plugin", "package", "version", "target", "profile", "channel", "library.name",
           "library.sha256")  # in the order they are read


def _empty_strings(record: dict[str, Any]) -> None:
    for where in EMPTIED:
        *parents, key = where.split(".")
        holder = record
        for parent in parents:
            holder = holder[parent]
        holder[key] = ""


MALFORMED: dict[str, tuple[Callable[[dict[str, Any]], None], list[str]]] = {
    "unknown-field": (lambda r: r.__setitem__("extra", 1), ["record.json: extra: unknown field"]),
    "wrong-type": (lambda r: r.__setitem__("plugin", 1),
                   ["record.json: plugin: expected a string, got 1"]),
    "other-format": (lambda r: r.__setitem__("format", "horon.artifact-record.v2"),
                     ["record.json: format 'horon.artifact-record.v2', expected "
                      "'horon.artifact-record.v1'"]),
    "unknown-observer": (lambda r: r["advertised"].__setitem__("observed_by", ["telepathy"]),
                         ["record.json: advertised.observed_by: ['telepathy'] unknown"]),
    "empty-strings": (_empty_strings,
                      [f"record.json: {where}: an empty string where a name is required"
                       for where in EMPTIED]),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_record_is_refused_naming_the_file_and_the_field(
        tmp_path: Path, release: Compiled, case: str) -> None:
    """Every defect of a record's content is an `evidence.record` refusal naming the record
    file and the field, never an internal error; nothing is built."""
    change, says = MALFORMED[case]
    record = _edited(release, tmp_path, change)
    out = tmp_path / "out"
    result = _prebuilt(out, release.library, record)
    assert "INTERNAL ERROR" not in result.stderr, result.stderr
    assert_refused_cleanly(result, "evidence.record", out)
    assert result.codes == ["evidence.record"] * len(says)
    assert error_lines(result, "evidence.record") == [
        f"ERROR evidence.record: {line}" for line in says]


def test_a_record_that_is_not_an_object_is_refused(tmp_path: Path, release: Compiled) -> None:
    record = tmp_path / "record.json"
    record.write_bytes(b"[]\n")
    out = tmp_path / "out"
    result = _prebuilt(out, release.library, record)
    assert "INTERNAL ERROR" not in result.stderr, result.stderr
    assert_refused_cleanly(result, "evidence.record", out)
    assert error_lines(result, "evidence.record") == [
        "ERROR evidence.record: record.json: (document): expected an object, got an array"]
