"""Every declared path once, and our own provenance obeys in-toto v1.

- plugin.json may declare a path only once: the sbom asset pointing at `LICENSE` (with a
  false `license.sha256`) made the last declaration win; now `manifest.path-collision`.
- in-toto v1 requires every ResourceDescriptor to have one of `uri`, `digest`, `content`;
  the byproducts and the path crate had none. The writer gives each byproduct the digest of
  its canonical content and each crate its purl as `uri`; the reader refuses a descriptor with
  neither, and a byproduct whose digest is not its content's. Provenance written before this
  fix is refused rather than read with the check weakened (docs/provenance.md).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.paths import collisions
from tests.conftest import BuiltExample
from tests.helpers import (
    assert_refused,
    cli,
    content_digest,
    copy_bundle,
    edit_manifest,
    edit_provenance,
    tree_snapshot,
)


def test_collisions_report_a_path_given_twice() -> None:
    assert collisions(["LICENSE", "LICENSE"]) == [("LICENSE", "LICENSE")]
    assert collisions(["LICENSE", "license"]) == [("LICENSE", "license")]
    assert collisions(["a", "b"]) == []


def test_an_asset_declared_at_the_licence_path(example_release: BuiltExample,
                                               tmp_path: Path) -> None:
    """An attack of docs/threat-model.md: the sbom asset points at LICENSE and license.sha256
    lies."""
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def point(manifest: dict[str, Any]) -> None:
        for asset in manifest["assets"]:
            if asset["role"] == "sbom":
                asset["path"] = "LICENSE"
                asset["sha256"] = manifest["license"]["sha256"]
                asset["size"] = manifest["license"]["size"]
        manifest["license"]["sha256"] = "0" * 64

    edit_manifest(bundle, point)
    (bundle / "sbom.cdx.json").unlink()
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "manifest.path-collision")
    assert "'LICENSE' is declared twice" in result.stderr
    assert tree_snapshot(tmp_path) == before


def _descriptors(statement: dict[str, Any]) -> list[dict[str, Any]]:
    predicate = statement["predicate"]
    return [*predicate["buildDefinition"]["resolvedDependencies"],
            *predicate["runDetails"]["byproducts"]]


def test_every_descriptor_we_write_has_a_locator(example_release: BuiltExample) -> None:
    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    for descriptor in _descriptors(statement):
        assert {"uri", "digest", "content"} & set(descriptor), descriptor
    for item in statement["predicate"]["runDetails"]["byproducts"]:
        assert item["digest"] == {"sha256": content_digest(item["annotations"])}
    # the example's only crate is a path crate: part of the source, no purl, no descriptor
    assert not [d for d in _descriptors(statement) if d["name"].startswith("pkg:")]


@pytest.mark.parametrize("where", ["byproduct", "crate"])
def test_a_descriptor_without_a_locator_is_refused(example_release: BuiltExample,
                                                   tmp_path: Path, where: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def strip(statement: dict[str, Any]) -> None:
        predicate = statement["predicate"]
        if where == "byproduct":
            del predicate["runDetails"]["byproducts"][0]["digest"]
        else:
            predicate["buildDefinition"]["resolvedDependencies"].append(
                {"name": "pkg:cargo/serde@1.0.0", "annotations": {"source": "registry"}})

    edit_provenance(bundle, strip, rebind_byproducts=False)
    before = tree_snapshot(tmp_path)
    result = cli("verify", bundle)
    assert_refused(result, "provenance.schema")
    assert "without uri, digest or content: in-toto v1 requires one" in result.stderr
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize("name", ["horon:invocation", "horon:graph", "horon:advertised"])
def test_a_byproduct_whose_digest_is_not_its_content(example_release: BuiltExample,
                                                     tmp_path: Path, name: str) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)

    def tamper(statement: dict[str, Any]) -> None:
        for item in statement["predicate"]["runDetails"]["byproducts"]:
            if item["name"] == name:
                item["annotations"]["tampered"] = True

    edit_provenance(bundle, tamper, rebind_byproducts=False)
    result = cli("verify", bundle)
    assert_refused(result, "provenance.schema")
    assert "is not the digest of the byproduct's content" in result.stderr


# The decoder of provenance.json, case by case: the real statement edited in one place, the
# exact refusals (code, message: the field named) the decoder gives, and the writer's output
# read back unchanged.

import copy  # noqa: E402
import dataclasses  # noqa: E402
from collections.abc import Callable  # noqa: E402

from horon_bundle.core.errors import Refused  # noqa: E402
from horon_bundle.model.provenance import parse_provenance  # noqa: E402
from horon_bundle.model.provenance_statement import statement  # noqa: E402
from tests.helpers import byproduct  # noqa: E402

_SCHEMA = "provenance.schema"
_SUBJECT = "provenance.subject"
_BUILD_TYPE = "provenance.build-type"
_BD = "provenance.json: predicate.buildDefinition"
_BP = "provenance.json: predicate.runDetails.byproducts"
_NO_LOCATOR_TEXT = ("a ResourceDescriptor without uri, digest or content: in-toto v1 requires "
                    "one (provenance written before horon-bundle fixed this is refused, not "
                    "trusted)")
_TWICE = (_SCHEMA, f"{_BP}[4]: byproduct 'horon:advertised' twice")


def _example_statement(example_release: BuiltExample) -> dict[str, Any]:
    return json.loads((example_release.bundle / "provenance.json").read_text())  # type: ignore[no-any-return]


def _refusals(data: bytes) -> list[tuple[str, str]]:
    with pytest.raises(Refused) as caught:
        parse_provenance(data)
    return [(f.code.name, f.message) for f in caught.value.findings]


def _byproduct_list(s: dict[str, Any]) -> list[Any]:
    return s["predicate"]["runDetails"]["byproducts"]  # type: ignore[no-any-return]


def _resolved(s: dict[str, Any]) -> list[Any]:
    return s["predicate"]["buildDefinition"]["resolvedDependencies"]  # type: ignore[no-any-return]


def _crate(s: dict[str, Any]) -> dict[str, Any]:
    """A crates.io crate appended to the resolved dependencies (the example has only its own
    path crate, which is part of the source and has no descriptor of its own)."""
    purl = "pkg:cargo/serde@1.0.0"
    crate = {"name": purl, "uri": purl,
             "annotations": {"source": "registry+https://github.com/rust-lang/crates.io-index"}}
    _resolved(s).append(crate)
    return crate


def _declaration_digest(s: dict[str, Any]) -> dict[str, Any]:
    return s["predicate"]["buildDefinition"]["externalParameters"]["declaration"]["digest"]  # type: ignore[no-any-return]


def _providers(s: dict[str, Any], value: list[Any]) -> None:
    s["predicate"]["buildDefinition"]["internalParameters"]["qa"]["providers"] = value


def _before_a_duplicate_subject(first: Any) -> Callable[[dict[str, Any]], None]:
    """`first` ahead of the real subject, which is then listed twice: the decoder goes on
    past a bad subject to the next one."""
    def edit(s: dict[str, Any]) -> None:
        s["subject"] = [first, s["subject"][0], copy.deepcopy(s["subject"][0])]
    return edit


def _before_a_duplicate_byproduct(
        change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], None]:
    """A changed copy of the first byproduct ahead of them all, and the last one listed
    twice: the decoder goes on past a bad byproduct to the next one."""
    def edit(s: dict[str, Any]) -> None:
        items = _byproduct_list(s)
        items.insert(0, change(copy.deepcopy(items[0])))
        items.append(copy.deepcopy(items[-1]))
    return edit


def _without(key: str) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(item: dict[str, Any]) -> dict[str, Any]:
        del item[key]
        return item
    return change


def _tampered(item: dict[str, Any]) -> dict[str, Any]:
    item["annotations"]["tampered"] = True
    return item


def _then(*edits: Callable[[dict[str, Any]], object]) -> Callable[[dict[str, Any]], None]:
    def edit(s: dict[str, Any]) -> None:
        for one in edits:
            one(s)
    return edit


# name -> (edit of the real statement, the exact refusals; `{subject}`, `{sha}` and
# `{tampered}` stand for the subject's name, the first byproduct's digest and the digest of
# its tampered content)
PROVENANCE_REFUSALS: dict[str, tuple[Callable[[dict[str, Any]], object],
                                     list[tuple[str, str]]]] = {
    "_type of another version": (
        lambda s: s.update(_type="https://in-toto.io/Statement/v0.1"),
        [(_BUILD_TYPE, "provenance.json: _type: 'https://in-toto.io/Statement/v0.1', expected "
                       "https://in-toto.io/Statement/v1")]),
    "predicateType of another version": (
        lambda s: s.update(predicateType="https://slsa.dev/provenance/v0.2"),
        [(_BUILD_TYPE, "provenance.json: predicateType: 'https://slsa.dev/provenance/v0.2', "
                       "expected https://slsa.dev/provenance/v1")]),
    "a subject that is a string": (
        _before_a_duplicate_subject("lib"),
        [(_SCHEMA, "provenance.json: subject[0]: expected an object, got 'lib'"),
         (_SUBJECT, "provenance.json: subject[2]: subject '{subject}' listed twice")]),
    "a subject without digest": (
        _before_a_duplicate_subject({"name": "lib/a"}),
        [(_SCHEMA, "provenance.json: subject[0].digest: required field is missing"),
         (_SUBJECT, "provenance.json: subject[2]: subject '{subject}' listed twice")]),
    "a subject bound by md5": (
        _before_a_duplicate_subject({"name": "lib/a", "digest": {"md5": "0" * 32}}),
        [(_SUBJECT, "provenance.json: subject[0].digest: ['md5']: subjects are bound by "
                    "sha256 only"),
         (_SUBJECT, "provenance.json: subject[2]: subject '{subject}' listed twice")]),
    "a subject bound by sha256 and md5": (
        lambda s: s["subject"][0]["digest"].update(md5="0" * 32),
        [(_SUBJECT, "provenance.json: subject[0].digest: ['md5', 'sha256']: subjects are "
                    "bound by sha256 only")]),
    "a subject whose sha256 is a number": (
        lambda s: s["subject"][0]["digest"].update(sha256=5),
        [(_SUBJECT, "provenance.json: subject[0].digest: ['sha256']: subjects are bound by "
                    "sha256 only")]),
    "a subject with an unknown field": (
        lambda s: s["subject"][0].update(uri="file:lib"),
        [(_SCHEMA, "provenance.json: subject[0].uri: unknown field")]),
    "declaration sha256 is a number": (
        lambda s: _declaration_digest(s).update(sha256=5),
        [(_SCHEMA, f"{_BD}.externalParameters.declaration.digest.sha256: expected a string, "
                   "got 5")]),
    "declaration digest has md5 too": (
        lambda s: _declaration_digest(s).update(md5="0" * 32),
        [(_SCHEMA, f"{_BD}.externalParameters.declaration.digest.md5: unknown field")]),
    "declaration sha256 is not 64 hex": (
        lambda s: _declaration_digest(s).update(sha256="abc"),
        [(_SCHEMA, f"{_BD}.externalParameters.declaration.digest: 'abc' is not 64 hex")]),
    "a resolved dependency that is a string, then a bad uri": (
        _then(lambda s: _resolved(s).insert(0, "Cargo.lock"),
              lambda s: _crate(s).update(uri=5)),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[0]: expected an object, got 'Cargo.lock'"),
         (_SCHEMA, f"{_BD}.resolvedDependencies[4].uri: expected a string, got 5")]),
    "a resolved dependency with an unknown field": (
        lambda s: _resolved(s)[0].update(extra=1),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[0].extra: unknown field")]),
    "a crate without uri or digest": (
        lambda s: _crate(s).pop("uri"),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[3]: {_NO_LOCATOR_TEXT}")]),
    "a crate whose uri is a number": (
        lambda s: _crate(s).update(uri=5),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[3].uri: expected a string, got 5")]),
    "a crate whose annotations are a string": (
        lambda s: _crate(s).update(annotations="path"),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[3].annotations: expected an object, got "
                   "'path'")]),
    "a crate whose digest is a string": (
        lambda s: _crate(s).update(digest="sha256"),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[3].digest: expected an object, got "
                   "'sha256'")]),
    "a resolved digest value that is a number": (
        lambda s: _resolved(s)[2]["digest"].update(sha256=5),
        [(_SCHEMA, f"{_BD}.resolvedDependencies[2].digest: digest values must be strings")]),
    "a QA provider that is a number, then one with a number": (
        lambda s: _providers(s, [3, {"feature": 1}]),
        [(_SCHEMA, f"{_BD}.internalParameters.qa.providers[0]: expected an object, got 3"),
         (_SCHEMA, f"{_BD}.internalParameters.qa.providers[1]: provider fields must be "
                   "strings or null")]),
    "a QA provider with a number, then one that is a number": (
        lambda s: _providers(s, [{"feature": 1}, 3]),
        [(_SCHEMA, f"{_BD}.internalParameters.qa.providers[0]: provider fields must be "
                   "strings or null"),
         (_SCHEMA, f"{_BD}.internalParameters.qa.providers[1]: expected an object, got 3")]),
    "a byproduct that is a string": (
        _before_a_duplicate_byproduct(lambda item: "horon:invocation"),
        [(_SCHEMA, f"{_BP}[0]: expected an object, got 'horon:invocation'"), _TWICE]),
    "a byproduct without digest": (
        _before_a_duplicate_byproduct(_without("digest")),
        [(_SCHEMA, f"{_BP}[0]: {_NO_LOCATOR_TEXT}"), _TWICE]),
    "a byproduct without annotations": (
        _before_a_duplicate_byproduct(_without("annotations")),
        [(_SCHEMA, f"{_BP}[0].annotations: required field is missing"), _TWICE]),
    "a byproduct whose digest is not its content's": (
        _before_a_duplicate_byproduct(_tampered),
        [(_SCHEMA, f"{_BP}[0].digest: sha256 {{sha}} is not the digest of the byproduct's "
                   "content {tampered}"), _TWICE]),
    "a byproduct without name": (
        lambda s: _byproduct_list(s)[0].pop("name"),
        [(_SCHEMA, f"{_BP}[0].name: required field is missing")]),
    "a byproduct with an unknown field": (
        lambda s: _byproduct_list(s)[0].update(extra=1),
        [(_SCHEMA, f"{_BP}[0].extra: unknown field")]),
    "a byproduct listed twice": (
        lambda s: _byproduct_list(s).append(copy.deepcopy(_byproduct_list(s)[-1])),
        [(_SCHEMA, f"{_BP}[3]: byproduct 'horon:advertised' twice")]),
}


@pytest.mark.parametrize("case", sorted(PROVENANCE_REFUSALS))
def test_provenance_decoder_refuses_exactly(case: str, example_release: BuiltExample) -> None:
    original = _example_statement(example_release)
    first = _byproduct_list(original)[0]
    names = {"subject": original["subject"][0]["name"], "sha": first["digest"]["sha256"],
             "tampered": content_digest({**first["annotations"], "tampered": True})}
    edit, expected = PROVENANCE_REFUSALS[case]
    edited = copy.deepcopy(original)
    edit(edited)
    assert _refusals(json.dumps(edited).encode()) == [
        (code, message.format(**names)) for code, message in expected]


def test_provenance_that_is_not_a_statement_object(example_release: BuiltExample) -> None:
    assert _refusals(b"[]") == [
        (_SCHEMA, "provenance.json: (document): expected an object, got an array")]
    assert _refusals(b'{"_type": ') == [
        ("json.syntax", "provenance.json: Expecting value (line 1, column 11)")]


def test_provenance_size_and_depth_limits(example_release: BuiltExample) -> None:
    """32 MiB and 16 levels: more than the defaults of read_json allow in size, less in
    depth."""
    data = (example_release.bundle / "provenance.json").read_bytes()
    padded = b" " * ((1 << 20) + 1) + data  # leading whitespace: the same document
    assert parse_provenance(padded) == parse_provenance(data)
    too_large = b" " * ((32 << 20) + 1 - len(data)) + data
    assert _refusals(too_large) == [
        ("json.too-large", f"provenance.json: {(32 << 20) + 1} bytes, limit {32 << 20}")]
    statement_ = json.loads(data)
    statement_["deep"] = json.loads("[" * 16 + "]" * 16)  # 17 levels with the statement's
    assert _refusals(json.dumps(statement_).encode()) == [
        ("json.too-deep", "provenance.json: nesting deeper than 16")]
    statement_["deep"] = json.loads("[" * 15 + "]" * 15)  # 16: read, then an unknown field
    assert _refusals(json.dumps(statement_).encode()) == [
        (_SCHEMA, "provenance.json: deep: unknown field")]


def test_the_statement_written_is_the_statement_read(example_release: BuiltExample) -> None:
    """statement() of what parse_provenance read gives back the same document: the source
    commit and every crate of the graph (a crate with a checksum bound by it) included."""
    original = _example_statement(example_release)
    graph = byproduct(original, "horon:graph")
    graph["annotations"]["packages"][0]["checksum"] = "ab" * 32
    graph["digest"]["sha256"] = content_digest(graph["annotations"])
    package = graph["annotations"]["packages"][0]
    _resolved(original).append({"name": f"{package['name']}@{package['version']}",
                                "annotations": {"source": "path"},
                                "digest": {"sha256": "ab" * 32}})
    provenance = parse_provenance(json.dumps(original).encode())
    assert statement(provenance.facts, provenance.subjects) == original
    names = [d["name"] for d in _resolved(original)]
    assert names[0] == "source"
    assert _resolved(original)[0]["digest"] == {
        "gitCommit": provenance.facts.source_revision}

    unsourced = statement(dataclasses.replace(provenance.facts, source_revision=None),
                          provenance.subjects)
    assert [d["name"] for d in _resolved(unsourced)] == names[1:]
    graphless = statement(dataclasses.replace(provenance.facts, graph=None),
                          provenance.subjects)
    assert [d["name"] for d in _resolved(graphless)] == ["source", "Cargo.lock",
                                                        "horon-release.toml"]
    assert [b["name"] for b in _byproduct_list(graphless)] == [
        "horon:invocation", "horon:advertised"]
