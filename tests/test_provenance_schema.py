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
