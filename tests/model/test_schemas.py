"""docs/schemas/: every schema agrees with the strict decoder it describes — every valid
example accepted by both, every hostile case refused by both — and every `--json` document
the CLI prints validates against its schema. What the decoder refuses beyond any JSON Schema
(byte order, collisions, floats that look like integers …) is listed in each schema's
description and tested here as decoder-only."""

from __future__ import annotations

import copy
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.install.state import parse_state, state_bytes
from horon_bundle.model.manifest import parse_manifest
from horon_bundle.model.provenance import parse_provenance
from horon_bundle.model.record import parse_record
from tests.conftest import BuiltExample, Compiled
from tests.harness_support import built_zip
from tests.helpers import HOST, REPO, TEMPLATE, cli

SCHEMAS = REPO / "docs" / "schemas"
Doc = dict[str, Any]
Mutation = Callable[[Doc], None]


def _validator(name: str) -> Any:
    schema = json.loads((SCHEMAS / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _schema_ok(name: str, document: object) -> bool:
    return not list(_validator(name).iter_errors(document))


def test_every_schema_is_a_valid_draft_2020_12_schema() -> None:
    names = sorted(p.name for p in SCHEMAS.glob("*.json"))
    assert len(names) >= 10
    for name in names:
        _validator(name)


# --- plugin.json ------------------------------------------------------------------------
def _refused(decode: Callable[[], object]) -> bool:
    try:
        decode()
    except Refused:
        return True
    return False


def _set(path: str, value: object) -> Mutation:
    def change(doc: Doc) -> None:
        *parents, last = path.split(".")
        target: Any = doc
        for part in parents:
            target = target[int(part)] if part.isdigit() else target[part]
        if value is _DELETE:
            del target[int(last) if last.isdigit() else last]
        elif last.isdigit():
            target[int(last)] = value
        else:
            target[last] = value
    return change


_DELETE = object()
SIDE = {"name": "notes-helper", "path": "sidecars/notes-helper", "executable": True,
        "sha256": "0" * 64, "size": 5}
PLUGIN_HOSTILE: dict[str, Mutation] = {
    "unknown top-level field": _set("extra", 1),
    "unknown field at depth 3": _set("assets.0.extra", "x"),
    "missing id": _set("id", _DELETE),
    "null where a string belongs": _set("name", None),
    "other format": _set("format", "horon.plugin.v2"),
    "bad id": _set("id", "Example"),
    "id with a trailing newline": _set("id", "example\n"),
    "bad version": _set("version", "1.0"),
    "32-bit target": _set("target", "i686-unknown-linux-gnu"),
    "unsupported os": _set("target", "x86_64-unknown-netbsd"),
    "bad profile": _set("profile", "Release"),
    "bad channel": _set("channel", "beta"),
    "abi major 2": _set("abi.major", 2),
    "abi minor 17 bits": _set("abi.minor", 65536),
    "bool for an int": _set("library.size", True),
    "string for an int": _set("library.size", "1"),
    "negative size": _set("library.size", -1),
    "size above 2^53-1": _set("license.size", 2**53),
    "uppercase digest": _set("library.sha256", "A" * 64),
    "short digest": _set("library.sha256", "a" * 63),
    "absolute path": _set("license.path", "/LICENSE"),
    "dot-dot path": _set("library.path", "lib/../x.so"),
    "backslash path": _set("library.path", "lib\\x.so"),
    "drive letter": _set("license.path", "C:LICENSE"),
    "trailing dot": _set("license.path", "LICENSE."),
    "control character": _set("license.path", "LIC\x01ENSE"),
    "library outside lib/": _set("library.path", "libx.so"),
    "asset not at the top level": _set("assets.1.path", "docs/sbom.cdx.json"),
    "unknown asset role": _set("assets.1.role", "readme"),
    "no provenance asset": _set("assets.0.role", "sbom"),
    "duplicate feature": _set("features", ["clock", "clock"]),
    "bad feature token": _set("features", ["Clock"]),
    "sidecar outside sidecars/": _set("sidecars", [{**SIDE, "path": "bin/notes-helper"}]),
    "sidecar without executable": _set("sidecars", [{k: v for k, v in SIDE.items()
                                                     if k != "executable"}]),
    "name with a newline": _set("name", "Ex\nample"),
}
PLUGIN_DECODER_ONLY: dict[str, Mutation] = {
    "features not in byte order": _set("features", ["greeting", "clock"]),
    "a float that is an integer": _set("library.size", 458712.0),
    "a QA feature in a release": _set("features", ["clock", "qa-provider"]),
    "library extension of another OS": _set("library.path", "lib/libhoron_example.dll"),
    "reserved device name": _set("license.path", "CON"),
    "case-insensitive collision": _set("license.path", "Provenance.json"),
    "plugin.json declared as a file": _set("license.path", "plugin.json"),
}


@pytest.fixture(scope="module")
def manifest_document(example_release: BuiltExample) -> Doc:
    document: Doc = json.loads((example_release.bundle / "plugin.json").read_text())
    return document


def _manifest_bytes(document: Doc) -> bytes:
    return json.dumps(document).encode()


def test_valid_plugin_json_is_accepted_by_both(manifest_document: Doc) -> None:
    with_sidecar = copy.deepcopy(manifest_document)
    with_sidecar["sidecars"] = [SIDE]
    qa_channel = copy.deepcopy(manifest_document)
    qa_channel.update(channel="qa", features=["clock", "greeting", "qa-provider"])
    for document in (manifest_document, with_sidecar, qa_channel):
        parse_manifest(_manifest_bytes(document))
        assert _schema_ok("plugin.schema.json", document)


@pytest.mark.parametrize("case", sorted(PLUGIN_HOSTILE))
def test_hostile_plugin_json_is_refused_by_both(manifest_document: Doc, case: str) -> None:
    document = copy.deepcopy(manifest_document)
    PLUGIN_HOSTILE[case](document)
    assert _refused(lambda: parse_manifest(_manifest_bytes(document))), case
    assert not _schema_ok("plugin.schema.json", document), case


@pytest.mark.parametrize("case", sorted(PLUGIN_DECODER_ONLY))
def test_what_only_the_decoder_can_refuse(manifest_document: Doc, case: str) -> None:
    document = copy.deepcopy(manifest_document)
    PLUGIN_DECODER_ONLY[case](document)
    assert _refused(lambda: parse_manifest(_manifest_bytes(document))), case
    assert _schema_ok("plugin.schema.json", document), f"{case}: move it to the hostile list"


# --- provenance parameters ---------------------------------------------------------------
def _parameters(statement: Doc) -> Doc:
    definition = statement["predicate"]["buildDefinition"]
    return {"externalParameters": definition["externalParameters"],
            "internalParameters": definition["internalParameters"]}


EXT = "predicate.buildDefinition.externalParameters"
INT_ = "predicate.buildDefinition.internalParameters"
PARAMETERS_HOSTILE: dict[str, Mutation] = {
    "unknown external parameter": _set(f"{EXT}.cflags", "-O0"),
    "unknown internal parameter": _set(f"{INT_}.debug", True),
    "missing claim": _set(f"{EXT}.claim", _DELETE),
    "claim not strings": _set(f"{EXT}.claim", [1]),
    "dirty as a string": _set(f"{EXT}.source.dirty", "no"),
    "revision as a number": _set(f"{EXT}.source.revision", 7),
    "short declaration digest": _set(f"{EXT}.declaration.digest.sha256", "ab"),
    "extra digest algorithm": _set(f"{EXT}.declaration.digest.md5", "0" * 32),
    "unknown evidence kind": _set(f"{INT_}.evidence", "trust-me"),
    "epoch as a string": _set(f"{INT_}.source_date_epoch", "0"),
    "provider field not a string": _set(f"{INT_}.qa.providers", [{"package": 1}]),
    "provider without its chain": _set(f"{INT_}.qa.providers", [
        {"package": "qa-mock@0.1.0", "feature": None, "reason": "a QA crate"}]),
    "provider with an unknown field": _set(f"{INT_}.qa.providers", [
        {"package": "qa-mock@0.1.0", "feature": None, "reason": "a QA crate", "chain": "p",
         "note": "x"}]),
    "missing qa markers": _set(f"{INT_}.qa.markers", _DELETE),
}


@pytest.fixture(scope="module")
def statement(example_release: BuiltExample) -> Doc:
    document: Doc = json.loads((example_release.bundle / "provenance.json").read_text())
    return document


def test_valid_provenance_parameters_are_accepted_by_both(statement: Doc) -> None:
    parse_provenance(json.dumps(statement).encode())
    assert _schema_ok("provenance-parameters.schema.json", _parameters(statement))
    with_provider = copy.deepcopy(statement)
    _set(f"{INT_}.qa.providers", [{"package": "qa-mock@0.1.0", "feature": "qa", "reason": "r",
                                   "chain": "p → qa-mock"}])(with_provider)
    facts = parse_provenance(json.dumps(with_provider).encode()).facts
    assert [p.to_json() for p in facts.qa_providers] == [
        {"package": "qa-mock@0.1.0", "feature": "qa", "reason": "r", "chain": "p → qa-mock"}]
    assert _schema_ok("provenance-parameters.schema.json", _parameters(with_provider))


@pytest.mark.parametrize("case", sorted(PARAMETERS_HOSTILE))
def test_hostile_provenance_parameters_are_refused_by_both(statement: Doc, case: str) -> None:
    document = copy.deepcopy(statement)
    PARAMETERS_HOSTILE[case](document)
    assert _refused(lambda: parse_provenance(json.dumps(document).encode())), case
    assert not _schema_ok("provenance-parameters.schema.json", _parameters(document)), case


# --- artifact record ----------------------------------------------------------------------
RECORD_HOSTILE: dict[str, Mutation] = {
    "unknown field": _set("note", "x"),
    "other format": _set("format", "horon.artifact-record.v2"),
    "missing invocation": _set("invocation", _DELETE),
    "size as a string": _set("library.size", "1"),
    "unknown library field": _set("library.url", "https://example.invalid"),
    "claim not strings": _set("claim", [True]),
    "cwd elsewhere": _set("invocation.cwd", "/home/ci"),
    "failed build": _set("invocation.exit_status", 101),
    "env value not a string": _set("invocation.env", {"RUSTFLAGS": 1}),
    "unknown observer": _set("advertised.observed_by", ["hearsay"]),
    "graph of another format": _set("graph.format", "horon.graph.v0"),
    "unknown graph field": _set("graph.extra", []),
}


@pytest.fixture
def record(compiled_example: Compiled) -> Doc:
    """The artifact record of the example compiled once per run (conftest)."""
    document: Doc = json.loads(compiled_example.record.read_text())
    return document


def test_compile_json_obeys_its_schema(compiled_example: Compiled) -> None:
    result = json.loads(compiled_example.document.read_text())
    assert _schema_ok("compile-result.schema.json", result)
    assert Path(result["compiled"][0]["record"]) == compiled_example.record


@pytest.mark.cargo
def test_a_valid_record_is_accepted_by_both(record: Doc) -> None:
    parse_record(copy.deepcopy(record), "record.json")
    assert _schema_ok("artifact-record.schema.json", record)
    without_advertised = {**copy.deepcopy(record), "advertised": None}
    parse_record(without_advertised, "record.json")
    assert _schema_ok("artifact-record.schema.json", without_advertised)


@pytest.mark.cargo
@pytest.mark.parametrize("case", sorted(RECORD_HOSTILE))
def test_a_hostile_record_is_refused_by_both(record: Doc, case: str) -> None:
    document = copy.deepcopy(record)
    RECORD_HOSTILE[case](document)
    assert _refused(lambda: parse_record(copy.deepcopy(document), "record.json")), case
    assert not _schema_ok("artifact-record.schema.json", document), case


# --- the --json reports -------------------------------------------------------------------
def _valid(name: str, document: object) -> None:
    errors = [e.message for e in _validator(name).iter_errors(document)]
    assert not errors, (name, errors)


@pytest.mark.slow
@pytest.mark.cargo
def test_every_json_report_validates(example_release: BuiltExample, tmp_path: Path,
                                     cargo_target_dir: Path) -> None:
    archive, bundle = example_release.archive, example_release.bundle
    _valid("verify-report.schema.json", cli("verify", archive, "--json").json())
    _valid("verify-report.schema.json", cli("verify", archive, bundle, "--json").json())
    broken = cli("verify", tmp_path / "missing.zip", "--json")
    assert broken.status == 1
    _valid("verify-report.schema.json", broken.json())
    _valid("doctor-report.schema.json", cli("doctor", bundle, "--json").json())
    _valid("inspect-report.schema.json", cli("inspect", archive, "--json").json())
    _valid("inspect-report.schema.json", cli("inspect", tmp_path / "gone", "--json").json())
    built = cli("build", TEMPLATE, "--out", tmp_path / "out", "--target-dir", cargo_target_dir,
                "--json")
    _valid("build-result.schema.json", built.json())
    _valid("new-result.schema.json", cli("new", "acme-notes", "--json", cwd=tmp_path).json())
    _valid("publish-receipt.schema.json", cli("publish", tmp_path / "out", "--json").json())
    store = tmp_path / "store"
    store.mkdir()
    gate = {"HORON_PUBLISH_ENABLED": "true", "HORON_PUBLISH_DESTINATION": store.as_uri()}
    for extra in (["--dry-run"], []):
        receipt = cli("publish", tmp_path / "out", "--json", *extra, env=gate)
        assert receipt.status == 0, receipt.stderr
        _valid("publish-receipt.schema.json", receipt.json())
    for refused in (cli("build", tmp_path / "nowhere", "--json"), cli("bild", "--json"),
                    cli("new", "Bad", "--json", cwd=tmp_path)):
        assert refused.status in (1, 2)
        _valid("refusal.schema.json", refused.json())


def test_report_schemas_are_not_vacuous() -> None:
    assert not _schema_ok("refusal.schema.json", {"ok": False, "exit_status": 1,
                                                  "findings": []})
    assert not _schema_ok("refusal.schema.json", {"ok": False, "exit_status": 4, "findings": [
        {"code": "x.y", "message": "m", "hint": "h"}]})
    assert not _schema_ok("publish-receipt.schema.json", {
        "format": "horon.publish-receipt.v1", "ok": True, "skipped": True, "dry_run": False,
        "destination": None, "bundles": []})  # skipped without its reason
    assert not _schema_ok("build-result.schema.json", {"format": "horon.build-result.v1",
                                                       "ok": True, "bundles": []})
    assert not _schema_ok("verify-report.schema.json", {"format": "horon.verify-report.v1"})
    assert _schema_ok("new-result.schema.json", {
        "format": "horon.new-result.v1", "ok": True, "workspace": "/w", "id": "ab",
        "package": "ab", "license": "MIT", "files": [], "git": False,
        "pin": {"kind": "placeholder", "requirement": None, "reason": "a checkout"}})
    assert not _schema_ok("new-result.schema.json", {
        "format": "horon.new-result.v1", "ok": True, "workspace": "/w", "id": "ab",
        "package": "ab", "license": "GPL-3.0", "files": [], "git": False,
        "pin": {"kind": "placeholder", "requirement": None, "reason": "a checkout"}})
    assert HOST  # the reports above name the host target


# --- the agent home's state.json --------------------------------------------------------
STATE_SCHEMA = "agent-home-state.schema.json"
_SHA_A, _SHA_B = "a" * 64, "b" * 64


def _harness_state() -> Doc:
    """A state holding a native plugin (the harness bundle is added from a real build)."""
    return {"format": "horon.agent-home.v1", "native_plugins": {"example": {
        "enabled": {HOST: "0.1.0"},
        "installed": {"0.1.0": {HOST: {
            "archive_sha256": _SHA_A, "channel": "release", "content_sha256": _SHA_B,
            "installed_at": "2026-12-01T09:28:09Z", "source": "example.zip"}}}}},
        "harness_bundles": {}}


@pytest.fixture(name="state_document", scope="module")
def state_document_fixture(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    archive = built_zip(tmp_path_factory.mktemp("state-zip"))
    with zipfile.ZipFile(archive) as opened:
        catalogue = json.loads(opened.read("catalogue.json"))
    document = _harness_state()
    document["harness_bundles"] = {"guard-kit": {"1.2.0": {
        "sha256": _SHA_A, "size": archive.stat().st_size, "installed_at": "2026-12-01T10:00:00Z",
        "source": archive.name, "catalogue": catalogue}}}
    return document


def _state_refused(document: Doc) -> bool:
    return _refused(lambda: parse_state(json.dumps(document).encode(), "state.json"))


def test_valid_states_are_accepted_by_both(state_document: Doc) -> None:
    native_only = copy.deepcopy(state_document)
    del native_only["harness_bundles"]
    empty = {"format": "horon.agent-home.v1", "native_plugins": {}}
    for document in (state_document, native_only, empty, {**empty, "harness_bundles": {}}):
        _valid(STATE_SCHEMA, document)
        parse_state(json.dumps(document).encode(), "state.json")
    # what install writes validates too
    written = json.loads(state_bytes(parse_state(json.dumps(state_document).encode(), "s")))
    _valid(STATE_SCHEMA, written)
    assert written == state_document


STATE_HOSTILE: dict[str, Mutation] = {
    "unknown top-level field": _set("extra", 1),
    "other format": _set("format", "horon.agent-home.v2"),
    "harness_bundles not an object": _set("harness_bundles", []),
    "a bundle with no version": lambda d: d["harness_bundles"].update({"empty": {}}),
    "a name with a slash": lambda d: d["harness_bundles"].update(
        {"a/b": d["harness_bundles"]["guard-kit"]}),
    "a version with a space": lambda d: d["harness_bundles"]["guard-kit"].update(
        {"1 2": d["harness_bundles"]["guard-kit"]["1.2.0"]}),
    "an uppercase digest": lambda d: _record(d).update(sha256="A" * 64),
    "a negative size": lambda d: _record(d).update(size=-1),
    "a size that is a string": lambda d: _record(d).update(size="1"),
    "no catalogue": lambda d: _record(d).pop("catalogue"),
    "an unknown record field": lambda d: _record(d).update(enabled=True),
    "a local time": lambda d: _record(d).update(installed_at="2026-12-01T10:00:00+01:00"),
    "an empty source": lambda d: _record(d).update(source=""),
    "a catalogue of another format": lambda d: _record(d)["catalogue"].update(format="x"),
    "a catalogue with an extra section": lambda d: _record(d)["catalogue"].update(extra=[]),
    "a catalogue section not a list": lambda d: _record(d)["catalogue"].update(skills={}),
    "a catalogue event not a string": lambda d: _record(d)["catalogue"].update(events=[1]),
    "a native copy without channel": lambda d: d["native_plugins"]["example"]["installed"][
        "0.1.0"][HOST].pop("channel"),
}


def _record(document: Doc) -> Doc:
    record: Doc = document["harness_bundles"]["guard-kit"]["1.2.0"]
    return record


@pytest.mark.parametrize("case", sorted(STATE_HOSTILE))
def test_hostile_states_are_refused_by_both(state_document: Doc, case: str) -> None:
    document = copy.deepcopy(state_document)
    STATE_HOSTILE[case](document)
    assert not _schema_ok(STATE_SCHEMA, document), case
    assert _state_refused(document), case


STATE_DECODER_ONLY: dict[str, Mutation] = {
    "a catalogue naming another bundle": lambda d: _record(d)["catalogue"]["plugin"].update(
        name="other"),
    "one digest for two versions": lambda d: d["harness_bundles"]["guard-kit"].update(
        {"1.3.0": {**_record(d), "catalogue": {**_record(d)["catalogue"], "plugin": {
            **_record(d)["catalogue"]["plugin"], "version": "1.3.0"}}}}),
    "an enabled version not installed": lambda d: d["native_plugins"]["example"][
        "enabled"].update({HOST: "9.9.9"}),
    "a name that is a reserved device name": lambda d: d["harness_bundles"].update(
        {"CON": d["harness_bundles"]["guard-kit"]}),
}


@pytest.mark.parametrize("case", sorted(STATE_DECODER_ONLY))
def test_what_only_the_state_decoder_refuses(state_document: Doc, case: str) -> None:
    document = copy.deepcopy(state_document)
    STATE_DECODER_ONLY[case](document)
    assert _schema_ok(STATE_SCHEMA, document), case  # the schema cannot say it
    assert _state_refused(document), case


def test_a_float_size_is_refused_by_the_decoder(state_document: Doc) -> None:
    text = json.dumps(state_document).replace(
        f'"size": {_record(state_document)["size"]}', '"size": 1.0')
    assert _refused(lambda: parse_state(text.encode(), "state.json"))


# --- the marketplace a file:// store serves (hosted-marketplace.schema.json) -------------
MARKETPLACE_SCHEMA = "hosted-marketplace.schema.json"
MARKETPLACE_HOSTILE: dict[str, Mutation] = {
    "an http url": _set("plugins.0.source.url", "http://plugins.example.com/blobs/sha256/"
                                                 + "0" * 64),
    "a url that is not a blob": _set("plugins.0.source.url", "https://plugins.example.com/x.zip"),
    "a url with credentials": _set("plugins.0.source.url",
                                   "https://u:p@plugins.example.com/blobs/sha256/" + "0" * 64),
    "another source kind": _set("plugins.0.source.source", "github"),
    "an uppercase digest": _set("plugins.0.source.sha256", "A" * 64),
    "an unknown top-level field": _set("metadata", {}),
    "an unknown plugin field": _set("plugins.0.strict", False),
    "no owner": _set("owner", _DELETE),
    "no version": _set("plugins.0.version", _DELETE),
    "a name with a space": _set("name", "team tools"),
    "a name with a trailing newline": _set("name", "team-tools\n"),
}


@pytest.fixture(name="hosted_marketplace", scope="module")
def hosted_marketplace_fixture(tmp_path_factory: pytest.TempPathFactory) -> Doc:
    """The marketplace publish wrote for a real harness zip."""
    root = tmp_path_factory.mktemp("hosted")
    archive = built_zip(root)
    store = root / "store"
    store.mkdir()
    published = cli("publish", archive.parent, env={
        "HORON_PUBLISH_ENABLED": "true", "HORON_PUBLISH_DESTINATION": store.as_uri(),
        "HORON_PUBLISH_PUBLIC_URL": "https://plugins.example.com"})
    assert published.status == 0, published.stderr
    document: Doc = json.loads((store / ".claude-plugin" / "marketplace.json").read_text())
    return document


def test_the_written_marketplace_obeys_its_schema(hosted_marketplace: Doc) -> None:
    _valid(MARKETPLACE_SCHEMA, hosted_marketplace)


@pytest.mark.parametrize("case", list(MARKETPLACE_HOSTILE))
def test_a_hostile_marketplace_is_refused_by_its_schema(hosted_marketplace: Doc,
                                                        case: str) -> None:
    document = copy.deepcopy(hosted_marketplace)
    MARKETPLACE_HOSTILE[case](document)
    assert not _schema_ok(MARKETPLACE_SCHEMA, document)


# --- the registry: every document has a schema, every schema a document ------------------
def test_every_format_the_package_names_has_a_schema() -> None:
    """A `horon.…vN` format written anywhere in the package is a document with a schema row
    (tests/schema_registry.py), or named there as no document of its own."""
    import re  # noqa: PLC0415

    from tests.schema_registry import BY_FORMAT, NOT_DOCUMENTS  # noqa: PLC0415

    named = set()
    for source in (REPO / "tooling" / "horon_bundle").rglob("*.py"):
        named |= set(re.findall(r"[\"'](horon\.[a-z0-9-]+\.v[0-9]+)[\"']", source.read_text()))
    assert len(named) > 20
    missing = named - set(BY_FORMAT) - set(NOT_DOCUMENTS)
    assert not missing, f"documents without a schema row: {sorted(missing)}"


def test_every_row_names_a_schema_and_every_schema_has_a_row() -> None:
    from tests.schema_registry import BY_FORMAT, BY_KIND, BY_TYPE  # noqa: PLC0415

    rows = {*BY_FORMAT.values(), *BY_KIND.values(), *BY_TYPE.values()}
    files = {p.name for p in SCHEMAS.glob("*.schema.json")}
    assert rows == files, (rows - files, files - rows)
    readme = (SCHEMAS / "README.md").read_text()
    assert not [name for name in files if f"({name})" not in readme]


@pytest.mark.parametrize("name", sorted(p.name for p in SCHEMAS.glob("*.schema.json")))
def test_no_schema_is_vacuous(name: str) -> None:
    """Each refuses an empty object and, where it closes its top level, an unknown key."""
    schema = json.loads((SCHEMAS / name).read_text())
    assert not _schema_ok(name, {}), name
    assert schema.get("title") and schema.get("$id", "").endswith(name)
    if schema.get("additionalProperties") is False:
        required = dict.fromkeys(schema.get("required", []))
        assert not _schema_ok(name, {**required, "surely-unknown": 1}), name


def test_a_document_without_a_schema_is_refused_by_the_registry() -> None:
    from tests.schema_registry import validate  # noqa: PLC0415

    with pytest.raises(AssertionError, match=r"no schema for horon\.made-up\.v1"):
        validate({"format": "horon.made-up.v1"})
    with pytest.raises(AssertionError, match="no registered schema"):
        validate({"name": "x"})
