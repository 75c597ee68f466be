"""provenance.json of our buildType is decoded strictly: malformed parts are refusals."""

from __future__ import annotations

import contextlib
import copy
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from horon_bundle.core.errors import Refused
from horon_bundle.model.provenance import parse_provenance
from tests.conftest import BuiltExample
from tests.helpers import assert_refused, cli, copy_bundle, edit_provenance


def _definition(statement: dict[str, Any]) -> dict[str, Any]:
    return statement["predicate"]["buildDefinition"]  # type: ignore[no-any-return]


MUTATIONS = {
    "declaration digest is a list": lambda s: _definition(s)["externalParameters"]
    ["declaration"].__setitem__("digest", ["sha256"]),
    "resolved dependency digest is a list": lambda s: _definition(s)["resolvedDependencies"][0]
    .__setitem__("digest", ["x"]),
    "resolved dependency is a string": lambda s: _definition(s)["resolvedDependencies"]
    .append("Cargo.lock"),
    "source revision is a number": lambda s: _definition(s)["externalParameters"]["source"]
    .__setitem__("revision", 7),
    "builder version is a string": lambda s: s["predicate"]["runDetails"]["builder"]
    .__setitem__("version", "0.1.0"),
    "QA provider is a number": lambda s: _definition(s)["internalParameters"]["qa"]
    ["providers"].append(3),
}


@pytest.mark.parametrize("case", sorted(MUTATIONS))
def test_malformed_provenance_part(case: str, example_release: BuiltExample,
                                   tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, MUTATIONS[case])
    assert_refused(cli("verify", bundle), "provenance.schema")


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def test_structural_fuzz_is_parsed_or_refused(example_release: BuiltExample) -> None:
    """Replace random parts of the real statement by values of other types: never a crash."""
    original = json.loads((example_release.bundle / "provenance.json").read_text())
    places = [p for p in _paths(original) if p]
    values: list[Any] = [None, True, 0, 2**60, "x", [], {}, [1], {"a": 1}]
    rng = random.Random(7)  # noqa: S311 - a reproducible fuzz, not a secret
    for _ in range(400):
        statement = copy.deepcopy(original)
        for _ in range(rng.randint(1, 3)):
            place = rng.choice(places)
            parent: Any = statement
            try:
                for key in place[:-1]:
                    parent = parent[key]
                parent[place[-1]] = copy.deepcopy(rng.choice(values))
            except (KeyError, IndexError, TypeError):
                continue
        with contextlib.suppress(Refused):  # any other exception fails the test
            parse_provenance(json.dumps(statement).encode())


def _rebound(statement: dict[str, Any]) -> bytes:
    from tests.helpers import content_digest  # noqa: PLC0415

    for item in statement["predicate"]["runDetails"]["byproducts"]:
        if isinstance(item, dict) and "annotations" in item:
            item["digest"]["sha256"] = content_digest(item["annotations"])
    return json.dumps(statement).encode()


def test_every_string_emptied_is_parsed_or_refused_never_a_crash(
        example_release: BuiltExample) -> None:
    """The same type, an empty value: each string of the statement (the graph's too, its
    digest re-bound so the decoder reaches it) emptied in turn. An id, a version, a target
    or a package's name left empty is refused by name; nothing ends in an internal error."""
    original = json.loads((example_release.bundle / "provenance.json").read_text())
    refused: dict[tuple[Any, ...], list[str]] = {}
    for place in [p for p in _paths(original) if p]:
        statement = copy.deepcopy(original)
        parent: Any = statement
        for key in place[:-1]:
            parent = parent[key]
        if not isinstance(parent[place[-1]], str):
            continue
        parent[place[-1]] = ""
        try:
            parse_provenance(_rebound(statement))
        except Refused as exc:  # any other exception fails the test
            refused[place] = [f"{f.code.name} {f.message}" for f in exc.findings]
    ext = ("predicate", "buildDefinition", "externalParameters")
    for key in ("plugin", "package", "version", "target", "profile", "channel"):
        place = (*ext, key)
        assert refused[place] == [
            f"provenance.schema provenance.json: predicate.buildDefinition.externalParameters"
            f".{key}: an empty string where a name is required"]
    graph = next(i for i, b in enumerate(original["predicate"]["runDetails"]["byproducts"])
                 if b["name"] == "horon:graph")
    where = ("predicate", "runDetails", "byproducts", graph, "annotations", "packages", 0)
    for key in ("id", "name", "version", "source"):
        place = (*where, key)
        assert refused[place][0] == (  # (the root is then not a recorded package)
            f"graph.invalid provenance.json graph: graph.packages[0].{key}: an empty string "
            "where a name is required")


def test_a_bundle_whose_provenance_names_nothing_is_refused(example_release: BuiltExample,
                                                           tmp_path: Path) -> None:
    bundle = copy_bundle(example_release.bundle, tmp_path)
    edit_provenance(bundle, lambda s: _definition(s)["externalParameters"].update(plugin=""))
    result = cli("verify", bundle)
    assert_refused(result, "provenance.schema")
    assert "externalParameters.plugin: an empty string where a name is required" in \
        result.stderr


def _said(statement: dict[str, Any]) -> list[str]:
    try:
        parse_provenance(_rebound(statement))
    except Refused as exc:
        return [f"{f.code.name} {f.message}" for f in exc.findings]
    return []


def _byproduct(statement: dict[str, Any], name: str) -> dict[str, Any]:
    return next(b for b in statement["predicate"]["runDetails"]["byproducts"]
                if b["name"] == name)


def test_the_predicate_names_each_unknown_key_and_value_by_its_path(
        example_release: BuiltExample) -> None:
    original = json.loads((example_release.bundle / "provenance.json").read_text())
    inn = "predicate.buildDefinition.internalParameters"
    cases: list[tuple[Any, list[str]]] = [
        (lambda s: _definition(s)["internalParameters"].update(evidence="telepathy"),
         [f"provenance.schema provenance.json: {inn}.evidence: 'telepathy' is not one of "
          "('invocation', 'artifact-record')"]),
        (lambda s: _definition(s)["internalParameters"].update(extra=1),
         [f"provenance.schema provenance.json: {inn}.extra: unknown field"]),
        (lambda s: s["predicate"]["runDetails"].update(extra=1),
         ["provenance.schema provenance.json: predicate.runDetails.extra: unknown field"]),
        (lambda s: _byproduct(s, "horon:advertised")["annotations"].update(observed_by=["x"]),
         ["provenance.schema provenance.json: byproduct horon:advertised.observed_by: ['x'] "
          "unknown"]),
    ]
    for change, says in cases:
        statement = copy.deepcopy(original)
        change(statement)
        assert [line.split(" (hint")[0] for line in _said(statement)] == says


def test_byproducts_a_statement_leaves_out_are_absent_not_empty(
        example_release: BuiltExample) -> None:
    original = json.loads((example_release.bundle / "provenance.json").read_text())
    facts = parse_provenance(_rebound(copy.deepcopy(original))).facts
    assert facts.invocation is not None and facts.advertised is not None
    statement = copy.deepcopy(original)
    details = statement["predicate"]["runDetails"]
    details["byproducts"] = [b for b in details["byproducts"]
                             if b["name"] not in ("horon:invocation", "horon:advertised")]
    facts = parse_provenance(_rebound(statement)).facts
    assert facts.invocation is None and facts.advertised is None


def test_a_second_lock_file_among_the_resolved_dependencies_is_refused(
        example_release: BuiltExample) -> None:
    """Which Cargo.lock the build resolved must be one fact: a second entry (with another
    digest) is refused, never read as "the last one wins"."""
    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    resolved = _definition(statement)["resolvedDependencies"]
    [index] = [i for i, d in enumerate(resolved) if d["name"] == "Cargo.lock"]
    resolved.append({**resolved[index], "digest": {"sha256": "0" * 64}})
    resolved.append(copy.deepcopy(resolved[-1]))  # a third is the same problem, said once
    assert _said(statement) == [
        f"provenance.schema provenance.json: predicate.buildDefinition.resolvedDependencies"
        f"[{len(resolved) - 2}]: Cargo.lock listed twice"]


def test_the_facts_read_back_are_the_statements(example_release: BuiltExample) -> None:
    """What verify judges is what the statement says, field by field (not a default)."""
    from tests.helpers import content_digest  # noqa: PLC0415

    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    record = {"format": "horon.artifact-record.v1", "note": "only its digest is read here"}
    statement["predicate"]["runDetails"]["byproducts"].append({
        "name": "horon:artifact-record", "mediaType": "application/vnd.horon.artifact-"
        "record.v1+json", "digest": {"sha256": content_digest(record)}, "annotations": record})
    facts = parse_provenance(_rebound(statement)).facts
    definition, details = _definition(statement), statement["predicate"]["runDetails"]
    assert facts.declaration_sha256 == \
        definition["externalParameters"]["declaration"]["digest"]["sha256"]
    assert facts.source_date_epoch == \
        definition["internalParameters"]["source_date_epoch"]
    assert facts.builder_id == details["builder"]["id"]
    assert facts.tool_version == details["builder"]["version"]["horon-bundle"]
    assert facts.record == record and facts.record_sha256 == content_digest(record)
    for value in (facts.declaration_sha256, facts.builder_id, facts.tool_version):
        assert isinstance(value, str) and value


def test_the_build_definition_names_its_own_unknown_keys_and_type(
        example_release: BuiltExample) -> None:
    original = json.loads((example_release.bundle / "provenance.json").read_text())
    statement = copy.deepcopy(original)
    _definition(statement)["extra"] = 1
    assert _said(statement) == ["provenance.schema provenance.json: predicate.buildDefinition"
                                ".extra: unknown field"]
    statement = copy.deepcopy(original)
    _definition(statement)["buildType"] = "https://example.com/other"
    [said] = _said(statement)
    assert said.startswith("provenance.build-type provenance.json: predicate.buildDefinition"
                           ".buildType: 'https://example.com/other', expected ")


@pytest.mark.parametrize("sha", ["", "0" * 63, "0" * 65, "A" * 64, "g" * 64, "0" * 63 + "\n"])
def test_a_subject_digest_that_is_no_sha256_is_refused(example_release: BuiltExample,
                                                       sha: str) -> None:
    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    statement["subject"][0]["digest"]["sha256"] = sha
    from horon_bundle.core.fields import describe_value  # noqa: PLC0415

    assert _said(statement) == [
        f"provenance.subject provenance.json: subject[0].digest.sha256: {describe_value(sha)} "
        "is not a SHA-256 (64 lowercase hex digits)"]


def test_subjects_after_a_bad_digest_are_still_judged(example_release: BuiltExample) -> None:
    statement = json.loads((example_release.bundle / "provenance.json").read_text())
    real = statement["subject"][0]
    statement["subject"][:0] = [{"name": "other.bin", "digest": {"sha256": "X" * 64}}]
    statement["subject"].append(copy.deepcopy(real))
    last = len(statement["subject"]) - 1
    assert [line.split(": ", 2)[1] for line in _said(statement)] == [
        "subject[0].digest.sha256", f"subject[{last}]"]  # the bad one, then the repeated one
